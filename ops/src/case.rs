//! Case files: one operator call each, and optionally what it must produce.
//!
//! A case file is JSON holding one case object or an array of them (the
//! format is specified in `CASE_FORMAT.md`):
//!
//! ```json
//! {
//!   "name": "argmin-columns",
//!   "op": "ArgMin",
//!   "feature_level": "3.0",
//!   "attributes": { "axes": [0], "axis_direction": "increasing" },
//!   "inputs":  { "input":  { "dtype": "float32", "shape": [3, 3], "data": [1, 2, 3, 3, 0, 4, 2, 5, 2] } },
//!   "outputs": { "output": { "dtype": "uint32",  "shape": [1, 3], "data": [0, 1, 2] } }
//! }
//! ```
//!
//! [`parse_cases`] reads such a text into [`Case`]s whose operator is resolved
//! against a catalog and whose tensors are [`HostTensor`]s. Nothing in a file
//! makes it panic: every mistake comes back as a [`CaseError`] naming the file
//! and the JSON path of the offending value
//! (`cases/a.json: $[2].inputs.input.data[5]: value 300 is outside UINT8's range [0, 255]`),
//! and all the mistakes of a file are reported together ([`CaseErrors`]).
//!
//! Reading rules beyond the format document:
//!
//! * Integers are read from the JSON number's text, so the full 64-bit ranges
//!   are exact; a number with a fraction or an exponent is not an integer.
//! * `float32` and `float64` values are parsed from the number's text by
//!   Rust's correctly rounding parser. Rust has no stable `f16` parser, so
//!   `float16` values are parsed as `f64` and then rounded to `f16`; that
//!   double rounding is corrected where it can go wrong (when the `f64` lands
//!   exactly halfway between two `f16` values, the decimal text decides), so
//!   every value is the correctly rounded one. A finite number that rounds to
//!   an infinity is outside the type's range; infinities are written
//!   `"Infinity"` and `"-Infinity"`, NaN `"NaN"`.
//! * A tensor may carry `strides` (in elements, one per dimension: DirectML's
//!   `DML_BUFFER_TENSOR_DESC.Strides`, a stride of 0 broadcasting); its
//!   `data` is then the buffer, every element the strides span in order
//!   (`"shape": [2, 3], "strides": [0, 1], "data": [1, 2, 3]` is a row
//!   repeated twice). Only operators that read strided inputs accept them.
//! * Input tensors need `data`; an output's `data` is optional (the expected
//!   result) and not allowed in a case that expects an error.
//! * `expect_message` (a string, only beside `expect_error: "validation"`)
//!   names words the validation error must contain: the rule the case is
//!   about.
//! * Unknown top-level keys are ignored (`note`, `backend` ...); unknown keys
//!   inside a tensor are rejected, since a misspelt `data` would silently drop
//!   the expected result. `null` stands for an absent optional key.
//! * Attributes are checked against the operator's declaration
//!   ([`OperatorInfo::attrs`]): unknown names, the wrong kind of value, a
//!   negative value for an unsigned attribute, an enum value that is no
//!   member (members match without regard to case) and a missing attribute
//!   without a default are mistakes. A `bool` attribute may be written
//!   `true`/`false` or, as ONNX writes `keepdims`, `1`/`0`. Values are
//!   passed on as written; the rules about their values (an axis in range)
//!   are validation's.
//! * JSON objects with duplicate keys keep the last value (serde_json's rule).
//! * Optional top-level `rtol` and `atol` (non-negative numbers; a missing
//!   one is 0) compare the outputs with `|got - want| <= atol + rtol *
//!   |want|` ([`Tolerance::Close`]) instead of the operator's own
//!   [`Operator::tolerance`](ops_core::Operator::tolerance).
//!
//! A second shape is read beside this one: ONNX-shaped case files (with
//! `opset`, `inputs` as a list ...), as external conformance suites write
//! them, whose operator is looked up in the `onnx` namespace; see [`onnx`].

pub mod onnx;
mod write;

#[cfg(test)]
pub use write::tensor_to_json;
pub use write::write_cases;

use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;

use ops_core::{
    f16, quote, AttrKind, AttrValue, DataType, Element, FeatureLevel, HostTensor, OpArgs,
    OperatorInfo, TensorDesc, Tolerance,
};
use serde_json::{Map, Value};

/// At most this many bad values are reported per tensor.
const MAX_VALUE_ERRORS: usize = 8;

/// The largest case file `ops run` reads, in bytes (64 MiB): a larger or
/// endless file (`/dev/zero`) is a mistake of that file, read no further.
/// Parsed JSON takes up to about 16 times its text in memory.
pub const MAX_CASE_FILE_BYTES: u64 = 64 << 20;

/// The error a case expects its operator call to raise.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ExpectedError {
    /// `"validation"`: the descriptor must be rejected by validation.
    Validation,
    /// `"index"`: a run-time index is out of range and must be reported.
    Index,
    /// `"empty_reduction"`: the call reduces over an empty dimension, which
    /// each backend must report ([`ops_core::fuzz::EMPTY_REDUCTION`]).
    EmptyReduction,
}

impl ExpectedError {
    /// The spelling in case files.
    pub const fn as_str(self) -> &'static str {
        match self {
            ExpectedError::Validation => "validation",
            ExpectedError::Index => "index",
            ExpectedError::EmptyReduction => "empty_reduction",
        }
    }
}

impl fmt::Display for ExpectedError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An input tensor of a case, with its data.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CaseInput {
    /// The tensor's snake-case name (`input`, `indices`).
    pub name: String,
    /// The tensor.
    pub tensor: HostTensor,
}

/// An output tensor of a case: its description and, when given, the expected data.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CaseOutput {
    /// The tensor's snake-case name (`output`).
    pub name: String,
    /// The output's description, as the caller gives it to the descriptor.
    pub desc: TensorDesc,
    /// The expected result, when the case gives one.
    pub expected: Option<HostTensor>,
}

/// One case: an operator call and what it must produce.
#[derive(Clone, Debug)]
pub struct Case {
    /// The file, as it is named in messages.
    pub file: String,
    /// The case's JSON path in its file: `$` for a file holding one case
    /// object, `$[2]` for the third case of an array.
    #[allow(dead_code, reason = "where the reader found the case; tests check it")]
    pub path: String,
    /// The case's name.
    pub name: String,
    /// The operator, resolved in the catalog.
    pub info: &'static OperatorInfo,
    /// The operator's name as the file spells it (`ScatterElements`).
    pub op: String,
    /// The feature level to validate at; `None` means [`FeatureLevel::HIGHEST`].
    pub feature_level: Option<FeatureLevel>,
    /// The attributes, by name.
    pub attributes: BTreeMap<String, AttrValue>,
    /// Where each attribute of [`Case::attributes`] is written in the file,
    /// by name: its JSON path (`$[3].attributes.axis`), for messages.
    pub attribute_paths: BTreeMap<String, String>,
    /// The inputs, in the operator's input order ([`OperatorInfo::inputs`]).
    pub inputs: Vec<CaseInput>,
    /// The outputs, in the operator's output order ([`OperatorInfo::outputs`]).
    pub outputs: Vec<CaseOutput>,
    /// The error the call must raise, if any.
    pub expect_error: Option<ExpectedError>,
    /// Words the validation error must contain (`expect_message`, with
    /// `expect_error: "validation"`): the rule that rejects the case.
    pub expect_message: Option<String>,
    /// The case's own tolerance (`rtol`/`atol`), overriding the operator's
    /// ([`ops_core::Operator::tolerance`]).
    pub tolerance: Option<Tolerance>,
}

