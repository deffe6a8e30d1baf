//! `ops fuzz`: the command's arguments, exit statuses, summary and coverage
//! table. (The case files it writes for failures are tested beside the
//! writer, in the binary's unit tests: `src/tests/fuzz_files.rs`.)

use std::process::Command;

fn ops(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_ops"))
        .args(args)
        .env_remove("CLICOLOR_FORCE")
        .output()
        .expect("the ops binary runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_short_cpu_run_passes_and_prints_coverage() {
    let dir = std::env::temp_dir().join(format!("ops-fuzz-cli-{}", std::process::id()));
    let args = [
        "fuzz",
        "--op",
        "argmin",
        "--op",
        "ScatterElements",
        "--cases",
        "6",
        "--seed",
        "3",
        "--backend",
        "cpu",
        "--out",
        dir.to_str().unwrap(),
    ];
    // By default, a summary.
    let (code, out, err) = ops(&args);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(err.contains("with seed 3"), "{err}");
    assert!(err.contains("fuzzing ArgMin, Scatter with seed 3"), "{err}");
    assert!(err.ends_with("ops fuzz: no failures (seed 3)\n"), "{err}");
    assert!(
        out.starts_with("2 operators: 12 valid cases ("),
        "totals over the operators: {out}"
    );
    assert!(out.contains("\ncoverage: "), "{out}");
    assert!(out.contains("`--coverage` prints the table"), "{out}");
    assert!(!out.contains("r0 "), "no table: {out}");
    assert!(
        !err.contains("ArgMin: 6 valid cases"),
        "no per-operator lines: {err}"
    );

    // With --coverage, per operator its counts and table too.
    let mut with_table = args.to_vec();
    with_table.push("--coverage");
    let (code, out, err) = ops(&with_table);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(err.contains("ArgMin: 6 valid cases"), "{err}");
    assert!(err.contains("Scatter: 6 valid cases"), "{err}");
    assert!(!err.contains("ArgMax"), "only the named operators: {err}");
    assert!(out.starts_with("coverage"), "{out}");
    assert!(out.contains("f32 -> i64") || out.contains("-> "), "{out}");
    assert!(out.contains("cells hit"), "{out}");
    assert!(out.contains("\n2 operators: 12 valid cases ("), "{out}");
    assert!(!dir.exists(), "no failure, no case file");
}

/// The default output of a run over the whole catalog is read at a
/// glance: a handful of lines, whatever the number of operators (170 when
/// this was written, about 6,000 lines before the summary), with no
/// colour when piped.
#[test]
fn the_whole_catalog_is_summed_up_in_a_few_lines() {
    let (code, out, err) = ops(&["fuzz", "--cases", "5", "--seed", "1"]);
    assert_eq!(code, 0, "{out}\n{err}");
    let lines = out.lines().count() + err.lines().count();
    assert!(lines < 30, "{lines} lines:\n{out}\n{err}");
    let n = ops::catalog().len();
    assert!(
        err.contains(&format!("fuzzing the catalog's {n} operators with seed 1")),
        "{err}"
    );
    assert!(
        out.starts_with(&format!("{n} operators: {} valid cases", 5 * n)),
        "{out}"
    );
    assert!(
        !out.contains('\x1b') && !err.contains('\x1b'),
        "{out}\n{err}"
    );
}

#[test]
fn bad_arguments_exit_2() {
    let (code, _, err) = ops(&["fuzz", "--op", "NoSuchOp", "--cases", "1"]);
    assert_eq!(code, 2);
    assert!(err.contains("no operator `NoSuchOp`"), "{err}");
    let (code, _, err) = ops(&["fuzz", "--cases", "1", "--time", "2"]);
    assert_eq!(code, 2, "--cases and --time conflict: {err}");
    let (code, _, err) = ops(&["fuzz", "--time", "-1"]);
    assert_eq!(code, 2, "{err}");
}

#[test]
fn a_timed_run_stops() {
    let t = std::time::Instant::now();
    let (code, out, err) = ops(&[
        "fuzz",
        "--op",
        "ReduceMin",
        "--time",
        "1",
        "--backend",
        "cpu",
    ]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(t.elapsed().as_secs() < 30, "{:?}", t.elapsed());
    assert!(err.contains("fuzzing ReduceMin with seed"), "{err}");
    assert!(out.starts_with("1 operator: "), "{out}");
}

#[test]
fn zero_cases_run_no_case() {
    let (code, out, err) = ops(&[
        "fuzz",
        "--op",
        "ArgMin",
        "--op",
        "Scatter",
        "--cases",
        "0",
        "--seed",
        "5",
        "--backend",
        "cpu",
        "--coverage",
    ]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.contains("\n2 operators: 0 valid cases"), "{out}");
    for op in ["ArgMin", "Scatter"] {
        let line = err
            .lines()
            .find(|l| l.starts_with(&format!("{op}: ")))
            .unwrap_or_else(|| panic!("no summary of {op}: {err}"));
        assert!(line.starts_with(&format!("{op}: 0 valid cases")), "{line}");
        assert!(line.contains(" 0 invalid cases"), "{line}");
    }
}

/// The number just before `what` in `line` (`"12 GPU plan variants run"`).
fn count_before(line: &str, what: &str) -> u64 {
    let head = &line[..line
        .find(what)
        .unwrap_or_else(|| panic!("no `{what}`: {line}"))];
    head.trim_end()
        .rsplit(|c: char| !c.is_ascii_digit())
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no count before `{what}`: {line}"))
}

#[test]
fn every_plan_variant_runs_with_variants_all() {
    let dir = std::env::temp_dir().join(format!("ops-fuzz-variants-{}", std::process::id()));
    let (code, out, err) = ops(&[
        "fuzz",
        "--op",
        "ArgMax",
        "--op",
        "GatherND1",
        "--op",
        "Scatter",
        "--cases",
        "6",
        "--seed",
        "11",
        "--backend",
        "gpu",
        "--variants",
        "all",
        "--out",
        dir.to_str().unwrap(),
        "--coverage",
    ]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(err.contains("every GPU plan variant"), "{err}");
    assert!(
        out.contains(" GPU plan variants run, "),
        "in the totals: {out}"
    );
    for op in ["ArgMax", "GatherND1", "Scatter"] {
        let line = err
            .lines()
            .find(|l| l.starts_with(&format!("{op}: ")))
            .unwrap_or_else(|| panic!("no summary of {op}: {err}"));
        // Every valid case runs at least one plan, most run several (a
        // case may fail before any plan runs, as an empty reduction does).
        let cases = count_before(line, "valid cases");
        let variants = count_before(line, "GPU plan variants run");
        assert!(variants >= cases, "{line}");
    }
    // Without `--variants all`, no variant count.
    let (code, out, err) = ops(&[
        "fuzz",
        "--op",
        "ArgMax",
        "--cases",
        "2",
        "--seed",
        "11",
        "--backend",
        "cpu",
        "--coverage",
    ]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(!err.contains("plan variants run"), "{err}");
    assert!(!out.contains("plan variants run"), "{out}");
}
