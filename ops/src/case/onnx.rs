//! ONNX-shaped case files, as external conformance suites write them.
//!
//! ```json
//! {
//!   "source": "onnx:test_argmax_default_axis_example",
//!   "op": "ArgMax", "opset": 13,
//!   "attributes": { "keepdims": 1 },
//!   "default_attributes": { "axis": 0, "select_last_index": 0 },
//!   "node_inputs": ["data"], "node_outputs": ["result"],
//!   "inputs":  [{ "name": "data",   "dtype": "float32", "shape": [2, 2], "data": [2, 2, 3, 10] }],
//!   "outputs": [{ "name": "result", "dtype": "int64",   "shape": [1, 2], "data": [1, 1] }]
//! }
//! ```
//!
//! A case object is read this way when it has an `opset`, `node_inputs` or
//! `node_outputs` key. Reading rules:
//!
//! * `op` is looked up in the `onnx` namespace of the catalog
//!   (`specs/onnx/*.op`). An operator the namespace lacks is no mistake of
//!   the file but a gap of the catalog: `no ONNX operator Gather in the
//!   catalog`, which `ops run` reports as a failed case
//!   ([`CaseError::unsupported`](super::CaseError::unsupported)), as it does
//!   an attribute or input the spec does not declare.
//! * The case's name is its `name`, else its `source`, else the file's name.
//! * Attributes are matched to the spec's by their seed names (the ONNX
//!   names, `keepdims`); `attributes` override `default_attributes`. An
//!   ONNX int 0 or 1 fills a `bool` attribute. A default attribute the spec
//!   does not declare is ignored (the spec implements ONNX's default
//!   behaviour); a set one it does not declare is a gap of the catalog.
//! * Inputs and outputs are matched by position: the node's `i`-th input
//!   (`node_inputs[i]`, a name looked up in `inputs`; `""` for an absent
//!   optional input; without `node_inputs`, the `inputs` list in order) is
//!   the spec's `i`-th input tensor, and likewise for outputs.
//! * Opset forms. An attribute whose name is the seed name of one of the
//!   spec's host input tensors is that input, as older opsets wrote it
//!   (`axes` was an attribute of ReduceSum before opset 13 and of the other
//!   reductions before 18): it becomes an INT64 host tensor, of shape `[n]`
//!   for a list of `n` integers and `[]` for one integer. A host input that
//!   is neither given nor so written is an empty INT64 tensor of shape
//!   `[0]` (ONNX's absent optional input: "no axes"); what that means is
//!   the spec's to say. An attribute that a later opset made an input of
//!   another name (Pad's `paddings` and `value`, now `pads` and
//!   `constant_value`) is that input likewise; a float attribute becomes a
//!   scalar of the node's first input's type. A device input that is absent is a mistake.
//! * A binary operator's `broadcast` and `axis` attributes (opsets before
//!   7) place B's dimensions at A's `axis`: B is reshaped with trailing 1s
//!   and broadcast as today's operator broadcasts.
//! * `opset`, `op_version`, `provenance`, `notes` and other keys are not
//!   read; tensors may carry `name` and `initializer` beside `dtype`,
//!   `shape` and `data`. `rtol`, `atol` and `expect_error` are read as in
//!   the other shape. Without them the outputs are compared as ONNX's
//!   backend test runner compares them with its reference data (`rtol`
//!   1e-3, `atol` 1e-7) where the operator's contract is a ULP bound, a
//!   float element passing under either ([`ONNX_TOLERANCE`]); an exact
//!   contract stays exact.

use serde_json::{Map, Value};

use ops_core::{
    AttrInfo, AttrKind, AttrValue, DataType, HostTensor, OperatorInfo, TensorDesc, TensorInfo,
    Tolerance,
};

use super::{
    kind, member, optional, parse_expect_error, parse_int_text, parse_tensor_with, parse_tolerance,
    suggest, truncate, Case, CaseInput, CaseOutput, Ctxt, IntText, ParsedTensor,
};

/// The namespace ONNX-shaped cases look their operator up in.
pub const NAMESPACE: &str = "onnx";