impl Case {
    /// The feature level to validate at: the case's, or [`FeatureLevel::HIGHEST`].
    pub fn level(&self) -> FeatureLevel {
        self.feature_level.unwrap_or(FeatureLevel::HIGHEST)
    }

    /// The builder's arguments: every input and output description, every
    /// input's data, and the attributes.
    pub fn op_args(&self) -> OpArgs {
        let mut args = OpArgs::default();
        for input in &self.inputs {
            args.tensors
                .insert(input.name.clone(), input.tensor.desc().clone());
            args.host_data
                .insert(input.name.clone(), input.tensor.clone());
        }
        for output in &self.outputs {
            args.tensors
                .insert(output.name.clone(), output.desc.clone());
        }
        args.attributes = self.attributes.clone();
        args
    }

    /// The input tensors in the operator's order, as a run takes them.
    pub fn input_tensors(&self) -> Vec<&HostTensor> {
        self.inputs.iter().map(|i| &i.tensor).collect()
    }

    /// Where in the file a builder's `message` points: the JSON path of
    /// the attribute it names (``attribute `axis` ``), else the case's.
    pub fn location_of(&self, message: &str) -> &str {
        self.attribute_paths
            .iter()
            .find(|(name, _)| message.contains(&format!("attribute `{name}`")))
            .map_or(self.path.as_str(), |(_, at)| at.as_str())
    }

    /// The tolerance the outputs are compared under, the operator's being
    /// `op`: the case's own `rtol`/`atol` ([`Tolerance::Close`]) when it
    /// gives them; for an ONNX-shaped case without them (whose reader sets
    /// [`Tolerance::UlpOrClose`] to ONNX's backend-test tolerance), an
    /// operator's ULP bound widened to that tolerance, since ONNX's
    /// reference data is computed in the output type and carries errors of
    /// its own (an exact contract stays exact); else the operator's.
    pub fn tolerance_over(&self, op: Tolerance) -> Tolerance {
        match (self.tolerance, op) {
            (Some(Tolerance::UlpOrClose { rtol, atol, .. }), Tolerance::Ulp(ulp)) => {
                Tolerance::UlpOrClose { ulp, rtol, atol }
            }
            (Some(Tolerance::UlpOrClose { .. }), op) => op,
            (Some(own), _) => own,
            (None, op) => op,
        }
    }
}

/// One mistake in a case file.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{file}: {}{message}", located(.location))]
pub struct CaseError {
    /// The file, as it is named in messages.
    pub file: String,
    /// Where in the file: a JSON path (`$[2].inputs.input.data[5]`), a text
    /// position for malformed JSON (`line 3, column 7`), or empty when the
    /// whole file is concerned (it could not be read).
    pub location: String,
    /// What is wrong, lower case, with names in backticks.
    pub message: String,
    /// The file is well formed, but its case needs what the catalog lacks
    /// (an ONNX-shaped case naming an operator, attribute or input the
    /// `onnx` namespace does not have): `ops run` counts it as a failed
    /// case, not as bad input.
    pub unsupported: bool,
}

/// `location: `, or nothing when the whole file is concerned.
fn located(location: &str) -> String {
    if location.is_empty() {
        String::new()
    } else {
        format!("{location}: ")
    }
}

/// Every mistake found in one case file (never empty), one per line.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}", one_per_line(.errors))]
pub struct CaseErrors {
    /// The mistakes, in file order.
    pub errors: Vec<CaseError>,
}

impl CaseErrors {
    /// True when every mistake is a gap of the catalog
    /// ([`CaseError::unsupported`]), none a mistake of the file.
    pub fn all_unsupported(&self) -> bool {
        self.errors.iter().all(|e| e.unsupported)
    }

    fn one(file: &str, location: impl Into<String>, message: impl Into<String>) -> CaseErrors {
        CaseErrors {
            errors: vec![CaseError {
                file: file.to_owned(),
                location: location.into(),
                message: message.into(),
                unsupported: false,
            }],
        }
    }
}

fn one_per_line(errors: &[CaseError]) -> String {
    let lines: Vec<String> = errors.iter().map(CaseError::to_string).collect();
    lines.join("\n")
}

/// Reads the case file at `path` (named in messages as `path.display()`),
/// refusing one of more than [`MAX_CASE_FILE_BYTES`] without reading past
/// that size.
pub fn read_cases(path: &Path, catalog: &[&'static OperatorInfo]) -> Result<Vec<Case>, CaseErrors> {
    use std::io::Read;
    let file = path.display().to_string();
    let mut bytes = Vec::new();
    let read = std::fs::File::open(path)
        .and_then(|f| f.take(MAX_CASE_FILE_BYTES + 1).read_to_end(&mut bytes));
    match read {
        Ok(n) if n as u64 > MAX_CASE_FILE_BYTES => Err(CaseErrors::one(
            &file,
            "",
            format!("the file is larger than a case file may be ({MAX_CASE_FILE_BYTES} bytes)"),
        )),
        Ok(_) => parse_cases(&file, &bytes, catalog),
        Err(e) => Err(CaseErrors::one(
            &file,
            "",
            format!("cannot read the file: {e}"),
        )),
    }
}

/// Parses the case file `text`, named `file` in messages, resolving each
/// case's operator in `catalog`.
///
/// The text holds one case object or an array of case objects. Every
/// mistake of the file is reported; a file with any mistake yields no cases.
pub fn parse_cases(
    file: &str,
    text: &[u8],
    catalog: &[&'static OperatorInfo],
) -> Result<Vec<Case>, CaseErrors> {
    let value: Value = match serde_json::from_slice(text) {
        Ok(v) => v,
        Err(e) => {
            let location = if e.line() == 0 {
                String::new()
            } else {
                format!("line {}, column {}", e.line(), e.column())
            };
            return Err(CaseErrors::one(
                file,
                location,
                format!("malformed JSON: {}", strip_position(&e.to_string())),
            ));
        }
    };
    let mut cx = Ctxt {
        file,
        errors: Vec::new(),
    };
    let mut cases = Vec::new();
    match &value {
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                if let Some(case) = parse_case(&mut cx, format!("$[{i}]"), item, catalog) {
                    cases.push(case);
                }
            }
        }
        Value::Object(_) => {
            if let Some(case) = parse_case(&mut cx, "$".to_owned(), &value, catalog) {
                cases.push(case);
            }
        }
        other => cx.error(
            "$",
            format!(
                "expected a case object or an array of case objects, got {}",
                kind(other)
            ),
        ),
    }
    if cx.errors.is_empty() {
        Ok(cases)
    } else {
        Err(CaseErrors { errors: cx.errors })
    }
}

/// serde_json appends " at line L column C"; the location says that already.
fn strip_position(message: &str) -> &str {
    match message.rfind(" at line ") {
        Some(i) => &message[..i],
        None => message,
    }
}

