//! The case reader over crafted good and bad case files.

use super::common;

use crate::case::{parse_cases, parse_f16, read_cases, ExpectedError};
use common::{one_error, parse};
use ops_core::{f16, AttrValue, DataType, FeatureLevel, HostTensor, TensorDesc};

/// A `Fake` case with one input of `dtype`, `shape` and `data` (JSON text).
fn fake(dtype: &str, shape: &str, data: &str) -> String {
    format!(
        r#"{{"name": "c", "op": "Fake", "attributes": {{"mode": "copy"}},
            "inputs": {{"input": {{"dtype": "{dtype}", "shape": {shape}, "data": {data}}}}},
            "outputs": {{"output": {{"dtype": "{dtype}", "shape": {shape}}}}}}}"#
    )
}

fn input_of(text: &str) -> HostTensor {
    let cases = parse(text).unwrap_or_else(|e| panic!("{e}"));
    cases[0].inputs[0].tensor.clone()
}

#[test]
fn reads_a_single_case() {
    let cases = parse(
        r#"{
          "name": "argmin-like",
          "op": "fake",
          "feature_level": "3.0",
          "note": "unknown top-level keys are ignored",
          "attributes": {"mode": "copy", "axes": [0, -1], "keep": true, "count": 3, "empty": []},
          "inputs":  {"input":  {"dtype": "float32", "shape": [3, 3], "data": [1, 2, 3, 3, 0, 4, 2, 5, 2]}},
          "outputs": {"output": {"dtype": "FLOAT32", "shape": [3, 3], "data": [1, 2, 3, 3, 0, 4, 2, 5, 2]}}
        }"#,
    )
    .unwrap();
    assert_eq!(cases.len(), 1);
    let c = &cases[0];
    assert_eq!(c.name, "argmin-like");
    assert_eq!(c.info.name, "Fake");
    assert_eq!(c.op, "fake");
    assert_eq!(c.path, "$");
    assert_eq!(c.file, "t.json");
    assert_eq!(c.feature_level, Some(FeatureLevel::FL3_0));
    assert_eq!(c.level(), FeatureLevel::FL3_0);
    assert_eq!(c.expect_error, None);
    assert_eq!(c.attributes["mode"], AttrValue::Enum("copy".into()));
    assert_eq!(c.attributes["axes"], AttrValue::Ints(vec![0, -1]));
    assert_eq!(c.attributes["keep"], AttrValue::Bool(true));
    assert_eq!(c.attributes["count"], AttrValue::Int(3));
    assert_eq!(c.attributes["empty"], AttrValue::Ints(vec![]));
    let input = &c.inputs[0].tensor;
    assert_eq!(input.desc(), &TensorDesc::new(DataType::Float32, [3, 3]));
    assert_eq!(
        input.to_vec::<f32>().unwrap(),
        [1.0, 2.0, 3.0, 3.0, 0.0, 4.0, 2.0, 5.0, 2.0]
    );
    let out = &c.outputs[0];
    assert_eq!(out.name, "output");
    assert_eq!(out.desc, TensorDesc::new(DataType::Float32, [3, 3]));
    assert_eq!(out.expected.as_ref(), Some(input));

    let args = c.op_args();
    assert_eq!(args.tensors.len(), 2);
    assert_eq!(args.host_data.len(), 1);
    assert_eq!(args.host_data["input"], *input);
    assert_eq!(args.attributes.len(), 5);
}