/// How ONNX's backend test runner compares outputs with its reference data
/// (`rtol` 1e-3, `atol` 1e-7, numpy's `assert_allclose`): an ONNX-shaped
/// case without `rtol`/`atol` accepts it beside an operator's ULP bound
/// ([`Case::tolerance_over`](super::Case::tolerance_over)); the `ulp` here
/// is a placeholder for the operator's.
pub const ONNX_TOLERANCE: Tolerance = Tolerance::UlpOrClose {
    ulp: 0,
    rtol: 1e-3,
    atol: 1e-7,
};

/// True when a case object is ONNX-shaped: it has `opset`, `node_inputs`
/// or `node_outputs`.
pub(super) fn is_onnx_case(obj: &Map<String, Value>) -> bool {
    ["opset", "node_inputs", "node_outputs"]
        .iter()
        .any(|k| obj.contains_key(*k))
}

/// The operator of namespace [`NAMESPACE`] that answers to `op`.
pub fn find_onnx_operator(
    catalog: &[&'static OperatorInfo],
    op: &str,
) -> Option<&'static OperatorInfo> {
    let qualified = format!("{NAMESPACE}::{op}");
    catalog
        .iter()
        .copied()
        .find(|i| i.namespace == NAMESPACE && i.answers_to(&qualified))
}