/// The error accumulator of one file.
struct Ctxt<'a> {
    file: &'a str,
    errors: Vec<CaseError>,
}

impl Ctxt<'_> {
    fn error(&mut self, location: impl Into<String>, message: impl Into<String>) {
        self.errors.push(CaseError {
            file: self.file.to_owned(),
            location: location.into(),
            message: message.into(),
            unsupported: false,
        });
    }

    /// Records what the catalog lacks ([`CaseError::unsupported`]).
    fn unsupported(&mut self, location: impl Into<String>, message: impl Into<String>) {
        self.errors.push(CaseError {
            file: self.file.to_owned(),
            location: location.into(),
            message: message.into(),
            unsupported: true,
        });
    }
}

/// The JSON path of member `key` of the object at `base`.
fn member(base: &str, key: &str) -> String {
    let plain = key
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if plain && key.len() <= ops_core::QUOTED_CHARS {
        format!("{base}.{key}")
    } else {
        format!(
            "{base}[{}]",
            json_string(&truncate(key, ops_core::QUOTED_CHARS))
        )
    }
}

/// A JSON value's kind, with a short rendering, for messages.
fn kind(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => format!("boolean {b}"),
        Value::Number(n) => format!("number {}", truncate(n.as_str(), 40)),
        Value::String(s) => format!("string {}", truncate(&json_string(s), 40)),
        Value::Array(_) => "an array".into(),
        Value::Object(_) => "an object".into(),
    }
}

fn truncate(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_owned()
    } else {
        let head: String = s.chars().take(max).collect();
        format!("{head}...")
    }
}

/// A JSON string literal.
fn json_string(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| String::from("\"?\""))
}

/// An optional key: absent and `null` are both `None`.
fn optional<'v>(obj: &'v Map<String, Value>, key: &str) -> Option<&'v Value> {
    obj.get(key).filter(|v| !v.is_null())
}