#[test]
fn reads_an_array_in_operator_order() {
    let cases = parse(
        r#"[
          {"name": "a", "op": "FakeAlias", "attributes": {"mode": "copy"},
           "inputs": {"input": {"dtype": "int8", "shape": [], "data": [-128]}},
           "outputs": {"output": {"dtype": "int8", "shape": []}},
           "expect_error": "index", "feature_level": null},
          {"name": "b", "op": "PAIR",
           "inputs": {"second": {"dtype": "uint16", "shape": [1], "data": [2]},
                      "first": {"dtype": "uint16", "shape": [1], "data": [1]}},
           "outputs": {"high": {"dtype": "uint16", "shape": [1]},
                       "low": {"dtype": "uint16", "shape": [1]}},
           "expect_error": "validation"}
        ]"#,
    )
    .unwrap();
    assert_eq!(cases.len(), 2);
    assert_eq!(cases[0].path, "$[0]");
    assert_eq!(cases[0].info.name, "Fake");
    assert_eq!(cases[0].expect_error, Some(ExpectedError::Index));
    assert_eq!(cases[0].feature_level, None);
    assert_eq!(cases[0].level(), FeatureLevel::HIGHEST);
    assert_eq!(cases[0].inputs[0].tensor.to_vec::<i8>().unwrap(), [-128]);
    assert_eq!(cases[0].outputs[0].expected, None);
    assert_eq!(cases[1].path, "$[1]");
    assert_eq!(cases[1].expect_error, Some(ExpectedError::Validation));
    let names: Vec<&str> = cases[1].inputs.iter().map(|i| i.name.as_str()).collect();
    assert_eq!(names, ["first", "second"]);
    let names: Vec<&str> = cases[1].outputs.iter().map(|o| o.name.as_str()).collect();
    assert_eq!(names, ["low", "high"]);
    assert_eq!(cases[1].input_tensors()[1].to_vec::<u16>().unwrap(), [2]);
    assert!(parse("[]").unwrap().is_empty());
}

#[test]
fn reads_64_bit_integers_exactly() {
    let t = input_of(&fake(
        "int64",
        "[4]",
        "[-9223372036854775808, 9223372036854775807, 9007199254740993, -0]",
    ));
    assert_eq!(
        t.to_vec::<i64>().unwrap(),
        [i64::MIN, i64::MAX, 9_007_199_254_740_993, 0]
    );
    let t = input_of(&fake(
        "uint64",
        "[2]",
        "[18446744073709551615, 18446744073709551614]",
    ));
    assert_eq!(t.to_vec::<u64>().unwrap(), [u64::MAX, u64::MAX - 1]);
    let t = input_of(&fake("uint32", "[1]", "[4294967295]"));
    assert_eq!(t.to_vec::<u32>().unwrap(), [u32::MAX]);
}

#[test]
fn reads_floats_as_rusts_parser_rounds() {
    let t = input_of(&fake(
        "float64",
        "[6]",
        r#"[0.1, -0.0, 1e308, "NaN", "Infinity", "-Infinity"]"#,
    ));
    let v = t.to_vec::<f64>().unwrap();
    assert_eq!(v[0], 0.1);
    assert!(v[1] == 0.0 && v[1].is_sign_negative());
    assert_eq!(v[2], 1e308);
    assert!(v[3].is_nan());
    assert_eq!(v[4], f64::INFINITY);
    assert_eq!(v[5], f64::NEG_INFINITY);

    // 16777217 is halfway between two floats: ties to even; 0.1 rounds directly to f32.
    let t = input_of(&fake(
        "float32",
        "[4]",
        r#"[16777217, 0.1, 3.4028235e38, "NaN"]"#,
    ));
    let v = t.to_vec::<f32>().unwrap();
    assert_eq!(v[0], 16_777_216.0);
    assert_eq!(v[1], 0.1f32);
    assert_eq!(v[2], f32::MAX);
    assert!(v[3].is_nan());

    let t = input_of(&fake(
        "float16",
        "[5]",
        r#"[1.5, 65504, -0, "-Infinity", 0.1]"#,
    ));
    let v = t.to_vec::<f16>().unwrap();
    assert_eq!(v[0], f16::from_f32(1.5));
    assert_eq!(v[1], f16::MAX);
    assert_eq!(v[2].to_bits(), 0x8000);
    assert_eq!(v[3], f16::NEG_INFINITY);
    assert_eq!(v[4].to_bits(), 0x2E66);
}

#[test]
fn float16_is_correctly_rounded_despite_the_f64_step() {
    // 1 + 2^-11 is halfway between f16 1.0 and its successor 1 + 2^-10.
    let bits = |s: &str| parse_f16(s).unwrap().to_bits();
    assert_eq!(bits("1.00048828125"), 0x3C00, "a tie goes to even");
    assert_eq!(bits("1.00048828125000000000000000001"), 0x3C01);
    assert_eq!(bits("1.00048828124999999999999999999"), 0x3C00);
    assert_eq!(bits("-1.00048828125000000000000000001"), 0xBC01);
    assert_eq!(bits("100048828125000000000000000001e-29"), 0x3C01);
    assert_eq!(bits("1.0009765625"), 0x3C01);
    // 2^-25: halfway between 0 and the least subnormal.
    assert_eq!(bits("2.98023223876953125e-8"), 0x0000);
    assert_eq!(bits("2.980232238769531250000000001e-8"), 0x0001);
    // 65520: halfway between f16::MAX and overflow.
    assert_eq!(bits("65519.99999999999999999"), f16::MAX.to_bits());
    assert!(parse_f16("65520").unwrap().is_infinite());
    assert!(parse_f16("65520.000000000000001").unwrap().is_infinite());
    assert_eq!(parse_f16("nonsense"), None);
}