/// Reads an ONNX-shaped case object (see the module documentation).
pub(super) fn parse_onnx_case(
    cx: &mut Ctxt<'_>,
    path: String,
    obj: &Map<String, Value>,
    catalog: &[&'static OperatorInfo],
) -> Option<Case> {
    let before = cx.errors.len();
    let op = match obj.get("op") {
        Some(Value::String(s)) if !s.is_empty() => Some(s.clone()),
        Some(other) => {
            cx.error(
                member(&path, "op"),
                format!("expected an ONNX operator name, got {}", kind(other)),
            );
            None
        }
        None => {
            cx.error(&path, "missing `op`");
            None
        }
    };
    let name = ["name", "source"]
        .iter()
        .find_map(|k| optional(obj, k).and_then(Value::as_str))
        .map(str::to_owned)
        .unwrap_or_else(|| {
            let file = std::path::Path::new(cx.file);
            let stem = file.file_stem().map(|s| s.to_string_lossy().into_owned());
            match path.as_str() {
                "$" => stem.unwrap_or_else(|| cx.file.to_owned()),
                p => format!("{}{p}", stem.unwrap_or_default()),
            }
        });
    let info = op.as_deref().and_then(|op| {
        let found = find_onnx_operator(catalog, op);
        if found.is_none() {
            let known: Vec<&str> = catalog
                .iter()
                .filter(|i| i.namespace == NAMESPACE)
                .map(|i| i.name)
                .collect();
            let hint = match suggest(op, &known) {
                Some(s) => format!("; did you mean `{s}`?"),
                None => String::new(),
            };
            cx.unsupported(
                member(&path, "op"),
                format!(
                    "no ONNX operator {} in the catalog{hint}",
                    ops_core::quote(op)
                ),
            );
        }
        found
    });
    let expect_error = parse_expect_error(cx, obj, &path);
    let tolerance = parse_tolerance(cx, obj, &path).or(Some(ONNX_TOLERANCE));
    let inputs = tensor_list(cx, obj, &path, "inputs", true);
    let outputs = tensor_list(cx, obj, &path, "outputs", false);
    let info = info?;
    let (inputs, outputs) = (inputs?, outputs?);
    let node_inputs = node_names(cx, obj, &path, "node_inputs", &inputs)?;
    let node_outputs = node_names(cx, obj, &path, "node_outputs", &outputs)?;
    let qualified = info.qualified_name();
    // A spec with optional or variadic inputs: the instance of the node's
    // inputs, and where each of its inputs sits among them.
    let set_attributes: Vec<&str> = match optional(obj, "attributes") {
        Some(Value::Object(m)) => m.keys().map(String::as_str).collect(),
        _ => Vec::new(),
    };
    let (info, positions) = match instance_of(
        catalog,
        info,
        &node_inputs,
        node_outputs.len(),
        &set_attributes,
    ) {
        Ok(found) => found,
        Err(message) => {
            cx.unsupported(member(&path, "node_inputs"), message);
            return None;
        }
    };

    // Attributes: defaults first, then the node's own.
    let mut given: Vec<(String, &Value, bool)> = Vec::new();
    for (key, set) in [("default_attributes", false), ("attributes", true)] {
        match optional(obj, key) {
            None => {}
            Some(Value::Object(m)) => {
                for (n, v) in m {
                    given.retain(|(g, _, _)| g != n);
                    given.push((n.clone(), v, set));
                }
            }
            Some(other) => cx.error(
                member(&path, key),
                format!("expected an object of attributes, got {}", kind(other)),
            ),
        }
    }
    let spec_inputs: Vec<_> = info.tensors.iter().filter(|t| !t.output).collect();
    let mut attributes = std::collections::BTreeMap::new();
    let mut as_inputs: Vec<(usize, HostTensor)> = Vec::new();
    let mut legacy: Vec<(String, i64)> = Vec::new();
    for (n, v, set) in &given {
        let at = member(
            &member(
                &path,
                if *set {
                    "attributes"
                } else {
                    "default_attributes"
                },
            ),
            n,
        );
        // The input an older opset's attribute became, by its seed name.
        let seed = renamed_input(info.name, n).unwrap_or(n.as_str());
        if let Some(attr) = info.attrs.iter().find(|a| a.seed == n) {
            if let Some(value) = attr_value(cx, &at, attr, v) {
                attributes.insert(attr.name.to_owned(), value);
            }
        } else if let Some(j) = spec_inputs.iter().position(|t| t.host && t.seed == seed) {
            // Integers are an INT64 tensor (`axes`, `pads`); a float
            // (Pad's `value`) is a scalar of the first input's type.
            let tensor = if v.as_f64().is_some() && int_of(v).is_err() {
                first_dtype(&node_inputs, &inputs).and_then(|d| scalar_tensor(cx, &at, d, v))
            } else {
                attr_tensor(cx, &at, v)
            };
            if let Some(t) = tensor {
                as_inputs.push((j, t));
            }
        } else if let Some(j) = spec_inputs.iter().position(|t| {
            *set && !t.host && t.seed == n && positions[spec_index(&spec_inputs, t)].is_none()
        }) {
            // An older opset's attribute for what is now an optional input
            // (Clip's `min` and `max` before opset 11): a scalar of the
            // first input's type.
            let dtype = first_dtype(&node_inputs, &inputs);
            if let Some(t) = dtype.and_then(|d| scalar_tensor(cx, &at, d, v)) {
                as_inputs.push((j, t));
            }
        } else if *set
            && matches!(n.as_str(), "broadcast" | "axis")
            && spec_inputs.iter().filter(|t| !t.host).count() == 2
        {
            // Before opset 7 a binary operator broadcast by attributes.
            match v.as_i64() {
                Some(k) => legacy.push((n.clone(), k)),
                None => cx.error(at, format!("expected an integer, got {}", kind(v))),
            }
        } else if *set {
            let declared: Vec<&str> = info.attrs.iter().map(|a| a.seed).collect();
            let hint = match suggest(n, &declared) {
                Some(s) => format!("; did you mean `{s}`?"),
                None => String::new(),
            };
            cx.unsupported(
                at,
                format!("{qualified} has no attribute {}{hint}", ops_core::quote(n)),
            );
        }
    }
    for attr in info.attrs {
        if !attr.has_default && !attributes.contains_key(attr.name) {
            cx.error(
                member(&path, "attributes"),
                format!("missing attribute `{}`", attr.seed),
            );
        }
    }

    // Inputs by position.
    if info.groups.is_empty() && node_inputs.len() > spec_inputs.len() {
        cx.unsupported(
            member(&path, "node_inputs"),
            format!(
                "{qualified} takes {} input{}, the node has {}",
                spec_inputs.len(),
                if spec_inputs.len() == 1 { "" } else { "s" },
                node_inputs.len()
            ),
        );
    }
    let mut case_inputs = Vec::new();
    for (j, t) in spec_inputs.iter().enumerate() {
        let from_node = positions[j].and_then(|p| node_inputs.get(p).copied().flatten());
        let tensor = match from_node {
            Some(k) => inputs[k].1.data.clone(),
            None => match as_inputs.iter().position(|(i, _)| *i == j) {
                Some(p) => Some(as_inputs.swap_remove(p).1),
                None if t.host => {
                    HostTensor::zeros(TensorDesc::new(ops_core::DataType::Int64, [0])).ok()
                }
                None => {
                    cx.error(
                        member(&path, "inputs"),
                        format!("missing input {j} (`{}`) of {qualified}", t.seed),
                    );
                    None
                }
            },
        };
        if let Some(tensor) = tensor {
            case_inputs.push(CaseInput {
                name: t.name.to_owned(),
                tensor,
            });
        }
    }

    legacy_broadcast(cx, &path, &legacy, &mut case_inputs);

    // Outputs by position.
    let spec_outputs: Vec<_> = info.tensors.iter().filter(|t| t.output).collect();
    if node_outputs.len() != spec_outputs.len() {
        cx.unsupported(
            member(&path, "node_outputs"),
            format!(
                "{qualified} has {} output{}, the node has {}",
                spec_outputs.len(),
                if spec_outputs.len() == 1 { "" } else { "s" },
                node_outputs.len()
            ),
        );
    }
    let mut case_outputs = Vec::new();
    for (t, k) in spec_outputs.iter().zip(&node_outputs) {
        let Some((_, parsed)) = k.map(|k| &outputs[k]) else {
            cx.error(
                member(&path, "node_outputs"),
                format!("output `{}` of {qualified} is absent", t.seed),
            );
            continue;
        };
        case_outputs.push(CaseOutput {
            name: t.name.to_owned(),
            desc: parsed.desc.clone(),
            expected: parsed.data.clone(),
        });
    }

    if cx.errors.len() != before {
        return None;
    }
    Some(Case {
        file: cx.file.to_owned(),
        path,
        name,
        info,
        op: qualified,
        feature_level: None,
        attributes,
        inputs: case_inputs,
        outputs: case_outputs,
        expect_error,
        expect_message: None,
        tolerance,
    })
}

/// Attributes of older opsets that a later opset made inputs of another
/// name: `(operator, attribute, the input's seed name)`. (An attribute of
/// the input's own name, as `axes` or Clip's `min`, needs no entry.)
const RENAMED_INPUTS: &[(&str, &str, &str)] = &[
    // Pad-1 `paddings` and Pad-1/2 `value`, inputs since Pad-11.
    ("Pad", "paddings", "pads"),
    ("Pad", "value", "constant_value"),
];

/// The seed name of the input that attribute `attr` of older opsets of
/// operator `op` became, when it was renamed ([`RENAMED_INPUTS`]).
fn renamed_input(op: &str, attr: &str) -> Option<&'static str> {
    RENAMED_INPUTS
        .iter()
        .find(|(o, a, _)| *o == op && *a == attr)
        .map(|(_, _, input)| *input)
}