fn parse_case(
    cx: &mut Ctxt<'_>,
    path: String,
    value: &Value,
    catalog: &[&'static OperatorInfo],
) -> Option<Case> {
    let Value::Object(obj) = value else {
        cx.error(path, format!("expected a case object, got {}", kind(value)));
        return None;
    };
    if onnx::is_onnx_case(obj) {
        return onnx::parse_onnx_case(cx, path, obj, catalog);
    }
    let before = cx.errors.len();

    let name = required_string(cx, obj, &path, "name");
    let op = required_string(cx, obj, &path, "op");
    let info = op.as_deref().and_then(|op| {
        let found = catalog.iter().copied().find(|i| i.answers_to(op));
        if found.is_none() {
            let mut qualified: Vec<String> = Vec::new();
            for i in catalog {
                qualified.push(i.qualified_name());
                qualified.extend(i.aliases.iter().map(|a| match i.namespace {
                    "" => (*a).to_owned(),
                    ns => format!("{ns}::{a}"),
                }));
            }
            let known: Vec<&str> = qualified.iter().map(String::as_str).collect();
            let hint = suggest(op, &known);
            let op = quote(op);
            let message = match hint {
                Some(s) => format!("unknown operator {op}; did you mean `{s}`?"),
                None if known.is_empty() => {
                    format!("unknown operator {op}: the operator catalog is empty")
                }
                None => format!("unknown operator {op}; known: {}", backticked(&known)),
            };
            cx.error(member(&path, "op"), message);
        }
        // A spec with optional or variadic tensors: the instance whose
        // inputs the case gives.
        found.map(|info| match obj.get("inputs") {
            Some(Value::Object(given)) if !info.groups.is_empty() => {
                let names: Vec<&str> = given.keys().map(String::as_str).collect();
                let outputs: Option<Vec<&str>> = match obj.get("outputs") {
                    Some(Value::Object(o)) => Some(o.keys().map(String::as_str).collect()),
                    _ => None,
                };
                info.instance_with(catalog, &names, outputs.as_deref())
                    .or_else(|| crate::variadic::widest(catalog, info))
                    .unwrap_or(info)
            }
            _ => info,
        })
    });

    let feature_level = optional(obj, "feature_level").and_then(|v| {
        let at = member(&path, "feature_level");
        let text = match v {
            Value::String(s) => s.as_str(),
            Value::Number(n) => n.as_str(),
            other => {
                cx.error(
                    at,
                    format!(
                        "expected a feature level such as \"3.0\", got {}",
                        kind(other)
                    ),
                );
                return None;
            }
        };
        let level = FeatureLevel::parse(text);
        if level.is_none() {
            let known: Vec<String> = FeatureLevel::ALL.iter().map(|l| l.to_string()).collect();
            cx.error(
                at,
                format!(
                    "unknown feature level {}; known: {}",
                    quote(text),
                    known.join(", ")
                ),
            );
        }
        level
    });

    let expect_error = parse_expect_error(cx, obj, &path);
    let expect_message = parse_expect_message(cx, obj, &path, expect_error);
    let tolerance = parse_tolerance(cx, obj, &path);

    let mut attributes = parse_attributes(cx, obj, &path);
    if let Some(info) = info {
        check_attributes(cx, obj, &path, info, &mut attributes);
    }
    // A chained list goes on past the widest instance's tensors.
    let names = |key: &str, output: bool| {
        info.map(|i| {
            let given: Vec<&str> = match obj.get(key) {
                Some(Value::Object(m)) => m.keys().map(String::as_str).collect(),
                _ => Vec::new(),
            };
            crate::variadic::tensor_names(i, output, &given)
        })
    };
    let (input_names, output_names) = (names("inputs", false), names("outputs", true));
    fn as_strs(n: &Option<Vec<String>>) -> Option<Vec<&str>> {
        n.as_ref().map(|n| n.iter().map(String::as_str).collect())
    }
    let (input_strs, output_strs) = (as_strs(&input_names), as_strs(&output_names));
    let inputs = parse_tensor_group(cx, obj, &path, "inputs", input_strs.as_deref(), true);
    let outputs = parse_tensor_group(cx, obj, &path, "outputs", output_strs.as_deref(), false);

    if let (Some(expected), Some(outputs)) = (expect_error, &outputs) {
        for (name, t) in outputs {
            if t.data.is_some() {
                cx.error(
                    member(&member(&member(&path, "outputs"), name), "data"),
                    format!("a case that expects a `{expected}` error cannot give expected data"),
                );
            }
        }
    }

    if cx.errors.len() != before {
        return None;
    }
    let (name, info, op, inputs, outputs) = (name?, info?, op?, inputs?, outputs?);
    let attribute_paths = attributes
        .keys()
        .map(|n| (n.clone(), member(&member(&path, "attributes"), n)))
        .collect();
    let inputs = order(input_strs.as_deref().unwrap_or(info.inputs), inputs)
        .into_iter()
        .map(|(name, t)| CaseInput {
            name,
            tensor: t.data.expect("input data is required"),
        })
        .collect();
    let outputs = order(output_strs.as_deref().unwrap_or(info.outputs), outputs)
        .into_iter()
        .map(|(name, t)| CaseOutput {
            name,
            desc: t.desc,
            expected: t.data,
        })
        .collect();
    Some(Case {
        file: cx.file.to_owned(),
        path,
        name,
        info,
        op,
        feature_level,
        attributes,
        attribute_paths,
        inputs,
        outputs,
        expect_error,
        expect_message,
        tolerance,
    })
}

/// The optional `expect_message` of a case object at `path`: a string,
/// only beside `expect_error: "validation"`.
fn parse_expect_message(
    cx: &mut Ctxt<'_>,
    obj: &Map<String, Value>,
    path: &str,
    expect_error: Option<ExpectedError>,
) -> Option<String> {
    let v = optional(obj, "expect_message")?;
    let Some(text) = v.as_str() else {
        cx.error(
            member(path, "expect_message"),
            format!("expected a string, got {}", kind(v)),
        );
        return None;
    };
    if expect_error != Some(ExpectedError::Validation) {
        cx.error(
            member(path, "expect_message"),
            "`expect_message` needs `expect_error: \"validation\"`".to_string(),
        );
        return None;
    }
    Some(text.to_owned())
}

/// The optional `expect_error` of a case object at `path`.
fn parse_expect_error(
    cx: &mut Ctxt<'_>,
    obj: &Map<String, Value>,
    path: &str,
) -> Option<ExpectedError> {
    let v = optional(obj, "expect_error")?;
    match v.as_str() {
        Some("validation") => Some(ExpectedError::Validation),
        Some("index") => Some(ExpectedError::Index),
        Some("empty_reduction") => Some(ExpectedError::EmptyReduction),
        _ => {
            cx.error(
                member(path, "expect_error"),
                format!(
                    "expected \"validation\", \"index\" or \"empty_reduction\", got {}",
                    kind(v)
                ),
            );
            None
        }
    }
}

/// The optional `rtol` and `atol` of a case object at `path`: a
/// [`Tolerance::Close`] when either is given (the other is then 0).
fn parse_tolerance(cx: &mut Ctxt<'_>, obj: &Map<String, Value>, path: &str) -> Option<Tolerance> {
    let mut read = |key: &str| -> Option<f64> {
        let v = optional(obj, key)?;
        match v.as_number().and_then(|n| n.as_str().parse::<f64>().ok()) {
            Some(x) if x.is_finite() && x >= 0.0 => Some(x),
            _ => {
                cx.error(
                    member(path, key),
                    format!("expected a non-negative number, got {}", kind(v)),
                );
                None
            }
        }
    };
    let (rtol, atol) = (read("rtol"), read("atol"));
    (rtol.is_some() || atol.is_some()).then(|| Tolerance::Close {
        rtol: rtol.unwrap_or(0.0),
        atol: atol.unwrap_or(0.0),
    })
}

/// Puts the parsed tensors in the operator's order (all names are known to be present).
fn order(names: &[&str], mut parsed: Vec<(String, ParsedTensor)>) -> Vec<(String, ParsedTensor)> {
    let mut out = Vec::with_capacity(names.len());
    for want in names {
        if let Some(i) = parsed.iter().position(|(n, _)| n == want) {
            out.push(parsed.swap_remove(i));
        }
    }
    out
}

fn required_string(
    cx: &mut Ctxt<'_>,
    obj: &Map<String, Value>,
    path: &str,
    key: &str,
) -> Option<String> {
    match obj.get(key) {
        Some(Value::String(s)) if !s.is_empty() => Some(s.clone()),
        Some(Value::String(_)) => {
            cx.error(member(path, key), format!("`{key}` is empty"));
            None
        }
        Some(other) => {
            cx.error(
                member(path, key),
                format!("expected a string, got {}", kind(other)),
            );
            None
        }
        None => {
            cx.error(path, format!("missing `{key}`"));
            None
        }
    }
}

fn parse_attributes(
    cx: &mut Ctxt<'_>,
    obj: &Map<String, Value>,
    path: &str,
) -> BTreeMap<String, AttrValue> {
    let mut out = BTreeMap::new();
    let Some(value) = optional(obj, "attributes") else {
        return out;
    };
    let base = member(path, "attributes");
    let Value::Object(attrs) = value else {
        cx.error(
            base,
            format!("expected an object of attributes, got {}", kind(value)),
        );
        return out;
    };
    for (name, v) in attrs {
        let at = member(&base, name);
        let parsed = match v {
            Value::Bool(b) => Some(AttrValue::Bool(*b)),
            Value::String(s) => Some(AttrValue::Enum(s.clone())),
            Value::Number(n) => match parse_int_text(n.as_str()) {
                IntText::Int(i) => Some(AttrValue::Int(i)),
                IntText::TooLarge => {
                    cx.error(
                        at,
                        format!("integer {} is too large", truncate(n.as_str(), 40)),
                    );
                    None
                }
                IntText::NotInt => match n.as_f64() {
                    // A decimal: a float attribute's value.
                    Some(f) => Some(AttrValue::Float(f)),
                    None => {
                        cx.error(at, format!("expected a number, got {}", kind(v)));
                        None
                    }
                },
            },
            Value::Array(items) => {
                let mut ints = Vec::with_capacity(items.len());
                let mut ok = true;
                for (i, item) in items.iter().enumerate() {
                    let at = format!("{at}[{i}]");
                    match item {
                        Value::Number(n) => match parse_int_text(n.as_str()) {
                            IntText::Int(v) => ints.push(v),
                            IntText::TooLarge => {
                                ok = false;
                                cx.error(
                                    at,
                                    format!("integer {} is too large", truncate(n.as_str(), 40)),
                                );
                            }
                            IntText::NotInt => {
                                ok = false;
                                cx.error(at, format!("expected an integer, got {}", kind(item)));
                            }
                        },
                        other => {
                            ok = false;
                            cx.error(at, format!("expected an integer, got {}", kind(other)));
                        }
                    }
                }
                ok.then_some(AttrValue::Ints(ints))
            }
            Value::Null | Value::Object(_) => {
                cx.error(
                    at,
                    format!(
                        "expected a number, a list of integers, a boolean or a string, got {}",
                        kind(v)
                    ),
                );
                None
            }
        };
        if let Some(p) = parsed {
            out.insert(name.clone(), p);
        }
    }
    out
}

/// Checks the attributes against the operator's declaration; an integer
/// 0 or 1 written for a `bool` attribute becomes `false` or `true`.
fn check_attributes(
    cx: &mut Ctxt<'_>,
    obj: &Map<String, Value>,
    path: &str,
    info: &OperatorInfo,
    attributes: &mut BTreeMap<String, AttrValue>,
) {
    let base = member(path, "attributes");
    let declared: Vec<&str> = info.attrs.iter().map(|a| a.name).collect();
    let written: Vec<&String> = match optional(obj, "attributes") {
        Some(Value::Object(m)) => m.keys().collect(),
        _ => Vec::new(),
    };
    for name in &written {
        if !declared.contains(&name.as_str()) {
            let op = info.name;
            let quoted = quote(name);
            let message = match suggest(name, &declared) {
                Some(s) => format!("{op} has no attribute {quoted}; did you mean `{s}`?"),
                None if declared.is_empty() => {
                    format!("{op} has no attribute {quoted}: it has none")
                }
                None => format!(
                    "{op} has no attribute {quoted}; its attributes are {}",
                    backticked(&declared)
                ),
            };
            cx.error(member(&base, name), message);
        }
    }
    for attr in info.attrs {
        let at = member(&base, attr.name);
        let Some(value) = attributes.get_mut(attr.name) else {
            if !attr.has_default && !written.iter().any(|w| *w == attr.name) {
                let at = if written.is_empty() {
                    path.to_owned()
                } else {
                    base.clone()
                };
                cx.error(
                    at,
                    format!("missing attribute `{}` ({})", attr.name, attr.seed),
                );
            }
            continue;
        };
        let what = match attr.kind {
            AttrKind::Int { .. } => "an integer",
            AttrKind::List { .. } => "a list of integers",
            AttrKind::Bool => "a boolean",
            AttrKind::Float | AttrKind::Number => "a number",
            AttrKind::Enum(_) => "a string",
        };
        if let (AttrKind::Bool, AttrValue::Int(i @ (0 | 1))) = (attr.kind, &*value) {
            *value = AttrValue::Bool(*i == 1);
            continue;
        }
        match (attr.kind, &*value) {
            (AttrKind::Int { signed }, AttrValue::Int(v)) => {
                if !signed && *v < 0 {
                    cx.error(at, format!("`{}` is unsigned, got {v}", attr.name));
                }
            }
            (AttrKind::List { signed }, AttrValue::Ints(vs)) => {
                if !signed {
                    for (i, v) in vs.iter().enumerate().filter(|(_, v)| **v < 0) {
                        cx.error(
                            format!("{at}[{i}]"),
                            format!("`{}` is unsigned, got {v}", attr.name),
                        );
                    }
                }
            }
            (AttrKind::Bool, AttrValue::Bool(_)) => {}
            (AttrKind::Bool, AttrValue::Int(i)) => {
                cx.error(
                    at,
                    format!("`{}` is a boolean or 0 or 1, got {i}", attr.name),
                );
            }
            (AttrKind::Float | AttrKind::Number, AttrValue::Float(_) | AttrValue::Int(_)) => {}
            (AttrKind::Enum(members), AttrValue::Enum(s)) => {
                if !members.iter().any(|m| m.eq_ignore_ascii_case(s)) {
                    let hint = match suggest(s, members) {
                        Some(m) => format!("; did you mean `{m}`?"),
                        None => String::new(),
                    };
                    cx.error(
                        at,
                        format!(
                            "`{}` is one of {}, got {}{hint}",
                            attr.name,
                            backticked(members),
                            json_string(s)
                        ),
                    );
                }
            }
            (_, other) => {
                let got = match other {
                    AttrValue::Int(v) => format!("integer {v}"),
                    AttrValue::Ints(_) => "a list".to_owned(),
                    AttrValue::Bool(b) => format!("boolean {b}"),
                    AttrValue::Float(f) => format!("number {f}"),
                    AttrValue::Enum(s) => format!("string {}", json_string(s)),
                };
                cx.error(at, format!("`{}` is {what}, got {got}", attr.name));
            }
        }
    }
}

/// A tensor as read, before it is put in the operator's order.
struct ParsedTensor {
    desc: TensorDesc,
    data: Option<HostTensor>,
}

/// Parses `inputs` or `outputs`; checks the names against the operator's
/// when it is known. `None` when anything was wrong.
fn parse_tensor_group(
    cx: &mut Ctxt<'_>,
    obj: &Map<String, Value>,
    path: &str,
    key: &str,
    expected_names: Option<&[&str]>,
    data_required: bool,
) -> Option<Vec<(String, ParsedTensor)>> {
    let base = member(path, key);
    let before = cx.errors.len();
    let Some(value) = obj.get(key) else {
        cx.error(path, format!("missing `{key}`"));
        return None;
    };
    let Value::Object(tensors) = value else {
        cx.error(
            base,
            format!("expected an object of tensors by name, got {}", kind(value)),
        );
        return None;
    };
    let what = if data_required { "input" } else { "output" };
    let mut out = Vec::new();
    for (name, v) in tensors {
        let at = member(&base, name);
        if let Some(names) = expected_names
            && !names.contains(&name.as_str())
        {
            let hint = suggest(name, names);
            let name = quote(name);
            let message = match hint {
                Some(s) => format!("no {what} tensor {name}; did you mean `{s}`?"),
                None if names.is_empty() => {
                    format!("no {what} tensor {name}: the operator has none")
                }
                None => format!(
                    "no {what} tensor {name}; the {what}s are {}",
                    backticked(names)
                ),
            };
            cx.error(&at, message);
            continue;
        }
        if let Some(t) = parse_tensor(cx, &at, v, data_required) {
            out.push((name.clone(), t));
        }
    }
    if let Some(names) = expected_names {
        let missing: Vec<&str> = names
            .iter()
            .copied()
            .filter(|n| !tensors.contains_key(*n))
            .collect();
        if !missing.is_empty() {
            let plural = if missing.len() == 1 { "" } else { "s" };
            cx.error(
                &base,
                format!("missing {what} tensor{plural} {}", backticked(&missing)),
            );
        }
    }
    (cx.errors.len() == before).then_some(out)
}

fn parse_tensor(
    cx: &mut Ctxt<'_>,
    at: &str,
    value: &Value,
    data_required: bool,
) -> Option<ParsedTensor> {
    parse_tensor_with(cx, at, value, data_required, &[])
}

/// [`parse_tensor`] of an object that may also hold the keys `extra`
/// (ignored here).
fn parse_tensor_with(
    cx: &mut Ctxt<'_>,
    at: &str,
    value: &Value,
    data_required: bool,
    extra: &[&str],
) -> Option<ParsedTensor> {
    let Value::Object(obj) = value else {
        cx.error(
            at,
            format!(
                "expected a tensor object {{dtype, shape, data}}, got {}",
                kind(value)
            ),
        );
        return None;
    };
    let before = cx.errors.len();
    for key in obj.keys() {
        if !matches!(key.as_str(), "dtype" | "shape" | "strides" | "data")
            && !extra.contains(&key.as_str())
        {
            let hint = match suggest(key, &["dtype", "shape", "strides", "data"]) {
                Some(s) => format!("; did you mean `{s}`?"),
                None => "; a tensor has `dtype`, `shape` and `data`".into(),
            };
            cx.error(
                member(at, key),
                format!("unknown tensor key {}{hint}", quote(key)),
            );
        }
    }
    let dtype = match obj.get("dtype") {
        Some(Value::String(s)) => {
            let t = DataType::parse(s);
            if t.is_none() {
                let names: Vec<&str> = DataType::ALL.iter().map(|t| t.case_name()).collect();
                let lower = s.to_ascii_lowercase();
                let message = match suggest(&lower, &names) {
                    Some(n) => format!("unknown dtype {}; did you mean `{n}`?", quote(s)),
                    None => format!(
                        "unknown dtype {}; expected one of {}",
                        quote(s),
                        names.join(", ")
                    ),
                };
                cx.error(member(at, "dtype"), message);
            }
            t
        }
        Some(other) => {
            cx.error(
                member(at, "dtype"),
                format!(
                    "expected a dtype string such as \"float32\", got {}",
                    kind(other)
                ),
            );
            None
        }
        None => {
            cx.error(at, "missing `dtype`");
            None
        }
    };
    let shape = match obj.get("shape") {
        Some(Value::Array(items)) => {
            let mut sizes = Vec::with_capacity(items.len());
            for (i, item) in items.iter().enumerate() {
                let n = match item {
                    Value::Number(n) => match parse_int_text(n.as_str()) {
                        IntText::Int(v) => u32::try_from(v).ok(),
                        IntText::TooLarge => None,
                        IntText::NotInt => {
                            cx.error(
                                format!("{at}.shape[{i}]"),
                                format!("expected a size, got {}", kind(item)),
                            );
                            continue;
                        }
                    },
                    other => {
                        cx.error(
                            format!("{at}.shape[{i}]"),
                            format!("expected a size, got {}", kind(other)),
                        );
                        continue;
                    }
                };
                match n {
                    Some(n) => sizes.push(n),
                    None => cx.error(
                        format!("{at}.shape[{i}]"),
                        format!(
                            "size {} is outside [0, {}]",
                            truncate(item.to_string().as_str(), 40),
                            u32::MAX
                        ),
                    ),
                }
            }
            Some(sizes)
        }
        Some(other) => {
            cx.error(
                member(at, "shape"),
                format!("expected an array of sizes, got {}", kind(other)),
            );
            None
        }
        None => {
            cx.error(at, "missing `shape`");
            None
        }
    };
    let strides = match obj.get("strides") {
        None => None,
        Some(Value::Array(items)) => {
            let mut strides = Vec::with_capacity(items.len());
            for (i, item) in items.iter().enumerate() {
                match item.as_u64() {
                    Some(s) => strides.push(s),
                    None => cx.error(
                        format!("{at}.strides[{i}]"),
                        format!("expected a stride in elements, got {}", kind(item)),
                    ),
                }
            }
            Some(strides)
        }
        Some(other) => {
            cx.error(
                member(at, "strides"),
                format!("expected an array of strides, got {}", kind(other)),
            );
            None
        }
    };
    let data = optional(obj, "data");
    if data.is_none() && data_required {
        cx.error(at, "missing `data`");
    }
    if cx.errors.len() != before {
        return None;
    }
    let mut desc = TensorDesc::new(dtype?, shape?);
    if let Some(strides) = strides {
        desc = desc.with_strides(strides);
        if let Err(e) = desc.check_strides() {
            cx.error(member(at, "strides"), e);
            return None;
        }
    }
    let data = match data {
        None => None,
        Some(v) => {
            // Past the host limit, refused before its data is read into a
            // tensor (a count past `u64` is `parse_data`'s to refuse).
            let at = member(at, "data");
            let bytes = desc
                .buffer_elements()
                .and_then(|n| n.checked_mul(desc.dtype.size_bytes() as u64));
            if let Some(b) = bytes
                && let Err(e) = ops_core::check_host_bytes(|| "the tensor".into(), Some(b))
            {
                cx.error(at, e.to_string());
                return None;
            }
            Some(parse_data(cx, &at, &desc, v)?)
        }
    };
    Some(ParsedTensor { desc, data })
}

/// Parses a tensor's `data` array for `desc`.
fn parse_data(cx: &mut Ctxt<'_>, at: &str, desc: &TensorDesc, value: &Value) -> Option<HostTensor> {
    let Value::Array(items) = value else {
        cx.error(
            at,
            format!(
                "expected an array of values in row-major order, got {}",
                kind(value)
            ),
        );
        return None;
    };
    // A strided tensor's data is its buffer: every element the strides span.
    let Some(count) = desc.buffer_elements() else {
        cx.error(at, format!("shape {:?} has too many elements", desc.sizes));
        return None;
    };
    if count != items.len() as u64 {
        let what = match &desc.strides {
            None => format!("shape {:?}", desc.sizes),
            Some(s) => format!("the buffer of shape {:?} and strides {s:?}", desc.sizes),
        };
        cx.error(
            at,
            format!(
                "data holds {} value{}, but {what} has {count} element{}",
                items.len(),
                if items.len() == 1 { "" } else { "s" },
                if count == 1 { "" } else { "s" },
            ),
        );
        return None;
    }
    let mut bytes = Vec::with_capacity(items.len() * desc.dtype.size_bytes());
    let mut bad = 0usize;
    for (i, item) in items.iter().enumerate() {
        if let Err(message) = encode_value(desc.dtype, item, &mut bytes) {
            bad += 1;
            if bad <= MAX_VALUE_ERRORS {
                cx.error(format!("{at}[{i}]"), message);
            }
        }
    }
    if bad > MAX_VALUE_ERRORS {
        cx.error(
            at,
            format!("{} more bad values not shown", bad - MAX_VALUE_ERRORS),
        );
    }
    if bad > 0 {
        return None;
    }
    match HostTensor::from_bytes(desc.clone(), bytes) {
        Ok(t) => Some(t),
        Err(e) => {
            cx.error(at, e.to_string());
            None
        }
    }
}

/// What an integer literal's text holds.
enum IntText {
    Int(i128),
    /// An integer literal beyond `i128`.
    TooLarge,
    /// Not an integer literal (a fraction or exponent).
    NotInt,
}

fn parse_int_text(text: &str) -> IntText {
    let digits = text.strip_prefix('-').unwrap_or(text);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return IntText::NotInt;
    }
    match text.parse::<i128>() {
        Ok(v) => IntText::Int(v),
        Err(_) => IntText::TooLarge,
    }
}

