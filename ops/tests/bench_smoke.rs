//! `ops bench --smoke`: CI runs the benchmark at tiny sizes so that it
//! cannot rot. Nothing here asserts a time: only that every case runs, its
//! GPU output matches the CPU reference, and the report holds every figure.

use std::process::Command;

fn ops(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_ops"))
        .args(args)
        .output()
        .expect("the ops binary runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn smoke_json_report_holds_every_case() {
    let (code, out, err) = ops(&["bench", "--smoke", "--json"]);
    assert_eq!(code, 0, "stdout:\n{out}\nstderr:\n{err}");
    let report: serde_json::Value = serde_json::from_str(&out).expect("--json prints JSON");
    for key in ["adapter", "time_source", "copy", "copy_words", "small_call"] {
        assert!(report.get(key).is_some(), "no `{key}` in {report:#}");
    }
    assert!(report["copy"]["gbps"].as_f64().is_some_and(|g| g > 0.0));
    let cases = report["cases"].as_array().expect("cases");
    let count = |prefix: &str| {
        cases
            .iter()
            .filter(|c| c["name"].as_str().unwrap_or("").starts_with(prefix))
            .count()
    };
    // Two reductions x four axis placements x three data types, ArgMin
    // over the inner and middle axes of ragged rows and ReduceMin over the
    // first and last axes in each data type.
    assert_eq!(count("ArgMin"), 18);
    assert_eq!(count("ArgMin inner axis, ragged rows"), 3);
    assert_eq!(count("ArgMin middle axis, ragged rows"), 3);
    assert_eq!(count("ReduceMin"), 15);
    assert_eq!(count("ReduceMin first and last axes"), 3);
    assert_eq!(count("GatherND1"), 9);
    // Unique, colliding and random indices, square and wide.
    assert_eq!(count("Scatter "), 18);
    // The ONNX cases: element-wise operators, clips and concatenations in
    // FLOAT32 and FLOAT16, data movement in all three groups.
    assert_eq!(count("Add"), 4);
    assert_eq!(count("LeakyRelu"), 2);
    assert_eq!(count("Clip"), 2);
    assert_eq!(count("Fused scale-bias clip"), 2);
    assert_eq!(count("Concat"), 4);
    assert_eq!(count("Gather embedding rows"), 3);
    assert_eq!(count("GatherElements"), 3);
    assert_eq!(count("ScatterND"), 6);
    assert_eq!(count("Transpose"), 3);
    for c in cases {
        assert_eq!(c["matches_cpu"], true, "{c:#}");
        assert!(c["ratio_to_copy"].as_f64().is_some(), "{c:#}");
        assert!(c["cpu_gbps"].as_f64().is_some(), "{c:#}");
        assert!(!c["kernels"].as_array().unwrap().is_empty(), "{c:#}");
    }
    // Some reductions split over many workgroups and combine.
    assert!(cases.iter().any(|c| c["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .any(|k| k.as_str().unwrap().contains("reduce_combine"))));
    let small = &report["small_call"];
    assert_eq!(small["calls"], 3);
    assert!(small["overhead"].as_f64().is_some_and(|o| o > 0.0));
    // Every API call after the first hits the pipeline cache.
    let hits = |at: &str| small[at]["hits"].as_u64().unwrap();
    assert_eq!(hits("cache_after") - hits("cache_before"), 3);
    assert_eq!(
        small["cache_after"]["compiled"],
        small["cache_before"]["compiled"]
    );
}

#[test]
fn smoke_table_and_filter() {
    let (code, out, err) = ops(&["bench", "--smoke", "--filter", "rows", "--no-cpu"]);
    assert_eq!(code, 0, "stdout:\n{out}\nstderr:\n{err}");
    assert!(out.contains("copy kernel:"), "{out}");
    assert!(out.contains("copy kernel alongside the cases"), "{out}");
    assert!(out.contains("GatherND1 rows"), "{out}");
    assert!(!out.contains("ArgMin all axes"), "{out}");
    assert!(out.contains("small calls:"), "{out}");
    let (code, _, err) = ops(&["bench", "--size", "lots"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("not a byte size"), "{err}");
}