/// The data type of the node's first input, when it has one.
fn first_dtype(
    node_inputs: &[Option<usize>],
    inputs: &[(String, ParsedTensor)],
) -> Option<DataType> {
    node_inputs
        .first()
        .copied()
        .flatten()
        .map(|k| inputs[k].1.desc.dtype)
}

/// A binary operator's `broadcast` and `axis` attributes of opsets before 7
/// (`legacy`, as the node sets them): with `broadcast` 1 and an `axis`, B's
/// dimensions are A's from `axis` on, so B is reshaped with trailing 1s
/// and the operator's multidirectional broadcasting does the rest; without
/// an `axis` the suffix rule is multidirectional broadcasting already.
/// `broadcast` 0 asks for equal shapes, which multidirectional
/// broadcasting accepts as they are.
fn legacy_broadcast(
    cx: &mut Ctxt<'_>,
    path: &str,
    legacy: &[(String, i64)],
    inputs: &mut [CaseInput],
) {
    let get = |key: &str| legacy.iter().find(|(n, _)| n == key).map(|(_, v)| *v);
    let (Some(1), Some(axis), [a, b]) = (get("broadcast"), get("axis"), inputs) else {
        return;
    };
    let (ra, rb) = (a.tensor.desc().rank() as i64, b.tensor.desc().rank() as i64);
    let start = if axis < 0 { axis + ra } else { axis };
    if start < 0 || start + rb > ra {
        cx.error(
            member(&member(path, "attributes"), "axis"),
            format!("axis {axis} does not place B's {rb} dimensions within A's {ra}"),
        );
        return;
    }
    let mut sizes = b.tensor.sizes().to_vec();
    sizes.resize((ra - start) as usize, 1);
    let desc = TensorDesc::new(b.tensor.dtype(), sizes);
    match HostTensor::from_bytes(desc, b.tensor.bytes().to_vec()) {
        Ok(t) => b.tensor = t,
        Err(e) => cx.error(member(path, "inputs"), e.to_string()),
    }
}

