//! The external ONNX conformance cases, when this checkout has them beside
//! it (`../shared/conformance/cases/*.json`, not part of the repository):
//! every case whose operator the catalog's `onnx` namespace has must pass
//! on the CPU reference and the GPU. Cases of other operators are counted
//! and left out; without the folder the test runs nothing and passes.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::case::onnx::find_onnx_operator;
use crate::case::read_cases;
use crate::runner::{run_case, CpuExecutor, Executor, GpuExecutor, Outcome};

fn cases_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/conformance/cases")
}

#[test]
fn onnx_conformance_cases_pass_on_both_backends() {
    let dir = cases_dir();
    let Ok(entries) = std::fs::read_dir(&dir) else {
        println!("no conformance cases at {}: nothing run", dir.display());
        return;
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    let catalog = ops::catalog();
    let gpu = ops_gpu::shared().unwrap_or_else(|e| panic!("GPU tests need an adapter: {e}"));
    let gpu = GpuExecutor(gpu);
    let executors: [&dyn Executor; 2] = [&CpuExecutor, &gpu];

    let mut ran: BTreeMap<String, usize> = BTreeMap::new();
    let mut left_out: BTreeMap<String, usize> = BTreeMap::new();
    let mut failures = Vec::new();
    for path in &files {
        let text = std::fs::read(path).unwrap();
        let json: serde_json::Value =
            serde_json::from_slice(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let Some(op) = json.get("op").and_then(|v| v.as_str()) else {
            continue;
        };
        if find_onnx_operator(catalog, op).is_none() {
            *left_out.entry(op.to_owned()).or_default() += 1;
            continue;
        }
        let cases = match read_cases(path, catalog) {
            Ok(cases) => cases,
            Err(e) => {
                failures.push(e.to_string());
                continue;
            }
        };
        for case in &cases {
            *ran.entry(op.to_owned()).or_default() += 1;
            for report in run_case(case, &executors) {
                if report.outcome != Outcome::Pass {
                    failures.push(format!("{}: {report}", path.display()));
                }
            }
        }
    }
    let total: usize = ran.values().sum();
    println!(
        "ran {total} ONNX conformance cases on cpu and gpu: {ran:?}; left out (not in the catalog): {left_out:?}"
    );
    assert!(
        failures.is_empty(),
        "{} of {total} cases failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