#[test]
fn malformed_json_names_file_and_position() {
    let m = one_error("{\"name\": \"x\",\n  \"op\": }");
    assert!(
        m.starts_with("t.json: line 2, column 9: malformed JSON: "),
        "{m}"
    );
    let m = one_error("");
    assert!(
        m.starts_with("t.json: line 1, column 0: malformed JSON"),
        "{m}"
    );
    let errs = parse_cases("bin.json", &[0xff, 0xfe, 0x00], common::catalog()).unwrap_err();
    assert!(errs.to_string().starts_with("bin.json: line 1"), "{errs}");
    let m = one_error("42");
    assert_eq!(
        m,
        "t.json: $: expected a case object or an array of case objects, got number 42"
    );
    let m = one_error("[1]");
    assert_eq!(m, "t.json: $[0]: expected a case object, got number 1");
}

#[test]
fn unreadable_file_is_named() {
    let errs = read_cases(
        std::path::Path::new("/nonexistent/cases.json"),
        common::catalog(),
    )
    .unwrap_err();
    let m = errs.to_string();
    assert!(
        m.starts_with("/nonexistent/cases.json: cannot read the file: "),
        "{m}"
    );
}

#[test]
fn unknown_operator() {
    let text = fake("uint8", "[1]", "[1]").replace("\"Fake\"", "\"Fakr\"");
    assert_eq!(
        one_error(&text),
        "t.json: $.op: unknown operator `Fakr`; did you mean `Fake`?"
    );
    let text = fake("uint8", "[1]", "[1]").replace("\"Fake\"", "\"Conv\"");
    assert_eq!(
        one_error(&text),
        "t.json: $.op: unknown operator `Conv`; known: `Fake`, `FakeAlias`, `Pair`"
    );
    let errs = parse_cases("e.json", fake("uint8", "[1]", "[1]").as_bytes(), &[]).unwrap_err();
    assert_eq!(
        errs.to_string(),
        "e.json: $.op: unknown operator `Fake`: the operator catalog is empty"
    );
}

#[test]
fn unknown_dtype() {
    let text = fake("float61", "[1]", "[1]");
    let errs = parse(&text).unwrap_err();
    let first = errs.errors[0].to_string();
    assert_eq!(
        first,
        "t.json: $.inputs.input.dtype: unknown dtype `float61`; did you mean `float64`?"
    );
    let text = fake("complex64", "[1]", "[1]");
    let errs = parse(&text).unwrap_err();
    assert!(errs.errors[0].to_string().starts_with(
        "t.json: $.inputs.input.dtype: unknown dtype `complex64`; expected one of float64, float32"
    ));
}

#[test]
fn data_length_must_match_the_shape() {
    assert_eq!(
        one_error(&fake("uint8", "[2, 3]", "[1, 2, 3, 4, 5]")),
        "t.json: $.inputs.input.data: data holds 5 values, but shape [2, 3] has 6 elements"
    );
    assert_eq!(
        one_error(&fake("uint8", "[]", "[]")),
        "t.json: $.inputs.input.data: data holds 0 values, but shape [] has 1 element"
    );
    // A huge shape is refused without allocating.
    assert_eq!(
        one_error(&fake("uint8", "[4294967295, 4294967295, 4294967295]", "[1]")),
        "t.json: $.inputs.input.data: shape [4294967295, 4294967295, 4294967295] has too many elements"
    );
    let first_error = |text: &str| parse(text).unwrap_err().errors[0].to_string();
    assert_eq!(
        first_error(&fake("uint8", "[-1]", "[1]")),
        "t.json: $.inputs.input.shape[0]: size -1 is outside [0, 4294967295]"
    );
    assert_eq!(
        first_error(&fake("uint8", "[4294967296]", "[1]")),
        "t.json: $.inputs.input.shape[0]: size 4294967296 is outside [0, 4294967295]"
    );
    assert_eq!(
        first_error(&fake("uint8", "[1.5]", "[1]")),
        "t.json: $.inputs.input.shape[0]: expected a size, got number 1.5"
    );
}

