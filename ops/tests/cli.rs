//! The `ops` command, end to end.
//!
//! The repository's case files (`tests/cases/*.json`) must pass on the CPU
//! reference and, where there is an adapter, on the GPU.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn ops(args: &[&str]) -> Output {
    ops_with_env(args, &[])
}

/// `ops args...` with the environment variables `env` set (and the colour
/// variables of the caller's environment unset: output is piped, so plain).
fn ops_with_env(args: &[&str], env: &[(&str, &str)]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ops"))
        .args(args)
        .env_remove("NO_COLOR")
        .env_remove("CLICOLOR")
        .env_remove("CLICOLOR_FORCE")
        .envs(env.iter().copied())
        .output()
        .expect("the ops binary runs")
}

/// `ops run` with `options` over every repository case file.
fn run_repository_cases(options: &[&str], env: &[(&str, &str)]) -> Output {
    let files: Vec<String> = repository_case_files()
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    assert!(!files.is_empty());
    let mut args = vec!["run"];
    args.extend_from_slice(options);
    args.extend(files.iter().map(String::as_str));
    ops_with_env(&args, env)
}

fn show(out: &Output) -> String {
    format!(
        "status {:?}\n--- stdout\n{}--- stderr\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn repository_case_files() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the workspace root")
        .join("tests/cases");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("tests/cases exists")
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    files
}

fn temp_file(name: &str, text: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("ops-cli-tests");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn repository_cases_pass_on_the_cpu() {
    let out = run_repository_cases(&["--backend", "cpu"], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout
            .lines()
            .any(|l| l == "PASS argmin-seed-columns [cpu]"),
        "{}",
        show(&out)
    );
    assert!(
        stdout
            .lines()
            .last()
            .is_some_and(|l| l.ends_with(" passed, 0 failed")),
        "{}",
        show(&out)
    );
}

/// With the default `--backend all`, the GPU runs too when there is an
/// adapter; without one the command says so and runs the CPU alone.
#[test]
fn repository_cases_pass_on_all_backends() {
    let out = run_repository_cases(&[], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    if stdout.starts_with("gpu: ") {
        assert!(
            stdout
                .lines()
                .any(|l| l == "PASS argmin-seed-columns [gpu]"),
            "{}",
            show(&out)
        );
    } else {
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("running the CPU backend only"),
            "{}",
            show(&out)
        );
    }
}

/// `OPS_PLANS=hardware` runs the plans shaped for a GPU on whatever
/// adapter this is (lavapipe in CI): every case still passes, and the
/// `gpu:` line says which plans ran. A value it does not know is an error.
#[test]
fn repository_cases_pass_with_hardware_plans() {
    let out = run_repository_cases(&["--backend", "gpu"], &[("OPS_PLANS", "hardware")]);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout
            .lines()
            .next()
            .is_some_and(|l| l.starts_with("gpu: ") && l.ends_with(", hardware plans")),
        "{}",
        show(&out)
    );
    assert!(
        stdout
            .lines()
            .any(|l| l == "PASS argmin-seed-columns [gpu]"),
        "{}",
        show(&out)
    );

    let out = run_repository_cases(&["--backend", "gpu"], &[("OPS_PLANS", "fast")]);
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("OPS_PLANS must be `software`, `hardware` or `auto`, got `fast`"),
        "{}",
        show(&out)
    );
}

#[test]
fn malformed_case_file_exits_2_naming_the_file() {
    let path = temp_file("malformed.json", "[{\"name\": \"x\", }]");
    let out = ops(&["run", "--backend", "cpu", &path.display().to_string()]);
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!(
            "{}: line 1, column 16: malformed JSON",
            path.display()
        )),
        "{}",
        show(&out)
    );
    assert!(String::from_utf8_lossy(&out.stdout).ends_with("0 passed, 0 failed, 1 error\n"));
}

#[test]
fn unknown_operator_exits_2() {
    let path = temp_file(
        "unknown-op.json",
        r#"{"name": "x", "op": "NoSuchOperator", "inputs": {}, "outputs": {}}"#,
    );
    let out = ops(&["run", "--backend", "cpu", &path.display().to_string()]);
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!(
            "{}: $.op: unknown operator `NoSuchOperator`",
            path.display()
        )),
        "{}",
        show(&out)
    );
}