/// Appends one element's little-endian bytes, or says why the value does not fit.
fn encode_value(dtype: DataType, value: &Value, out: &mut Vec<u8>) -> Result<(), String> {
    if dtype.is_bool() {
        // `true`/`false`, or the integers 1 and 0.
        let b = match value {
            Value::Bool(b) => Some(*b),
            Value::Number(n) => match n.as_str() {
                "0" => Some(false),
                "1" => Some(true),
                _ => None,
            },
            _ => None,
        };
        return match b {
            Some(b) => {
                b.write_le(out);
                Ok(())
            }
            None => Err(format!(
                "expected true, false, 0 or 1 for a bool, got {}",
                kind(value)
            )),
        };
    }
    if dtype.is_int() {
        let Value::Number(n) = value else {
            return Err(format!("expected an integer, got {}", kind(value)));
        };
        let text = n.as_str();
        let range = || int_range(dtype);
        match parse_int_text(text) {
            IntText::NotInt => Err(format!("expected an integer, got {}", kind(value))),
            IntText::TooLarge => Err(format!(
                "value {} is outside {dtype}'s range {}",
                truncate(text, 40),
                range()
            )),
            IntText::Int(v) => {
                let ok = ops_core::with_element_type!(dtype, T => match T::from_i128(v) {
                    Some(x) => {
                        x.write_le(out);
                        true
                    }
                    None => false,
                });
                if ok {
                    Ok(())
                } else {
                    Err(format!("value {v} is outside {dtype}'s range {}", range()))
                }
            }
        }
    } else {
        let special = match value {
            Value::String(s) => match s.as_str() {
                "NaN" => Some(f64::NAN),
                "Infinity" => Some(f64::INFINITY),
                "-Infinity" => Some(f64::NEG_INFINITY),
                _ => {
                    return Err(format!(
                        "expected a number, \"NaN\", \"Infinity\" or \"-Infinity\", got {}",
                        kind(value)
                    ))
                }
            },
            Value::Number(_) => None,
            other => {
                return Err(format!(
                    "expected a number, \"NaN\", \"Infinity\" or \"-Infinity\", got {}",
                    kind(other)
                ))
            }
        };
        if let Some(v) = special {
            match dtype {
                DataType::Float64 => v.write_le(out),
                DataType::Float32 => (v as f32).write_le(out),
                _ => f64_to_f16(v).write_le(out),
            }
            return Ok(());
        }
        let text = value.as_number().map(|n| n.as_str()).unwrap_or("");
        let finite = match dtype {
            DataType::Float64 => text
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite())
                .map(|v| v.write_le(out)),
            DataType::Float32 => text
                .parse::<f32>()
                .ok()
                .filter(|v| v.is_finite())
                .map(|v| v.write_le(out)),
            _ => parse_f16(text)
                .filter(|v| v.is_finite())
                .map(|v| v.write_le(out)),
        };
        finite.ok_or_else(|| {
            format!(
                "value {} is outside {dtype}'s range (write \"Infinity\" or \"-Infinity\" for an infinity)",
                truncate(text, 40)
            )
        })
    }
}