#[test]
fn values_outside_the_dtype_range() {
    let text = format!(
        "[{}, {}, {}]",
        fake("uint8", "[1]", "[0]"),
        fake("uint8", "[1]", "[255]"),
        fake("uint8", "[6]", "[0, 1, 2, 3, 4, 300]")
    );
    assert_eq!(
        one_error(&text),
        "t.json: $[2].inputs.input.data[5]: value 300 is outside UINT8's range [0, 255]"
    );
    assert_eq!(
        one_error(&fake("int8", "[1]", "[-129]")),
        "t.json: $.inputs.input.data[0]: value -129 is outside INT8's range [-128, 127]"
    );
    assert_eq!(
        one_error(&fake("uint64", "[1]", "[18446744073709551616]")),
        "t.json: $.inputs.input.data[0]: value 18446744073709551616 is outside UINT64's range [0, 18446744073709551615]"
    );
    assert_eq!(
        one_error(&fake("int64", "[1]", "[-9223372036854775809]")),
        "t.json: $.inputs.input.data[0]: value -9223372036854775809 is outside INT64's range [-9223372036854775808, 9223372036854775807]"
    );
    let huge = "9".repeat(60);
    let m = one_error(&fake("uint32", "[1]", &format!("[{huge}]")));
    assert!(
        m.starts_with("t.json: $.inputs.input.data[0]: value 9999"),
        "{m}"
    );
    assert!(
        m.ends_with("is outside UINT32's range [0, 4294967295]"),
        "{m}"
    );
    assert_eq!(
        one_error(&fake("uint32", "[1]", "[-1]")),
        "t.json: $.inputs.input.data[0]: value -1 is outside UINT32's range [0, 4294967295]"
    );
    assert_eq!(
        one_error(&fake("float32", "[1]", "[1e39]")),
        "t.json: $.inputs.input.data[0]: value 1e+39 is outside FLOAT32's range (write \"Infinity\" or \"-Infinity\" for an infinity)"
    );
    assert!(one_error(&fake("float16", "[1]", "[-65520]"))
        .starts_with("t.json: $.inputs.input.data[0]: value -65520 is outside FLOAT16's range"));
    assert!(one_error(&fake("float64", "[1]", "[1e400]"))
        .starts_with("t.json: $.inputs.input.data[0]: value 1e+400 is outside FLOAT64's range"));
}

#[test]
fn values_of_the_wrong_kind() {
    assert_eq!(
        one_error(&fake("int32", "[1]", "[1.0]")),
        "t.json: $.inputs.input.data[0]: expected an integer, got number 1.0"
    );
    assert_eq!(
        one_error(&fake("int32", "[1]", "[\"7\"]")),
        "t.json: $.inputs.input.data[0]: expected an integer, got string \"7\""
    );
    assert_eq!(
        one_error(&fake("float32", "[1]", "[\"nan\"]")),
        "t.json: $.inputs.input.data[0]: expected a number, \"NaN\", \"Infinity\" or \"-Infinity\", got string \"nan\""
    );
    assert_eq!(
        one_error(&fake("float32", "[2]", "[[1], 2]")),
        "t.json: $.inputs.input.data[0]: expected a number, \"NaN\", \"Infinity\" or \"-Infinity\", got an array"
    );
    assert_eq!(
        one_error(&fake("float32", "[1]", "{}")),
        "t.json: $.inputs.input.data: expected an array of values in row-major order, got an object"
    );
}

#[test]
fn bad_values_are_all_reported_up_to_a_limit() {
    let data: Vec<String> = (0..20).map(|i| (300 + i).to_string()).collect();
    let text = fake("uint8", "[20]", &format!("[{}]", data.join(", ")));
    let errs = parse(&text).unwrap_err();
    assert_eq!(errs.errors.len(), 9);
    assert_eq!(
        errs.errors[8].to_string(),
        "t.json: $.inputs.input.data: 12 more bad values not shown"
    );
}

