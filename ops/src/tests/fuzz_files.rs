//! The case files `ops fuzz` writes for failures, which `ops run` must read
//! and run as the fuzzer ran them.

use ops_core::fuzz::proptest::strategy::{Strategy, ValueTree};
use ops_core::fuzz::proptest::test_runner::TestRunner;

use crate::case::read_cases;
use crate::fuzz::{valid_case_file, write_case_file};
use crate::runner::{run_case, CpuExecutor, Executor, GpuExecutor, Outcome};

// What `ops fuzz` writes for a failure must read back as the same call:
// for cases that do not fail, the written file passes on both backends.
// The catalog is checked in two interleaved halves, two tests that the
// harness runs side by side.

#[test]
fn fuzz_cases_written_as_case_files_pass_ops_run_even() {
    round_trips(0);
}

#[test]
fn fuzz_cases_written_as_case_files_pass_ops_run_odd() {
    round_trips(1);
}

/// 24 drawn cases of every other operator of the catalog, from `first`,
/// written as case files, read back and run on both backends.
fn round_trips(first: usize) {
    let gpu = ops_gpu::shared().unwrap_or_else(|e| panic!("GPU tests need an adapter: {e}"));
    let cpu = CpuExecutor;
    let gpu = GpuExecutor(gpu);
    let executors: [&dyn Executor; 2] = [&cpu, &gpu];
    let dir = std::env::temp_dir().join(format!("ops-fuzz-cases-{}-{first}", std::process::id()));
    for info in ops::catalog().iter().skip(first).step_by(2) {
        let strategy = ops_core::fuzz::valid_cases(info);
        let mut runner = TestRunner::deterministic();
        for k in 0..24 {
            let case = strategy.new_tree(&mut runner).unwrap().current();
            let op = info
                .qualified_name()
                .to_ascii_lowercase()
                .replace("::", "-");
            let name = format!("{op}-{k}");
            let file = valid_case_file(&case, &name, "");
            let path = write_case_file(&dir, &file, "round trip").unwrap();
            let read = read_cases(&path, ops::catalog())
                .unwrap_or_else(|e| panic!("{}: {e}\n{case:?}", path.display()));
            assert_eq!(read.len(), 1);
            for report in run_case(&read[0], &executors) {
                assert_eq!(
                    report.outcome,
                    Outcome::Pass,
                    "{report}\n{case:?}\n{}",
                    std::fs::read_to_string(&path).unwrap()
                );
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