/// An integer type's range, `[low, high]`.
fn int_range(dtype: DataType) -> String {
    let bits = dtype.size_bits();
    if dtype.is_signed_int() {
        format!(
            "[{}, {}]",
            -(1i128 << (bits - 1)),
            (1i128 << (bits - 1)) - 1
        )
    } else {
        format!("[0, {}]", (1u128 << bits) - 1)
    }
}

/// Parses a JSON number's text as `f16`, correctly rounded (ties to even).
///
/// The text is parsed as `f64` (correctly rounded) and then rounded to
/// `f16` by [`f64_to_f16`]. The second rounding can only differ from
/// rounding the decimal directly when the `f64` is exactly halfway between
/// two `f16` values while the decimal is not; then the decimal's side of the
/// midpoint decides.
pub fn parse_f16(text: &str) -> Option<f16> {
    let r: f64 = text.parse().ok()?;
    if !is_f16_midpoint(r) {
        return Some(f64_to_f16(r));
    }
    Some(match compare_decimal_magnitude(text, r) {
        std::cmp::Ordering::Greater => {
            f64_to_f16(if r > 0.0 { r.next_up() } else { r.next_down() })
        }
        std::cmp::Ordering::Less => f64_to_f16(if r > 0.0 { r.next_down() } else { r.next_up() }),
        std::cmp::Ordering::Equal => f64_to_f16(r),
    })
}

