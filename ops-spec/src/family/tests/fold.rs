//! Fold specs through the spec compiler: what compiles and the
//! diagnostics of what does not.

/// A fold spec with `compute` replaced and `types` in its table.
fn spec(types: &str, attrs: &str, rules: &str, compute: &str) -> String {
    format!(
        "operator T {{
            input x: tensor \"X\"
            output y: tensor \"Y\"
            {attrs}
            rules {{
                {rules}
                shape y = [for d in 0..rank(x) if d != 0: x.sizes[d]] => \"y\";
            }}
            support {{ ranks 1..=4 {{ x: {types}; y: {types}; }} }}
            compute fold {{
                input: x  axes: [0]  output: y
                {compute}
            }}
        }}"
    )
}

/// The messages of the spec's errors (empty when it compiles).
fn errors(src: &str) -> Vec<String> {
    match crate::codegen::expand("t.op", src) {
        Ok(_) => Vec::new(),
        Err(f) => f.diagnostics.into_iter().map(|d| d.message).collect(),
    }
}

const SUM: &str = "identity: 0 map: x combine: a + b accuracy: ulp(n)";

#[test]
fn a_fold_compiles() {
    assert_eq!(
        errors(&spec("FLOAT32 INT64 BOOL", "", "", SUM)),
        Vec::<String>::new()
    );
    let scaled = "identity: 0 map: x combine: a + b finish: acc * s accuracy: ulp(n + 1)";
    let with_attr = spec("FLOAT32 FLOAT16", "attr s: f32 = 0.5 \"S\"", "", scaled);
    assert_eq!(errors(&with_attr), Vec::<String>::new());
}

#[test]
fn a_shift_lets_map_and_finish_read_m() {
    let lse = "identity: 0 shift: max map: exp(x - m) combine: a + b \
               finish: log(acc) + m accuracy: ulp(2 * n + 18)";
    assert_eq!(
        errors(&spec("FLOAT32 FLOAT16 FLOAT64", "", "", lse)),
        Vec::<String>::new()
    );
    let e = errors(&spec(
        "FLOAT32",
        "",
        "",
        "identity: 0 map: exp(x - m) combine: a + b accuracy: exact",
    ));
    assert_eq!(e, ["`map` cannot use `m`"]);
    let e = errors(&spec(
        "FLOAT32",
        "",
        "",
        "identity: 0 shift: max map: x combine: a + m accuracy: exact",
    ));
    assert_eq!(e, ["`combine` cannot use `m`"]);
    let e = errors(&spec(
        "FLOAT32",
        "",
        "",
        "identity: 0 shift: min map: x combine: a + b accuracy: exact",
    ));
    assert_eq!(e, ["`shift` is `max`"]);
    let e = errors(&spec(
        "FLOAT32 INT32",
        "",
        "",
        "identity: 0 shift: max map: x - m combine: a + b accuracy: exact",
    ));
    assert_eq!(
        e,
        ["INT32 cannot be folded: `shift: max` is for float types"]
    );
}

#[test]
fn arithmetic_a_type_lacks_is_an_error_at_its_row() {
    let e = errors(&spec(
        "FLOAT32 INT32",
        "",
        "",
        "identity: 0 map: x combine: a + b finish: sqrt(acc) accuracy: ulp(n)",
    ));
    assert_eq!(
        e,
        ["INT32 cannot be folded: `sqrt` is not defined on INT32"]
    );
    // FLOAT64 adds and takes square roots and exponentials on the GPU
    // (word pairs).
    assert_eq!(errors(&spec("FLOAT64", "", "", SUM)), Vec::<String>::new());
    let e = errors(&spec(
        "FLOAT64",
        "",
        "",
        "identity: 0 map: x combine: a + b finish: sqrt(acc) accuracy: ulp(n)",
    ));
    assert!(e.is_empty(), "FLOAT64 takes square roots: {e:?}");
    let e = errors(&spec(
        "FLOAT64",
        "",
        "",
        "identity: 0 map: x combine: a + b finish: exp(acc) accuracy: ulp(n)",
    ));
    assert!(e.is_empty(), "FLOAT64 takes exponentials: {e:?}");
    let e = errors(&spec(
        "INT64",
        "",
        "",
        "identity: 0 map: x combine: a / b accuracy: exact",
    ));
    assert!(e.is_empty(), "64-bit integers divide: {e:?}");
    let e = errors(&spec(
        "INT32",
        "attr s: f32 = 0.5 \"S\"",
        "",
        "identity: 0 map: x * s combine: a + b accuracy: exact",
    ));
    assert_eq!(
        e,
        ["INT32 cannot be folded: a float attribute has no INT32 value"]
    );
}