/// `inputs` or `outputs`: a list of `{name, dtype, shape, data}`.
fn tensor_list(
    cx: &mut Ctxt<'_>,
    obj: &Map<String, Value>,
    path: &str,
    key: &str,
    data_required: bool,
) -> Option<Vec<(String, ParsedTensor)>> {
    let base = member(path, key);
    let before = cx.errors.len();
    let items = match obj.get(key) {
        Some(Value::Array(items)) => items,
        Some(other) => {
            cx.error(
                base,
                format!(
                    "expected a list of tensors {{name, dtype, shape, data}}, got {}",
                    kind(other)
                ),
            );
            return None;
        }
        None => {
            cx.error(path, format!("missing `{key}`"));
            return None;
        }
    };
    let mut out = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let at = format!("{base}[{i}]");
        let name = match item.get("name") {
            Some(Value::String(s)) => s.clone(),
            Some(other) => {
                cx.error(
                    member(&at, "name"),
                    format!("expected a string, got {}", kind(other)),
                );
                continue;
            }
            None => {
                cx.error(&at, "missing `name`");
                continue;
            }
        };
        if let Some(t) = parse_tensor_with(cx, &at, item, data_required, &["name", "initializer"]) {
            out.push((name, t));
        }
    }
    (cx.errors.len() == before).then_some(out)
}

/// The node's inputs or outputs in order, each the position of its tensor
/// in `tensors` (`None` for `""`, an absent optional input); without the
/// key, `tensors` in order.
fn node_names(
    cx: &mut Ctxt<'_>,
    obj: &Map<String, Value>,
    path: &str,
    key: &str,
    tensors: &[(String, ParsedTensor)],
) -> Option<Vec<Option<usize>>> {
    let Some(value) = optional(obj, key) else {
        return Some((0..tensors.len()).map(Some).collect());
    };
    let at = member(path, key);
    let Value::Array(items) = value else {
        cx.error(at, format!("expected a list of names, got {}", kind(value)));
        return None;
    };
    let list = if key == "node_inputs" {
        "inputs"
    } else {
        "outputs"
    };
    let mut out = Vec::with_capacity(items.len());
    let mut ok = true;
    for (i, item) in items.iter().enumerate() {
        match item.as_str() {
            Some("") => out.push(None),
            Some(n) => match tensors.iter().position(|(t, _)| t == n) {
                Some(k) => out.push(Some(k)),
                None => {
                    ok = false;
                    cx.error(
                        format!("{at}[{i}]"),
                        format!("no tensor named {} in `{list}`", ops_core::quote(n)),
                    );
                }
            },
            None => {
                ok = false;
                cx.error(
                    format!("{at}[{i}]"),
                    format!("expected a name, got {}", kind(item)),
                );
            }
        }
    }
    ok.then_some(out)
}