/// Rounds an `f64` to the nearest `f16`, ties to even, overflowing to infinity.
///
/// `half::f16::from_f64` is not used: on x86 with F16C it goes through `f32`
/// (rounding twice), and its portable version ignores the low 32 mantissa
/// bits when it looks for a tie.
pub fn f64_to_f16(x: f64) -> f16 {
    if x.is_nan() {
        return if x.is_sign_negative() {
            -f16::NAN
        } else {
            f16::NAN
        };
    }
    let sign: u16 = if x.is_sign_negative() { 0x8000 } else { 0 };
    let a = x.abs();
    if a.is_infinite() || a >= 65536.0 {
        return f16::from_bits(sign | 0x7C00);
    }
    // The f16 spacing at `a` is 2^(e - 10), e clamped to the subnormal exponent -14.
    let e = (((a.to_bits() >> 52) & 0x7ff) as i32 - 1023).max(-14);
    let steps = (a / 2f64.powi(e - 10)).round_ties_even(); // exact scaling; in [0, 2048]
                                                           // The encoding is continuous across binades: steps == 2048 carries into the exponent.
    let bits = ((e + 15) as u32) * 1024 + steps as u32 - 1024;
    f16::from_bits(sign | bits.min(0x7C00) as u16)
}

/// True when `r` lies exactly halfway between two adjacent `f16` values
/// (including 65520, halfway between `f16::MAX` and the first power of two
/// beyond it, and 2^-25, halfway between 0 and the least subnormal).
fn is_f16_midpoint(r: f64) -> bool {
    let a = r.abs();
    if !a.is_finite() || a == 0.0 || a >= 65536.0 {
        return false;
    }
    let exponent = ((a.to_bits() >> 52) & 0x7ff) as i32 - 1023;
    // f16 spacing at `a` is 2^(e - 10) with e clamped to the subnormal exponent -14.
    let half_spacing = 2f64.powi(exponent.max(-14) - 11);
    let q = a / half_spacing; // exact: a power-of-two division that cannot underflow
    q.fract() == 0.0 && q % 2.0 == 1.0
}

/// Compares the magnitude of the decimal `text` (a JSON number) with `|r|`, exactly.
fn compare_decimal_magnitude(text: &str, r: f64) -> std::cmp::Ordering {
    // Every f16 midpoint is a multiple of 2^-25, so 30 fractional digits are exact.
    let exact = format!("{:.30}", r.abs());
    match (normalize_decimal(text), normalize_decimal(&exact)) {
        (Some(a), Some(b)) => compare_normalized(&a, &b),
        _ => std::cmp::Ordering::Equal,
    }
}

/// A decimal `0.d1d2... x 10^point` with no leading or trailing zero digits
/// (`digits` empty for zero).
struct Decimal {
    digits: Vec<u8>,
    point: i64,
}

fn normalize_decimal(text: &str) -> Option<Decimal> {
    let text = text.strip_prefix('-').unwrap_or(text);
    let (mantissa, exp) = match text.find(['e', 'E']) {
        Some(i) => (&text[..i], text[i + 1..].parse::<i64>().ok()?),
        None => (text, 0),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    if !int.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit()) {
        return None;
    }
    let all: Vec<u8> = int.bytes().chain(frac.bytes()).collect();
    let lead = all.iter().take_while(|&&b| b == b'0').count();
    let mut digits = all[lead..].to_vec();
    while digits.last() == Some(&b'0') {
        digits.pop();
    }
    if digits.is_empty() {
        return Some(Decimal { digits, point: 0 });
    }
    let point = (int.len() as i64 - lead as i64).checked_add(exp)?;
    Some(Decimal { digits, point })
}

fn compare_normalized(a: &Decimal, b: &Decimal) -> std::cmp::Ordering {
    match (a.digits.is_empty(), b.digits.is_empty()) {
        (true, true) => return std::cmp::Ordering::Equal,
        (true, false) => return std::cmp::Ordering::Less,
        (false, true) => return std::cmp::Ordering::Greater,
        _ => {}
    }
    a.point.cmp(&b.point).then_with(|| a.digits.cmp(&b.digits))
}

/// The closest of `candidates` to `word`, if it is close enough to be a likely typo.
fn suggest<'a>(word: &str, candidates: &[&'a str]) -> Option<&'a str> {
    let lower = word.to_ascii_lowercase();
    candidates
        .iter()
        .map(|c| (edit_distance(&lower, &c.to_ascii_lowercase()), *c))
        .filter(|&(d, c)| d > 0 && d <= c.len().div_ceil(3))
        .min_by_key(|&(d, _)| d)
        .map(|(_, c)| c)
}