#[test]
fn missing_and_unknown_tensors() {
    let text = r#"{"name": "p", "op": "Pair",
        "inputs": {"first": {"dtype": "int32", "shape": [1], "data": [1]}},
        "outputs": {"low": {"dtype": "int32", "shape": [1]}, "hihg": {"dtype": "int32", "shape": [1]}}}"#;
    let errs = parse(text).unwrap_err();
    let messages: Vec<String> = errs.errors.iter().map(|e| e.to_string()).collect();
    assert_eq!(
        messages,
        [
            "t.json: $.inputs: missing input tensor `second`",
            "t.json: $.outputs.hihg: no output tensor `hihg`; did you mean `high`?",
            "t.json: $.outputs: missing output tensor `high`",
        ]
    );
    let text = r#"{"name": "p", "op": "Pair", "inputs": {}, "outputs": {}}"#;
    let errs = parse(text).unwrap_err();
    assert_eq!(
        errs.to_string(),
        "t.json: $.inputs: missing input tensors `first`, `second`\n\
         t.json: $.outputs: missing output tensors `low`, `high`"
    );
    let text = fake("uint8", "[1]", "[1]").replace("\"data\": [1]", "\"datum\": [1]");
    let errs = parse(&text).unwrap_err();
    let messages: Vec<String> = errs.errors.iter().map(|e| e.to_string()).collect();
    assert_eq!(
        messages,
        [
            "t.json: $.inputs.input.datum: unknown tensor key `datum`; did you mean `data`?",
            "t.json: $.inputs.input: missing `data`",
        ]
    );
}