/// An integer of a JSON value, or a message.
fn int_of(v: &Value) -> Result<i128, String> {
    match v {
        Value::Number(n) => match parse_int_text(n.as_str()) {
            IntText::Int(i) => Ok(i),
            IntText::TooLarge => Err(format!("integer {} is too large", truncate(n.as_str(), 40))),
            IntText::NotInt => Err(format!("expected an integer, got {}", kind(v))),
        },
        other => Err(format!("expected an integer, got {}", kind(other))),
    }
}

/// An ONNX attribute value as the spec's attribute `attr` takes it.
fn attr_value(cx: &mut Ctxt<'_>, at: &str, attr: &AttrInfo, v: &Value) -> Option<AttrValue> {
    let result = match attr.kind {
        AttrKind::Bool => match v {
            Value::Bool(b) => Ok(AttrValue::Bool(*b)),
            _ => match int_of(v) {
                Ok(0) => Ok(AttrValue::Bool(false)),
                Ok(1) => Ok(AttrValue::Bool(true)),
                Ok(i) => Err(format!("`{}` is 0 or 1, got {i}", attr.seed)),
                Err(m) => Err(m),
            },
        },
        AttrKind::Int { signed } => int_of(v).and_then(|i| {
            if !signed && i < 0 {
                Err(format!("`{}` is unsigned, got {i}", attr.seed))
            } else {
                Ok(AttrValue::Int(i))
            }
        }),
        AttrKind::Float => match v.as_f64() {
            Some(f) => Ok(AttrValue::Float(f)),
            None => Err(format!("`{}` is a number, got {}", attr.seed, kind(v))),
        },
        // An integer exactly (beyond 2^53), else a float.
        AttrKind::Number => int_of(v).map(AttrValue::Int).or_else(|_| match v.as_f64() {
            Some(f) => Ok(AttrValue::Float(f)),
            None => Err(format!("`{}` is a number, got {}", attr.seed, kind(v))),
        }),
        AttrKind::List { .. } => match v {
            Value::Array(items) => items
                .iter()
                .map(int_of)
                .collect::<Result<Vec<_>, _>>()
                .map(AttrValue::Ints),
            other => Err(format!("expected a list of integers, got {}", kind(other))),
        },
        AttrKind::Enum(members) => match v.as_str() {
            Some(s) if members.iter().any(|m| m.eq_ignore_ascii_case(s)) => {
                Ok(AttrValue::Enum(s.to_owned()))
            }
            _ => Err(format!(
                "`{}` is one of {}, got {}",
                attr.seed,
                members.join(", "),
                kind(v)
            )),
        },
    };
    match result {
        Ok(value) => Some(value),
        Err(m) => {
            cx.error(at, m);
            None
        }
    }
}

/// An attribute written where the spec has a host input (older opsets'
/// `axes`): an INT64 tensor of shape `[n]` for a list, `[]` for one integer.
fn attr_tensor(cx: &mut Ctxt<'_>, at: &str, v: &Value) -> Option<HostTensor> {
    let values: Result<(Vec<u32>, Vec<i128>), String> = match v {
        Value::Array(items) => items
            .iter()
            .map(int_of)
            .collect::<Result<Vec<_>, _>>()
            .map(|l| (vec![l.len() as u32], l)),
        other => int_of(other).map(|i| (Vec::new(), vec![i])),
    };
    let result = values.and_then(|(sizes, l)| {
        let l: Vec<i64> = l
            .into_iter()
            .map(|i| i64::try_from(i).map_err(|_| format!("{i} is outside INT64's range")))
            .collect::<Result<_, _>>()?;
        HostTensor::from_slice(sizes, &l).map_err(|e| e.to_string())
    });
    match result {
        Ok(t) => Some(t),
        Err(m) => {
            cx.error(at, m);
            None
        }
    }
}

/// The position of `t` among `inputs`.
fn spec_index(inputs: &[&TensorInfo], t: &TensorInfo) -> usize {
    inputs
        .iter()
        .position(|x| std::ptr::eq(*x, t))
        .unwrap_or(usize::MAX)
}

