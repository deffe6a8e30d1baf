//! The `ops` command: runs case files against the operator catalog on the
//! CPU reference and the GPU.
//!
//! ```text
//! ops run [--backend cpu|gpu|all] [--json] CASE.json...
//! ops list [--json]
//! ops fuzz [--op NAME]... [--cases N | --time SECONDS] [--seed S] [--backend cpu|gpu|all] [--coverage]
//! ops bench [--size 64MiB] [--runs N] [--smoke] [--json]
//! ```
//!
//! `ops run` exits 0 when every case passed, 1 when a case failed, and 2 for
//! bad input (an unreadable or malformed case file, one larger than
//! [`case::MAX_CASE_FILE_BYTES`], an unknown operator, a descriptor that
//! cannot be built, or `--backend gpu` without a GPU).
//!
//! Every operator call is held to the host limit (`OPS_HOST_LIMIT`, 4 GiB
//! by default; [`ops_core::host`]): an output past it fails that case with
//! `too large`; an `OPS_HOST_LIMIT` that does not parse exits 2.
//!
//! `run` and `fuzz` start with the adapter line `gpu: NAME [BACKEND, KIND],
//! CLASS plans` ([`term::gpu_line`]). Long work shows a progress bar on
//! stderr when it is a terminal; `PASS`, `FAIL`, `SKIP` and `ERROR` are
//! coloured on a terminal, never when the output is piped or `NO_COLOR` is
//! set.

use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, Subcommand, ValueEnum};
use ops_core::OpError;

mod bench;
mod case;
mod fuzz;
mod runner;
mod term;
#[cfg(test)]
mod tests;
mod variadic;

use runner::{CpuExecutor, Executor, Format, GpuExecutor, RunOptions};
use term::{Bar, Suspend};

/// Declared GPU tensor operators: run case files on the CPU reference and the GPU.
#[derive(Debug, Parser)]
#[command(name = "ops", version)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run case files and compare the outputs with the expected data.
    ///
    /// Prints one line per case and backend (`PASS name [cpu]`, `FAIL name
    /// [gpu]: output[1, 2]: got 3, expected 2`) and a summary line. Exits 0
    /// when every case passed, 1 when one failed, 2 for bad input.
    Run(RunArgs),
    /// List the operators of the catalog with their tensors.
    List(ListArgs),
    /// Fuzz the catalog with generated cases: GPU == CPU on valid
    /// descriptors, validation naming the broken rule on invalid ones.
    ///
    /// Shows progress on stderr and prints a short summary on stdout (with
    /// --coverage, the coverage table of every operator too); writes each
    /// failure, shrunk, as a case file `ops run` reproduces, and exits 1.
    Fuzz(fuzz::FuzzArgs),
    /// Measure the kernels' effective bandwidth beside a plain copy kernel,
    /// the per-call overhead of the API, and the CPU reference.
    ///
    /// Prints a table (or JSON with --json) and exits 1 when a GPU output
    /// differs from the CPU reference. See BENCHMARKS.md.
    Bench(bench::BenchArgs),
}

#[derive(Debug, clap::Args)]
struct RunArgs {
    /// Which backends to run on. With `all`, a missing GPU adapter is
    /// reported and the CPU backend runs alone.
    #[arg(long, value_enum, default_value_t = BackendChoice::All)]
    backend: BackendChoice,
    /// Print the produced outputs as case objects (a JSON array) instead of
    /// result lines; failures and the summary go to stderr.
    #[arg(long)]
    json: bool,
    /// Case files: a case object or an array of them each.
    #[arg(required = true, value_name = "CASE.json")]
    files: Vec<PathBuf>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum BackendChoice {
    /// The CPU reference only.
    Cpu,
    /// The GPU only.
    Gpu,
    /// Both.
    All,
}

fn main() -> ExitCode {
    quiet_vulkan_loader();
    let cli = Cli::parse();
    // A host limit that does not parse is a usage error, not the default.
    if let Ok(text) = std::env::var(ops_core::host::HOST_LIMIT_VAR)
        && let Err(e) = ops_core::host::parse_host_limit(&text)
    {
        eprintln!("ops: {e}");
        return ExitCode::from(2);
    }
    let result = match cli.command {
        Command::Run(args) => run(&args),
        Command::List(args) => list(&args),
        Command::Fuzz(args) => fuzz::main(&args).map(ExitCode::from),
        Command::Bench(args) => bench::main(&args).map(ExitCode::from),
    };
    match result {
        Ok(code) => code,
        // The reader went away (`ops run ... | head`): not bad input.
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("ops: {e}");
            ExitCode::from(2)
        }
    }
}