/// Edit distance with transpositions (optimal string alignment: `hihg` is
/// one edit from `high`), on the first 64 characters so that a long string
/// in a case file costs little.
fn edit_distance(a: &str, b: &str) -> usize {
    let head = |s: &str| s.char_indices().nth(64).map_or(s.len(), |(i, _)| i);
    strsim::osa_distance(&a[..head(a)], &b[..head(b)])
}

fn backticked(names: &[&str]) -> String {
    names
        .iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `t` as a case file carries it: a float tensor's NaNs become the NaN
/// that `"NaN"` reads as (the format has no NaN payloads, so a signaling
/// NaN, or one of another sign or payload, reads back as that one).
pub fn as_written(t: &HostTensor) -> HostTensor {
    let mut nan = Vec::new();
    if !t.dtype().is_float()
        || encode_value(t.dtype(), &Value::String("NaN".into()), &mut nan).is_err()
    {
        return t.clone();
    }
    let mut bytes = t.bytes().to_vec();
    for element in bytes.chunks_exact_mut(nan.len()) {
        let is_nan = match t.dtype() {
            DataType::Float64 => f64::from_le_bytes(element.try_into().unwrap()).is_nan(),
            DataType::Float32 => f32::from_le_bytes(element.try_into().unwrap()).is_nan(),
            _ => f16::from_le_bytes(element.try_into().unwrap()).is_nan(),
        };
        if is_nan {
            element.copy_from_slice(&nan);
        }
    }
    HostTensor::from_bytes(t.desc().clone(), bytes).unwrap_or_else(|_| t.clone())
}

/// Element `i` of `t` as it reads in a message: integers exactly, booleans
/// as `true` and `false`, floats with the shortest digits that round-trip,
/// `NaN`, `Infinity`, `-Infinity`.
pub fn format_element(t: &HostTensor, i: usize) -> String {
    match t.dtype() {
        DataType::Float64 => format_float(t.get::<f64>(i)),
        DataType::Float32 => format_float(t.get::<f32>(i)),
        DataType::Float16 => format_float(t.get::<f16>(i)),
        DataType::Bool => t.get::<bool>(i).to_string(),
        _ => t.get_int(i).map_or_else(String::new, |v| v.to_string()),
    }
}

fn format_float<T: Element + fmt::Display + fmt::LowerExp>(v: T) -> String {
    let x = v.to_f64();
    if x.is_nan() {
        "NaN".into()
    } else if x.is_infinite() {
        if x > 0.0 { "Infinity" } else { "-Infinity" }.into()
    } else if x == 0.0 || (1e-5..1e16).contains(&x.abs()) {
        // Display prints the shortest digits that read back as the same value.
        v.to_string()
    } else {
        format!("{v:e}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn written_tensors_carry_the_nan_that_reads_back() {
        let wide = [
            f64::from_bits(0x7ff0_0000_0000_0001),
            -f64::NAN,
            1.5,
            f64::INFINITY,
        ];
        let t = HostTensor::from_slice([4u32].as_slice(), &wide).unwrap();
        let w: Vec<u64> = as_written(&t)
            .to_vec::<f64>()
            .unwrap()
            .iter()
            .map(|x| x.to_bits())
            .collect();
        let nan = f64::NAN.to_bits();
        assert_eq!(w, [nan, nan, 1.5f64.to_bits(), f64::INFINITY.to_bits()]);
        let narrow = [f32::from_bits(0xff80_0001), -0.0];
        let t = HostTensor::from_slice([2u32].as_slice(), &narrow).unwrap();
        let w: Vec<u32> = as_written(&t)
            .to_vec::<f32>()
            .unwrap()
            .iter()
            .map(|x| x.to_bits())
            .collect();
        assert_eq!(w, [(f64::NAN as f32).to_bits(), 0x8000_0000]);
        let half = [f16::from_bits(0xfc01), f16::from_bits(0x7e00)];
        let t = HostTensor::from_slice([2u32].as_slice(), &half).unwrap();
        let w: Vec<u16> = as_written(&t)
            .to_vec::<f16>()
            .unwrap()
            .iter()
            .map(|x| x.to_bits())
            .collect();
        assert_eq!(w, [f64_to_f16(f64::NAN).to_bits(); 2]);
        let ints = HostTensor::from_slice([2u32].as_slice(), &[-1i32, 7]).unwrap();
        assert_eq!(as_written(&ints).bytes(), ints.bytes());
    }

    #[test]
    fn f64_to_f16_rounds_every_value_and_midpoint() {
        for bits in 0u16..0x7C00 {
            let v = f16::from_bits(bits).to_f64();
            assert_eq!(f64_to_f16(v).to_bits(), bits);
            assert_eq!(f64_to_f16(-v).to_bits(), bits | 0x8000);
            // The midpoint to the next value (for 0x7BFF: 65520, which overflows).
            let next = if bits == 0x7BFF {
                65536.0
            } else {
                f16::from_bits(bits + 1).to_f64()
            };
            let mid = (v + next) / 2.0;
            let even = if bits % 2 == 0 { bits } else { bits + 1 };
            assert_eq!(f64_to_f16(mid).to_bits(), even, "tie after {bits:#x}");
            assert_eq!(f64_to_f16(mid.next_down()).to_bits(), bits);
            assert_eq!(f64_to_f16(mid.next_up()).to_bits(), bits + 1);
            assert!(is_f16_midpoint(mid));
            assert!(!is_f16_midpoint(v) || bits == 0);
        }
        assert!(f64_to_f16(f64::NAN).is_nan());
        assert_eq!(f64_to_f16(f64::NEG_INFINITY), f16::NEG_INFINITY);
        assert_eq!(f64_to_f16(1e-300).to_bits(), 0);
        assert_eq!(f64_to_f16(-1e-300).to_bits(), 0x8000);
        assert_eq!(f64_to_f16(1e300), f16::INFINITY);
    }

    #[test]
    fn decimal_comparison() {
        let cmp = |a: &str, b: &str| {
            compare_normalized(
                &normalize_decimal(a).unwrap(),
                &normalize_decimal(b).unwrap(),
            )
        };
        use std::cmp::Ordering::*;
        assert_eq!(cmp("1.5", "15e-1"), Equal);
        assert_eq!(cmp("0.00100", "1e-3"), Equal);
        assert_eq!(cmp("100", "99.999999999999999999"), Greater);
        assert_eq!(cmp("0", "0.0"), Equal);
        assert_eq!(cmp("0", "1e-300"), Less);
        assert_eq!(cmp("-2", "1"), Greater, "magnitudes");
    }

    #[test]
    fn suggestions() {
        assert_eq!(edit_distance("hihg", "high"), 1);
        assert_eq!(edit_distance("argmin", "argmax"), 2);
        assert_eq!(suggest("ArgMn", &["ArgMin", "Scatter"]), Some("ArgMin"));
        assert_eq!(suggest("Conv", &["ArgMin", "Scatter"]), None);
        assert_eq!(
            suggest("ArgMin", &["ArgMin"]),
            None,
            "an exact match is no suggestion"
        );
    }
}
