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
//!   a set attribute the spec does not declare and a variadic list longer
//!   than the catalog's instances go, unless the operator chains its list
//!   ([`crate::variadic`]: the case then names the widest instance and
//!   its inputs go on past it, `data_4`, `data_5`, ...). The spec declares the ONNX operator's
//!   inputs and outputs, so a node with more or fewer than they admit is a
//!   mistake of the file.
//! * Every tensor of `inputs` and `outputs` has a name of its own and is
//!   one the node names (`node_inputs`, `node_outputs`): a duplicate or an
//!   unused tensor is a mistake of the file, since its expected values
//!   would never be compared.
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
    let listed = [
        unique_and_used(cx, &path, "inputs", &inputs, &node_inputs),
        unique_and_used(cx, &path, "outputs", &outputs, &node_outputs),
    ];
    if listed.contains(&false) {
        return None;
    }
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
        Err(Arity { key, message, gap }) => {
            if gap {
                cx.unsupported(member(&path, key), message);
            } else {
                cx.error(member(&path, key), message);
            }
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
    let mut attribute_paths = std::collections::BTreeMap::new();
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
                attribute_paths.insert(attr.name.to_owned(), at.clone());
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
        cx.error(
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

    // A chained list's tensors past the widest instance's
    // ([`crate::variadic`]): the list is the last input declaration.
    if let Some(g) = crate::variadic::chained_group(info) {
        for (j, p) in positions.iter().enumerate().skip(spec_inputs.len()) {
            let k = g.max as usize + j - spec_inputs.len();
            let tensor = p
                .and_then(|p| node_inputs.get(p).copied().flatten())
                .and_then(|t| inputs[t].1.data.clone());
            if let Some(tensor) = tensor {
                case_inputs.push(CaseInput {
                    name: format!("{}_{k}", g.name),
                    tensor,
                });
            }
        }
    }

    legacy_broadcast(cx, &path, &legacy, &mut case_inputs);

    // Outputs by position.
    let spec_outputs: Vec<_> = info.tensors.iter().filter(|t| t.output).collect();
    // A chained output list's tensors past the widest instance's.
    let chained = crate::variadic::chained_outputs(info)
        .filter(|_| node_outputs.len() > spec_outputs.len())
        .map(|g| {
            (spec_outputs.len()..node_outputs.len())
                .map(|j| format!("{}_{}", g.name, g.max as usize + j - spec_outputs.len()))
                .collect::<Vec<_>>()
        });
    let extra = chained.unwrap_or_default();
    if extra.is_empty() && node_outputs.len() != spec_outputs.len() {
        cx.error(
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
    let names = spec_outputs
        .iter()
        .map(|t| (t.name.to_owned(), t.seed.to_owned()))
        .chain(extra.into_iter().map(|n| (n.clone(), n)));
    for ((name, seed), k) in names.zip(&node_outputs) {
        let Some((_, parsed)) = k.map(|k| &outputs[k]) else {
            cx.error(
                member(&path, "node_outputs"),
                format!("output `{seed}` of {qualified} is absent"),
            );
            continue;
        };
        case_outputs.push(CaseOutput {
            name,
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
        attribute_paths,
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

/// Checks that each tensor of `inputs` or `outputs` (`key`) has a name of
/// its own and is one the node names (`node`, positions in `tensors`): a
/// second tensor of one name, or one the node does not name, would never
/// be read, so its expected values would never be compared. False when
/// anything was wrong.
fn unique_and_used(
    cx: &mut Ctxt<'_>,
    path: &str,
    key: &str,
    tensors: &[(String, ParsedTensor)],
    node: &[Option<usize>],
) -> bool {
    let base = member(path, key);
    let node_key = if key == "inputs" {
        "node_inputs"
    } else {
        "node_outputs"
    };
    let mut ok = true;
    for (k, (name, _)) in tensors.iter().enumerate() {
        let shown = truncate(name, 40);
        if let Some(first) = tensors[..k].iter().position(|(n, _)| n == name) {
            ok = false;
            cx.error(
                member(&format!("{base}[{k}]"), "name"),
                format!("duplicate tensor `{shown}`: `{base}[{first}]` has the same name"),
            );
        } else if !node.contains(&Some(k)) {
            ok = false;
            cx.error(
                format!("{base}[{k}]"),
                format!("tensor `{shown}` is not in `{node_key}`: the node never uses it"),
            );
        }
    }
    ok
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
///
/// The spec declares the ONNX operator's inputs and outputs, so a node
/// with more or fewer of them than the declarations admit is malformed;
/// only a variadic list longer than the catalog's instances go is a gap of
/// the catalog ([`Arity::gap`]).
fn instance_of(
    catalog: &[&'static OperatorInfo],
    info: &'static OperatorInfo,
    node_inputs: &[Option<usize>],
    node_outputs: usize,
    set: &[&str],
) -> Result<(&'static OperatorInfo, Vec<Option<usize>>), Arity> {
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
        return Err(Arity {
            key: "node_inputs",
            message: format!(
                "{qualified} takes {} input{}, the node has {}",
                at,
                if at == 1 { "" } else { "s" },
                node_inputs.len()
            ),
            gap: false,
        });
    }
    // Outputs: a variadic list takes what the other outputs leave.
    let outs: Vec<&ops_core::TensorGroup> = info.groups.iter().filter(|g| g.output).collect();
    let fixed = outs.iter().filter(|g| g.max == 1).count();
    if !outs.iter().any(|g| g.max > 1) && node_outputs != fixed {
        return Err(Arity {
            key: "node_outputs",
            message: format!(
                "{qualified} has {fixed} output{}, the node has {node_outputs}",
                if fixed == 1 { "" } else { "s" },
            ),
            gap: false,
        });
    }
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
    let chained = crate::variadic::chained_group(info).or(crate::variadic::chained_outputs(info));
    if let (None, Some(g)) = (found, chained) {
        // A list that a chain of instances extends: the widest instance.
        let gi = info
            .groups
            .iter()
            .filter(|x| !x.output)
            .chain(info.groups.iter().filter(|x| x.output))
            .position(|x| std::ptr::eq(x, g))
            .unwrap_or(usize::MAX);
        if counts.get(gi).is_some_and(|&c| c > g.max) {
            let mut widest = counts.clone();
            widest[gi] = g.max;
            if let Some(i) = catalog.iter().copied().find(|i| {
                i.namespace == info.namespace
                    && i.name == info.name
                    && i.groups
                        .iter()
                        .filter(|g| !g.output)
                        .chain(i.groups.iter().filter(|g| g.output))
                        .map(|g| g.count)
                        .eq(widest.iter().copied())
            }) {
                return Ok((i, positions));
            }
        }
    }
    match found {
        Some(i) => Ok((i, positions)),
        None => {
            let off: Vec<(&ops_core::TensorGroup, u32)> = info
                .groups
                .iter()
                .filter(|g| !g.output)
                .chain(outs.iter().copied())
                .zip(counts.iter().copied())
                .filter(|&(g, c)| c < g.min || c > g.max)
                .collect();
            let said: Vec<String> = off
                .iter()
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
            // ONNX's variadic lists have no upper bound: past the
            // instances' is the catalog's limit, below the least the node's.
            let gap = off.iter().all(|(g, c)| g.max > 1 && *c > g.max);
            let key = if off.iter().all(|(g, _)| g.output) {
                "node_outputs"
            } else {
                "node_inputs"
            };
            Err(Arity {
                key,
                message: format!("{qualified}: {}", said.join("; ")),
                gap,
            })
        }
    }
}

/// Why a node's inputs or outputs fit no instance of its operator.
#[derive(Debug)]
struct Arity {
    /// `node_inputs` or `node_outputs`: the key the count is wrong in.
    key: &'static str,
    /// What is wrong, naming the declarations and the counts.
    message: String,
    /// The node is well formed, but the catalog's instances stop short of
    /// its variadic list: a gap of the catalog, not a mistake of the file.
    gap: bool,
}

/// A scalar tensor of `dtype` holding the number `v` (an attribute that an
/// older opset wrote for what is now a scalar input).
fn scalar_tensor(cx: &mut Ctxt<'_>, at: &str, dtype: DataType, v: &Value) -> Option<HostTensor> {
    let object = serde_json::json!({ "dtype": dtype.case_name(), "shape": [], "data": [v] });
    parse_tensor_with(cx, at, &object, true, &[]).and_then(|p| p.data)
}
