//! Property tests: the case reader never panics, whatever it is fed, and
//! tensors written as JSON read back bit for bit.
//!
//! Case counts follow proptest's default (256), overridable with the
//! `PROPTEST_CASES` environment variable for longer runs.

use super::common;

use crate::case::{parse_cases, tensor_to_json};
use ops_core::{DataType, HostTensor, TensorDesc};
use proptest::prelude::*;
use serde_json::{json, Value};

/// JSON number texts, including ones beyond every range and precision.
fn number() -> impl Strategy<Value = Value> {
    "-?(0|[1-9][0-9]{0,40})(\\.[0-9]{1,40})?([eE][+-]?[0-9]{1,4})?"
        .prop_map(|text| serde_json::from_str(&text).expect("a valid JSON number"))
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        number(),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        prop_oneof![
            Just("NaN".to_owned()),
            Just("Infinity".to_owned()),
            Just("float16".to_owned()),
            Just("uint64".to_owned()),
            Just("validation".to_owned()),
            Just("Fake".to_owned()),
            Just("3.0".to_owned()),
            ".{0,8}",
        ]
        .prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map(
                prop_oneof![
                    Just("name".to_owned()),
                    Just("op".to_owned()),
                    Just("inputs".to_owned()),
                    Just("outputs".to_owned()),
                    Just("input".to_owned()),
                    Just("output".to_owned()),
                    Just("dtype".to_owned()),
                    Just("shape".to_owned()),
                    Just("data".to_owned()),
                    Just("attributes".to_owned()),
                    "[a-z_ ]{0,6}",
                ],
                inner,
                0..6
            )
            .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// A valid case to mutate.
fn template() -> Value {
    json!([{
        "name": "t",
        "op": "Fake",
        "feature_level": "3.0",
        "attributes": {"mode": "copy", "axes": [0, 1]},
        "inputs": {"input": {"dtype": "float16", "shape": [2, 2], "data": [1, "NaN", -0.0, 65504]}},
        "outputs": {"output": {"dtype": "float16", "shape": [2, 2], "data": [1, 2, 3, 4]}}
    }, {
        "name": "p",
        "op": "Pair",
        "inputs": {"first": {"dtype": "uint64", "shape": [1], "data": [18446744073709551615u64]},
                   "second": {"dtype": "int8", "shape": [], "data": [-128]}},
        "outputs": {"low": {"dtype": "uint64", "shape": [1]}, "high": {"dtype": "int8", "shape": []}},
        "expect_error": "index"
    }])
}

/// Replaces the value reached by following `steps` (indices taken modulo
/// each container's length) with `replacement`.
fn mutate(value: &mut Value, steps: &[usize], replacement: Value) {
    let Some((&step, rest)) = steps.split_first() else {
        *value = replacement;
        return;
    };
    match value {
        Value::Array(items) if !items.is_empty() => {
            let n = items.len();
            mutate(&mut items[step % n], rest, replacement);
        }
        Value::Object(map) if !map.is_empty() => {
            let n = map.len();
            let child = map.values_mut().nth(step % n).expect("in range");
            mutate(child, rest, replacement);
        }
        _ => *value = replacement,
    }
}

proptest! {
    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..256)) {
        let _ = parse_cases("fuzz.json", &bytes, common::catalog());
    }

    #[test]
    fn arbitrary_json_never_panics(value in json_value()) {
        let text = value.to_string();
        let result = parse_cases("fuzz.json", text.as_bytes(), common::catalog());
        if let Err(errors) = result {
            prop_assert!(!errors.errors.is_empty());
            for e in &errors.errors {
                prop_assert_eq!(&e.file, "fuzz.json");
            }
        }
    }

    #[test]
    fn mutated_cases_never_panic(
        steps in prop::collection::vec(any::<usize>(), 0..7),
        replacement in json_value(),
    ) {
        let mut value = template();
        mutate(&mut value, &steps, replacement);
        let text = value.to_string();
        if let Err(errors) = parse_cases("fuzz.json", text.as_bytes(), common::catalog()) {
            for e in &errors.errors {
                // Every message names the file and a JSON path into it.
                prop_assert!(e.to_string().starts_with("fuzz.json: $"), "{}", e);
            }
        }
    }

    #[test]
    fn truncated_cases_never_panic(cut in any::<prop::sample::Index>()) {
        let text = template().to_string();
        let cut = cut.index(text.len() + 1);
        let _ = parse_cases("fuzz.json", &text.as_bytes()[..cut], common::catalog());
    }

    #[test]
    fn tensors_read_back_bit_for_bit(
        dtype in prop::sample::select(DataType::ALL.to_vec()),
        seed in prop::collection::vec(any::<u8>(), 0..64),
    ) {
        let size = dtype.size_bytes();
        let n = seed.len() / size;
        let mut bytes = seed[..n * size].to_vec();
        if dtype == DataType::Bool {
            // BOOL holds 0 or 1.
            bytes.iter_mut().for_each(|b| *b &= 1);
        }
        let t = HostTensor::from_bytes(TensorDesc::new(dtype, [n as u32]), bytes).unwrap();
        let text = format!(
            r#"{{"name": "r", "op": "Fake", "attributes": {{"mode": "copy"}},
                "inputs": {{"input": {}}}, "outputs": {{"output": {{"dtype": "{}", "shape": [{n}]}}}}}}"#,
            tensor_to_json(&t),
            dtype.case_name()
        );
        let back = common::parse(&text).map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        let back = &back[0].inputs[0].tensor;
        prop_assert_eq!(back.desc(), t.desc());
        for i in 0..n {
            let (a, b) = (&t.bytes()[i * size..(i + 1) * size], &back.bytes()[i * size..(i + 1) * size]);
            let nan = dtype.is_float()
                && crate::case::format_element(&t, i) == "NaN"
                && crate::case::format_element(back, i) == "NaN";
            prop_assert!(nan || a == b, "element {}: {:?} read back as {:?} via {}", i, a, b, text);
        }
    }
}