#[test]
fn missing_file_exits_2() {
    let out = ops(&["run", "--backend", "cpu", "/nonexistent/case.json"]);
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    assert!(String::from_utf8_lossy(&out.stderr)
        .contains("/nonexistent/case.json: cannot read the file"));
}

#[test]
fn usage_errors_exit_2() {
    assert_eq!(ops(&["run"]).status.code(), Some(2));
    assert_eq!(
        ops(&["run", "--backend", "tpu", "x.json"]).status.code(),
        Some(2)
    );
    assert_eq!(ops(&[]).status.code(), Some(2));
}

#[test]
fn json_output_is_an_array() {
    let path = temp_file("empty.json", "[]");
    let out = ops(&[
        "run",
        "--backend",
        "cpu",
        "--json",
        &path.display().to_string(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "[]\n");
    assert_eq!(String::from_utf8_lossy(&out.stderr), "0 passed, 0 failed\n");
}

#[test]
fn list_exits_0() {
    let out = ops(&["list"]);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
}

#[test]
fn list_json_is_the_catalog() {
    let out = ops(&["list", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("valid JSON");
    let entries = v.as_array().expect("an array");
    assert_eq!(entries.len(), ops::catalog().len());
    let add = entries
        .iter()
        .find(|e| e["name"] == "ElementWiseAdd")
        .expect("ElementWiseAdd listed");
    assert_eq!(add["inputs"][0]["seed"], "ATensor");
    assert_eq!(add["strided_inputs"], true);
    let argmin = entries.iter().find(|e| e["name"] == "ArgMin").unwrap();
    assert_eq!(argmin["strided_inputs"], false);
    assert!(argmin["attributes"]
        .as_array()
        .unwrap()
        .iter()
        .any(|a| a["seed"] == "Axes" && a["kind"] == "ints" && a["has_default"] == false));
}

#[test]
fn a_closed_pipe_ends_the_run_quietly() {
    use std::process::Stdio;
    let files: Vec<String> = repository_case_files()
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    let mut child = Command::new(env!("CARGO_BIN_EXE_ops"))
        .args(["run", "--backend", "cpu"])
        .args(&files)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the ops binary runs");
    // Read nothing: the reader of `ops run ... | head -0` goes away.
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    assert!(out.stderr.is_empty(), "{}", show(&out));
}

/// The ANSI escape byte that starts every colour.
const ESC: u8 = 0x1b;

/// Outcome words are coloured on a terminal only: piped output and output
/// with `NO_COLOR` set hold no escape; `CLICOLOR_FORCE=1` (what a terminal
/// gets) colours them, and `NO_COLOR` still wins over it.
#[test]
fn colour_only_where_wanted() {
    let file = repository_case_files()
        .into_iter()
        .find(|p| p.ends_with("argmin.json"))
        .expect("tests/cases/argmin.json");
    let file = file.to_str().unwrap();
    let plain = |out: &Output| !out.stdout.contains(&ESC) && !out.stderr.contains(&ESC);
    for env in [
        &[][..],
        &[("NO_COLOR", "1")][..],
        &[("NO_COLOR", "1"), ("CLICOLOR_FORCE", "1")][..],
    ] {
        let out = ops_with_env(&["run", file], env);
        assert_eq!(out.status.code(), Some(0), "{env:?}: {}", show(&out));
        assert!(plain(&out), "{env:?}: {}", show(&out));
        assert!(
            String::from_utf8_lossy(&out.stdout)
                .lines()
                .any(|l| l == "PASS argmin-seed-columns [cpu]"),
            "{}",
            show(&out)
        );
    }
    let out = ops_with_env(&["run", file], &[("CLICOLOR_FORCE", "1")]);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("\x1b[32mPASS\x1b[0m argmin-seed-columns [cpu]"),
        "{stdout}"
    );
    // The summary line stays plain for the tools that read it.
    assert!(
        stdout
            .lines()
            .last()
            .is_some_and(|l| l.ends_with(" passed, 0 failed") && !l.contains('\x1b')),
        "{stdout}"
    );
}
