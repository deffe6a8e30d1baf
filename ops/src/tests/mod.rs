//! The command's unit tests over its modules: the case reader, the runner
//! and the fuzzer's case files, beside the integration tests in `ops/tests/`
//! that drive the built `ops` binary.

// The fake catalog: some tests use only part of it.
#[allow(dead_code)]
mod common;

mod case_reader;
mod conformance;
mod fuzz_files;
mod hostile;
mod never_panics;
mod onnx_cases;
mod runner;
mod variadic;