#[test]
fn missing_keys_of_a_case() {
    let errs = parse(r#"{"op": "Fake"}"#).unwrap_err();
    assert_eq!(
        errs.to_string(),
        "t.json: $: missing `name`\n\
         t.json: $: missing attribute `mode` (Mode)\n\
         t.json: $: missing `inputs`\n\
         t.json: $: missing `outputs`"
    );
    let errs = parse(r#"[{"name": 3, "inputs": [], "outputs": {"output": 1}}]"#).unwrap_err();
    assert_eq!(
        errs.to_string(),
        "t.json: $[0].name: expected a string, got number 3\n\
         t.json: $[0]: missing `op`\n\
         t.json: $[0].inputs: expected an object of tensors by name, got an array\n\
         t.json: $[0].outputs.output: expected a tensor object {dtype, shape, data}, got number 1"
    );
}

#[test]
fn bad_attributes_level_and_expectation() {
    let base = fake("uint8", "[1]", "[1]");
    let with = |from: &str, to: &str| base.replacen(from, to, 1);
    assert_eq!(
        one_error(&with(
            r#""mode": "copy""#,
            r#""mode": "copy", "axes": [0, 1.5]"#
        )),
        "t.json: $.attributes.axes[1]: expected an integer, got number 1.5"
    );
    assert_eq!(
        one_error(&with(r#""mode": "copy""#, r#""mode": null"#)),
        "t.json: $.attributes.mode: expected a number, a list of integers, a boolean or a string, got null"
    );
    assert_eq!(
        one_error(&with(r#""mode": "copy""#, r#""mode": "copy", "n": 1e3"#)),
        "t.json: $.attributes.n: `n` is an integer, got number 1000"
    );
    assert_eq!(
        one_error(&with(r#""name": "c""#, r#""name": "c", "feature_level": "3.7""#)),
        "t.json: $.feature_level: unknown feature level `3.7`; known: 1.0, 2.0, 2.1, 3.0, 3.1, 4.0, 4.1, 5.0, 5.1, 5.2, 6.0"
    );
    let c = parse(&with(
        r#""name": "c""#,
        r#""name": "c", "feature_level": 4.1"#,
    ))
    .unwrap();
    assert_eq!(c[0].feature_level, Some(FeatureLevel::FL4_1));
    assert_eq!(
        one_error(&with(
            r#""name": "c""#,
            r#""name": "c", "expect_error": "crash""#
        )),
        "t.json: $.expect_error: expected \"validation\", \"index\" or \"empty_reduction\", got string \"crash\""
    );
    assert_eq!(
        one_error(&with(
            r#""name": "c""#,
            r#""name": "c", "expect_error": "index", "expect_message": "Axis""#
        )),
        "t.json: $.expect_message: `expect_message` needs `expect_error: \"validation\"`"
    );
    assert_eq!(
        one_error(&with(
            r#""name": "c""#,
            r#""name": "c", "expect_error": "validation", "expect_message": 3"#
        )),
        "t.json: $.expect_message: expected a string, got number 3"
    );
    let c = parse(&with(
        r#""name": "c""#,
        r#""name": "c", "expect_error": "validation", "expect_message": "Axis""#,
    ))
    .unwrap();
    assert_eq!(c[0].expect_message.as_deref(), Some("Axis"));
    let text = with(r#""name": "c""#, r#""name": "c", "expect_error": "index""#)
        .replace(r#""shape": [1]}"#, r#""shape": [1], "data": [1]}"#);
    assert_eq!(
        one_error(&text),
        "t.json: $.outputs.output.data: a case that expects a `index` error cannot give expected data"
    );
    assert_eq!(
        one_error(&with("\"c\"", "\"\"")),
        "t.json: $.name: `name` is empty"
    );
}

#[test]
fn attributes_are_checked_against_the_declaration() {
    let base = fake("uint8", "[1]", "[1]");
    let attrs = |a: &str| base.replacen(r#""mode": "copy""#, a, 1);
    assert_eq!(
        one_error(&attrs(r#""mode": "copy", "axis": [0]"#)),
        "t.json: $.attributes.axis: Fake has no attribute `axis`; did you mean `axes`?"
    );
    assert_eq!(
        one_error(&attrs(r#""mode": "copy", "colour": 1"#)),
        "t.json: $.attributes.colour: Fake has no attribute `colour`; its attributes are `mode`, `axes`, `empty`, `keep`, `count`, `n`, `size`"
    );
    assert_eq!(
        one_error(&attrs(r#""mode": "copy", "axes": 0"#)),
        "t.json: $.attributes.axes: `axes` is a list of integers, got integer 0"
    );
    assert_eq!(
        one_error(&attrs(r#""mode": "copy", "keep": 2"#)),
        "t.json: $.attributes.keep: `keep` is a boolean or 0 or 1, got 2"
    );
    assert_eq!(
        one_error(&attrs(r#""mode": "copy", "keep": 1.0"#)),
        "t.json: $.attributes.keep: `keep` is a boolean, got number 1"
    );
    assert_eq!(
        one_error(&attrs(r#""mode": true"#)),
        "t.json: $.attributes.mode: `mode` is a string, got boolean true"
    );
    assert_eq!(
        one_error(&attrs(r#""mode": "copy", "size": -1"#)),
        "t.json: $.attributes.size: `size` is unsigned, got -1"
    );
    assert_eq!(
        one_error(&attrs(r#""mode": "copy", "empty": [1, -2]"#)),
        "t.json: $.attributes.empty[1]: `empty` is unsigned, got -2"
    );
    assert_eq!(
        one_error(&attrs(r#""mode": "cpy""#)),
        "t.json: $.attributes.mode: `mode` is one of `COPY`, `PLUS_ONE`, `INDEX`, `UNSUPPORTED`, `DEVICE`, `PANIC`, `INVALID`, `REJECT`, `BAD_BUILD`, got \"cpy\"; did you mean `COPY`?"
    );
    // Enum members match without regard to case, and are passed on as written.
    let c = parse(&attrs(r#""mode": "Copy""#)).unwrap();
    assert_eq!(c[0].attributes["mode"], AttrValue::Enum("Copy".into()));
}

#[test]
fn bool_attributes_read_0_and_1_as_the_readme_documents() {
    let base = fake("uint8", "[1]", "[1]");
    for (written, read) in [("1", true), ("0", false), ("true", true), ("false", false)] {
        let text = base.replacen(
            r#""mode": "copy""#,
            &format!(r#""mode": "copy", "keep": {written}"#),
            1,
        );
        let c = parse(&text).unwrap_or_else(|e| panic!("{written}: {e}"));
        assert_eq!(c[0].attributes["keep"], AttrValue::Bool(read), "{written}");
    }
}

#[test]
fn missing_attributes() {
    let base = fake("uint8", "[1]", "[1]");
    assert_eq!(
        one_error(&base.replacen(r#""mode": "copy""#, r#""keep": true"#, 1)),
        "t.json: $.attributes: missing attribute `mode` (Mode)"
    );
    assert_eq!(
        one_error(&base.replacen(r#""attributes": {"mode": "copy"},"#, "", 1)),
        "t.json: $: missing attribute `mode` (Mode)"
    );
    // A malformed attribute is reported once, not also as missing.
    assert_eq!(
        one_error(&base.replacen(r#""mode": "copy""#, r#""mode": null"#, 1)),
        "t.json: $.attributes.mode: expected a number, a list of integers, a boolean or a string, got null"
    );
}

#[test]
fn odd_keys_are_quoted_in_paths() {
    let text = r#"{"name": "p", "op": "Pair",
        "inputs": {"first": {"dtype": "int32", "shape": [1], "data": [1]},
                   "second": {"dtype": "int32", "shape": [1], "data": [1]},
                   "a b": {}},
        "outputs": {"low": {"dtype": "int32", "shape": [1]}, "high": {"dtype": "int32", "shape": [1]}}}"#;
    assert_eq!(
        one_error(text),
        "t.json: $.inputs[\"a b\"]: no input tensor `a b`; the inputs are `first`, `second`"
    );
}

#[test]
fn errors_of_several_cases_are_reported_together() {
    let text = format!(
        "[{}, {}, {}]",
        fake("uint8", "[1]", "[256]"),
        fake("uint8", "[1]", "[1]"),
        fake("int4", "[1]", "[1]")
    );
    let errs = parse(&text).unwrap_err();
    let locations: Vec<&str> = errs.errors.iter().map(|e| e.location.as_str()).collect();
    assert_eq!(
        locations,
        [
            "$[0].inputs.input.data[0]",
            "$[2].inputs.input.dtype",
            "$[2].outputs.output.dtype"
        ]
    );
}

#[test]
fn to_json_reads_back_as_the_same_case() {
    let text = r#"[{"name": "r\"t", "op": "Fake", "feature_level": "4.1",
        "attributes": {"mode": "copy", "axes": [-1, 2], "keep": false, "n": -170141183460469231731687303715884105728},
        "inputs": {"input": {"dtype": "float32", "shape": [2, 4],
            "data": [0.1, -0.0, "NaN", "Infinity", "-Infinity", 1e-40, 3.4028235e38, 16777216]}},
        "outputs": {"output": {"dtype": "float32", "shape": [2, 4]}}},
      {"name": "h", "op": "Fake", "attributes": {"mode": "copy"},
        "inputs": {"input": {"dtype": "float16", "shape": [5], "data": [0.1, 65504, 6e-8, -0, 1e-5]}},
        "outputs": {"output": {"dtype": "float16", "shape": [5]}}},
      {"name": "i", "op": "Pair",
        "inputs": {"first": {"dtype": "uint64", "shape": [2], "data": [18446744073709551615, 0]},
                   "second": {"dtype": "int64", "shape": [1, 1], "data": [-9223372036854775808]}},
        "outputs": {"low": {"dtype": "uint64", "shape": [2]}, "high": {"dtype": "int64", "shape": [1, 1]}}},
      {"name": "d", "op": "Fake", "attributes": {"mode": "copy"},
        "inputs": {"input": {"dtype": "float64", "shape": [3], "data": [1e300, 5e-324, -1.7976931348623157e308]}},
        "outputs": {"output": {"dtype": "float64", "shape": [3]}}}
    ]"#;
    for case in parse(text).unwrap() {
        let produced: Vec<HostTensor> = case.inputs.iter().map(|i| i.tensor.clone()).collect();
        let json = case.to_json(Some(&produced), &[("backend", "cpu")]);
        let back = parse(&json).unwrap_or_else(|e| panic!("{e}\n{json}"));
        let back = &back[0];
        assert_eq!(back.name, case.name);
        assert_eq!(back.feature_level, case.feature_level);
        assert_eq!(back.attributes, case.attributes);
        assert_eq!(back.inputs, case.inputs, "{json}");
        for (o, p) in back.outputs.iter().zip(&produced) {
            assert_eq!(o.expected.as_ref(), Some(p), "{json}");
        }
        let json = case.to_json(None, &[]);
        let back = parse(&json).unwrap();
        assert!(back[0].outputs.iter().all(|o| o.expected.is_none()));
    }
}

/// The repository's case files are well formed for the real catalog.
#[test]
fn repository_case_files_parse() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the workspace root")
        .join("tests/cases");
    let mut files = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "json") {
            continue;
        }
        files += 1;
        let cases = read_cases(&path, ops::catalog()).unwrap_or_else(|e| panic!("{e}"));
        assert!(!cases.is_empty(), "{}", path.display());
        let mut names: Vec<&str> = cases.iter().map(|c| c.name.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(
            names.len(),
            cases.len(),
            "case names are unique in {}",
            path.display()
        );
    }
    assert!(files >= 2);
}