#[test]
fn names_and_types_are_checked() {
    let e = errors(&spec(
        "FLOAT32",
        "",
        "",
        "identity: x map: x combine: a + b accuracy: exact",
    ));
    assert_eq!(e, ["`identity` cannot use `x`"]);
    let e = errors(&spec(
        "FLOAT32",
        "",
        "",
        "identity: 0 map: y combine: a + b accuracy: exact",
    ));
    assert_eq!(e, ["unknown name `y` in `map`"]);
    let e = errors(&spec(
        "FLOAT32",
        "",
        "",
        "identity: 0 map: x combine: a < b accuracy: exact",
    ));
    assert_eq!(
        e,
        ["`combine` is BOOL, but the pattern needs a `T` (the folded tensor's data type)"]
    );
    let e = errors(&spec(
        "FLOAT32",
        "",
        "",
        "identity: 0 map: x combine: a + b accuracy: ulp(0.5)",
    ));
    assert_eq!(e, ["a decimal literal has no INT64 value"]);
    let e = errors(&spec(
        "FLOAT32",
        "",
        "",
        "identity: 0 map: x combine: a + b",
    ));
    assert_eq!(e, ["pattern `fold` needs parameter `accuracy`"]);
    let e = errors(&spec(
        "FLOAT32",
        "attr s: f32 = 0.5 \"S\"",
        "require s > 0 => \"s\";",
        SUM,
    ));
    assert!(
        e[0].starts_with("`s` is a float attribute: rules compute on integers"),
        "{e:?}"
    );
}

const ALL: &str = "FLOAT32 FLOAT16 INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16 UINT8 BOOL";

/// A fold whose `map` is `map` (max combine, exact).
fn cast_spec(types: &str, map: &str) -> String {
    spec(
        types,
        "",
        "",
        &format!("identity: lowest map: {map} combine: max(a, b) accuracy: exact"),
    )
}

#[test]
fn casts_compile_for_every_type() {
    for u in ALL.split(' ') {
        let e = errors(&cast_spec(ALL, &format!("cast<T>(cast<{u}>(x))")));
        assert_eq!(e, Vec::<String>::new(), "{u}");
    }
    // A count of nonzero elements; typed literals; BOOL conditions.
    for map in [
        "cast<T>(x != 0)",
        "cast<T>(cast<INT8>(x) + cast<INT8>(100))",
        "cast<T>(cast<FLOAT16>(0.1) * cast<FLOAT16>(x))",
        "if cast<BOOL>(x) { x } else { lowest }",
        "cast<T>(cast<UINT64>(18446744073709551615) > cast<UINT64>(x))",
    ] {
        assert_eq!(errors(&cast_spec(ALL, map)), Vec::<String>::new(), "{map}");
    }
}

#[test]
fn cast_mistakes_are_errors_at_the_expression() {
    assert_eq!(
        errors(&cast_spec("FLOAT32", "cast<FLAOT32>(x)")),
        ["unknown data type `FLAOT32`"]
    );
    assert_eq!(
        errors(&cast_spec(
            "FLOAT32",
            "cast<T>(cast<INT8>(x) + cast<FLOAT32>(x))"
        )),
        ["mismatched types: INT8 and FLOAT32"]
    );
    assert_eq!(
        errors(&cast_spec("FLOAT32", "cast<INT8>(x)")),
        ["`map` is INT8, but the pattern needs a `T` (the folded tensor's data type)"]
    );
    assert_eq!(
        errors(&cast_spec("FLOAT32", "cast<T>(cast<UINT8>(-1))")),
        ["integer literal -1 is out of UINT8's range [0, 255]"]
    );
    assert_eq!(
        errors(&cast_spec("FLOAT32", "cast<T>(cast<INT8>(x) * 300)")),
        ["integer literal 300 is out of INT8's range [-128, 127]"]
    );
    assert_eq!(
        errors(&cast_spec("FLOAT32", "cast<T>(cast<INT32>(0.5))")),
        ["a decimal literal has no INT32 value"]
    );
    assert_eq!(
        errors(&cast_spec("FLOAT32", "if cast<INT8>(x) { x } else { x }")),
        ["expected a boolean (a comparison or a BOOL), found INT8"]
    );
    // A cast written to FLOAT64 is refused at the cast (a literal or
    // attribute would reach the GPU as f32); `cast<T>` on a FLOAT64 row
    // runs from the bits.
    assert_eq!(
        errors(&cast_spec("FLOAT32 INT32", "cast<T>(cast<FLOAT64>(x))")),
        ["a cast to or from FLOAT64 cannot run on the GPU (core WebGPU has no f64)"]
    );
    assert_eq!(
        errors(&cast_spec("FLOAT32 FLOAT64", "cast<T>(cast<INT8>(x))")),
        Vec::<String>::new()
    );
    // Casts are arithmetic, not rules.
    let e = errors(&spec(
        "FLOAT32",
        "",
        "require cast<INT8>(1) > 0 => \"r\";",
        SUM,
    ));
    assert_eq!(e, ["casts belong in a pattern's arithmetic, not in rules"]);
}