/// The instance of `info`'s spec that a node with `node_inputs` (`None`
/// for `""`), `node_outputs` outputs and attributes `set` calls, and for each of its inputs the
/// node position it takes (`None`: not from the node, an older opset's
/// attribute or an absent host input).
///
/// A spec without optional or variadic inputs is its own instance, its
/// `j`-th input at position `j`. Otherwise the declarations take the
/// positions in order: a single or optional one takes one position (an
/// optional one is absent when the position is `""` or past the end, unless
/// an attribute of its seed name is set), a variadic list every remaining
/// position.
fn instance_of(
    catalog: &[&'static OperatorInfo],
    info: &'static OperatorInfo,
    node_inputs: &[Option<usize>],
    node_outputs: usize,
    set: &[&str],
) -> Result<(&'static OperatorInfo, Vec<Option<usize>>), String> {
    let n_inputs = info.tensors.iter().filter(|t| !t.output).count();
    if info.groups.is_empty() {
        return Ok((info, (0..n_inputs).map(Some).collect()));
    }
    let mut counts = Vec::new();
    let mut positions = Vec::new();
    let mut at = 0;
    for g in info.groups.iter().filter(|g| !g.output) {
        if g.max > 1 {
            let taken: Vec<usize> = (at..node_inputs.len())
                .filter(|&p| node_inputs[p].is_some())
                .collect();
            at = node_inputs.len();
            counts.push(taken.len() as u32);
            positions.extend(taken.into_iter().map(Some));
        } else {
            let given = node_inputs.get(at).copied().flatten().is_some();
            let by_attr = !given && g.min == 0 && set.contains(&g.seed);
            // A declaration that is not optional is there even when the
            // node leaves it out: an absent host input is empty, an absent
            // device input a mistake reported below.
            if given || by_attr || g.min == 1 {
                counts.push(1);
                positions.push(given.then_some(at));
            } else {
                counts.push(0);
            }
            at += 1;
        }
    }
    let qualified = info.qualified_name();
    if at < node_inputs.len() {
        return Err(format!(
            "{qualified} takes {} input{}, the node has {}",
            at,
            if at == 1 { "" } else { "s" },
            node_inputs.len()
        ));
    }
    // Outputs: a variadic list takes what the other outputs leave.
    let outs: Vec<&ops_core::TensorGroup> = info.groups.iter().filter(|g| g.output).collect();
    let fixed = outs.iter().filter(|g| g.max == 1).count();
    for g in &outs {
        counts.push(if g.max > 1 {
            node_outputs.saturating_sub(fixed) as u32
        } else {
            1
        });
    }
    let found = catalog.iter().copied().find(|i| {
        i.namespace == info.namespace
            && i.name == info.name
            && i.groups
                .iter()
                .filter(|g| !g.output)
                .chain(i.groups.iter().filter(|g| g.output))
                .map(|g| g.count)
                .eq(counts.iter().copied())
    });
    match found {
        Some(i) => Ok((i, positions)),
        None => {
            let said: Vec<String> = info
                .groups
                .iter()
                .filter(|g| !g.output)
                .chain(outs.iter().copied())
                .zip(&counts)
                .filter(|&(g, &c)| c < g.min || c > g.max)
                .map(|(g, c)| {
                    format!(
                        "`{}` takes {} to {} tensor{}, the node gives {c}",
                        g.seed,
                        g.min,
                        g.max,
                        if g.max == 1 { "" } else { "s" }
                    )
                })
                .collect();
            Err(format!("{qualified}: {}", said.join("; ")))
        }
    }
}

/// A scalar tensor of `dtype` holding the number `v` (an attribute that an
/// older opset wrote for what is now a scalar input).
fn scalar_tensor(cx: &mut Ctxt<'_>, at: &str, dtype: DataType, v: &Value) -> Option<HostTensor> {
    let object = serde_json::json!({ "dtype": dtype.case_name(), "shape": [], "data": [v] });
    parse_tensor_with(cx, at, &object, true, &[]).and_then(|p| p.data)
}