fn run(args: &RunArgs) -> io::Result<ExitCode> {
    // Outcome words in colour where the stream is a terminal and NO_COLOR
    // is unset; AutoStream drops the escapes elsewhere. Stderr stays
    // unlocked: the progress bar draws on it from its own thread.
    let mut out = anstream::AutoStream::auto(io::stdout().lock());
    let mut err = anstream::AutoStream::auto(io::stderr());

    let cpu = CpuExecutor;
    let mut gpu = None;
    if args.backend != BackendChoice::Cpu {
        match ops_gpu::shared() {
            Ok(context) => {
                let line = term::gpu_line(context);
                if args.json {
                    writeln!(err, "{line}")?;
                } else {
                    writeln!(out, "{line}")?;
                }
                gpu = Some(GpuExecutor(context));
            }
            Err(e) => {
                let text = match &e {
                    OpError::NoAdapter(m) => m.clone(),
                    other => format!("no usable GPU adapter: {other}"),
                };
                writeln!(err, "ops: {text}")?;
                if !text.contains(ops_gpu::NO_ADAPTER_HELP) {
                    writeln!(err, "ops: {}", ops_gpu::NO_ADAPTER_HELP)?;
                }
                if args.backend == BackendChoice::Gpu {
                    writeln!(err, "ops: `--backend gpu` needs a GPU adapter")?;
                    return Ok(ExitCode::from(2));
                }
                writeln!(err, "ops: running the CPU backend only")?;
            }
        }
    }
    let mut executors: Vec<&dyn Executor> = Vec::new();
    if args.backend != BackendChoice::Gpu {
        executors.push(&cpu);
    }
    if let Some(gpu) = &gpu {
        executors.push(gpu);
    }

    let options = RunOptions {
        format: if args.json {
            Format::Json
        } else {
            Format::Text
        },
        color: true,
    };
    // A run that lasts shows a progress bar on a terminal; the result lines
    // are written around it.
    let mut bar = Bar::new(args.files.len() as u64, "files", Duration::from_secs(1));
    let handle = bar.bar().clone();
    let mut out = Suspend::new(&handle, &mut out);
    let mut err = Suspend::new(&handle, &mut err);
    let summary = runner::run_files_with(
        &args.files,
        ops::catalog(),
        &executors,
        options,
        &mut out,
        &mut err,
        &mut |at| {
            let name = at.file.file_name().unwrap_or(at.file.as_os_str());
            let message = format!(
                "{} (case {} of {})",
                name.to_string_lossy(),
                at.cases_done,
                at.cases
            );
            bar.update(at.files_done as u64, message);
        },
    )?;
    drop(out);
    drop(err);
    bar.finish();
    Ok(ExitCode::from(summary.exit_code()))
}

/// Arguments of `ops list`.
#[derive(Debug, clap::Args)]
struct ListArgs {
    /// Print a JSON array: per operator (one entry per instance of a spec
    /// with optional or variadic tensors) its name, namespace, instance,
    /// aliases, introducing level, tensors and attributes.
    #[arg(long)]
    json: bool,
}

fn list(args: &ListArgs) -> io::Result<ExitCode> {
    let mut out = io::stdout().lock();
    let catalog = ops::catalog();
    if args.json {
        let entries: Vec<serde_json::Value> = catalog.iter().map(|i| list_entry(i)).collect();
        serde_json::to_writer_pretty(&mut out, &entries)?;
        writeln!(out)?;
        return Ok(ExitCode::SUCCESS);
    }
    if catalog.is_empty() {
        writeln!(out, "the operator catalog is empty")?;
    }
    for info in catalog {
        write!(out, "{}", info.instance_name())?;
        if !info.aliases.is_empty() {
            write!(out, " (also {})", info.aliases.join(", "))?;
        }
        if let Some(level) = info.introduced {
            write!(out, ", feature level {level}+")?;
        }
        writeln!(
            out,
            ": inputs {}; outputs {}",
            info.inputs.join(", "),
            info.outputs.join(", ")
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

/// One operator of `ops list --json`.
fn list_entry(info: &ops_core::OperatorInfo) -> serde_json::Value {
    use ops_core::AttrKind;
    let tensors = |output: bool| -> Vec<serde_json::Value> {
        info.tensors
            .iter()
            .filter(|t| t.output == output)
            .map(|t| serde_json::json!({ "name": t.name, "seed": t.seed, "host": t.host }))
            .collect()
    };
    let attrs: Vec<serde_json::Value> = info
        .attrs
        .iter()
        .map(|a| {
            let kind = match &a.kind {
                AttrKind::Int { .. } => "int".to_owned(),
                AttrKind::List { .. } => "ints".to_owned(),
                AttrKind::Bool => "bool".to_owned(),
                AttrKind::Float => "float".to_owned(),
                AttrKind::Number => "number".to_owned(),
                AttrKind::Enum(members) => format!("enum {}", members.join("|")),
            };
            serde_json::json!({ "name": a.name, "seed": a.seed, "kind": kind, "has_default": a.has_default })
        })
        .collect();
    serde_json::json!({
        "name": info.qualified_name(),
        "namespace": info.namespace,
        "instance": info.instance,
        "aliases": info.aliases,
        "introduced": info.introduced.map(|l| l.to_string()),
        "inputs": tensors(false),
        "outputs": tensors(true),
        "attributes": attrs,
        "strided_inputs": info.strided_inputs,
    })
}

/// Mesa's Vulkan drivers print "XDG_RUNTIME_DIR is invalid or not set" when
/// probing window-system support on a machine without a session (servers,
/// CI). Compute needs no window system: point the variable at the temporary
/// directory before any thread starts, when it is unset.
fn quiet_vulkan_loader() {
    if std::env::var_os("XDG_RUNTIME_DIR").is_none() {
        // SAFETY: called first thing in `main`, before any thread starts,
        // so nothing reads the environment concurrently.
        unsafe { std::env::set_var("XDG_RUNTIME_DIR", std::env::temp_dir()) };
    }
}
