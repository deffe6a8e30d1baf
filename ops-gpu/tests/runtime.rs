//! Runtime tests with small hand-written kernels.
//!
//! These run on whatever adapter `Context::new` picks (lavapipe on machines
//! without a GPU). Finding no adapter is a failure, never a skip.

use std::sync::Arc;

use ops_core::{
    Access, BufferRef, DataType, DeviceClass, FeatureLevel, GpuPlan, HostTensor, Kernel, OpArgs,
    OpError, Operator, OperatorInfo, OperatorType, OutputInit, Pass, TensorDesc, TensorInfo,
    ValidationError,
};
use ops_gpu::{shared, CacheStats, Context, ExecError, NO_ADAPTER_HELP};

use Access::{Read, ReadWrite};

fn ctx() -> &'static Context {
    shared().unwrap_or_else(|e| panic!("no GPU context: {e}"))
}

fn own_context() -> Context {
    Context::new().unwrap_or_else(|e| panic!("no GPU context: {e}"))
}

// out[i] = in[i] + params[0] for i < params[1].
static ADD: Kernel = Kernel::new(
    "test/add",
    r#"
@group(0) @binding(0) var<storage, read> params: array<u32>;
@group(0) @binding(1) var<storage, read> src: array<u32>;
@group(0) @binding(2) var<storage, read_write> dst: array<u32>;

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) li: u32) {
    let i = (wg.x + wg.y * nwg.x) * 64u + li;
    if (i >= params[1]) { return; }
    dst[i] = src[i] + params[0];
}
"#,
    "main",
    &[Read, Read, ReadWrite],
    64,
);

fn add_pass(n: u32, addend: u32) -> Pass {
    Pass {
        kernel: &ADD,
        buffers: vec![BufferRef::Params, BufferRef::Input(0), BufferRef::Output(0)],
        params: vec![addend, n],
        workgroups: u64::from(n).div_ceil(64),
    }
}

fn add_plan(n: u32, addend: u32) -> GpuPlan {
    GpuPlan {
        outputs: vec![OutputInit::Zero],
        scratch_bytes: vec![],
        passes: vec![add_pass(n, addend)],
        index_checks: vec![],
    }
}

// Index check params[1]: status[params[1]] = lowest i with idx[i] >= params[0].
static CHECK: Kernel = Kernel::new(
    "test/check",
    r#"
@group(0) @binding(0) var<storage, read> params: array<u32>;
@group(0) @binding(1) var<storage, read> idx: array<u32>;
@group(0) @binding(2) var<storage, read_write> status: array<atomic<u32>>;

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) li: u32) {
    let i = (wg.x + wg.y * nwg.x) * 64u + li;
    if (i >= params[2]) { return; }
    if (idx[i] >= params[0]) {
        atomicMin(&status[params[1]], i);
    }
}
"#,
    "main",
    &[Read, Read, ReadWrite],
    64,
);

fn check_pass(input: usize, n: u32, bound: u32, check: u32) -> Pass {
    Pass {
        kernel: &CHECK,
        buffers: vec![
            BufferRef::Params,
            BufferRef::Input(input),
            BufferRef::Status,
        ],
        params: vec![bound, check, n],
        workgroups: u64::from(n).div_ceil(64),
    }
}

// One thread per workgroup: out[i] = 2 * i + 1 for i < params[0].
static WIDE: Kernel = Kernel::new(
    "test/wide",
    r#"
@group(0) @binding(0) var<storage, read> params: array<u32>;
@group(0) @binding(1) var<storage, read_write> dst: array<u32>;

@compute @workgroup_size(1)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = wg.x + wg.y * nwg.x;
    if (i >= params[0]) { return; }
    dst[i] = 2u * i + 1u;
}
"#,
    "main",
    &[Read, ReadWrite],
    1,
);

// scratch[i] = 3 * in[i] for i < params[0].
static TO_SCRATCH: Kernel = Kernel::new(
    "test/to_scratch",
    r#"
@group(0) @binding(0) var<storage, read> params: array<u32>;
@group(0) @binding(1) var<storage, read> src: array<u32>;
@group(0) @binding(2) var<storage, read_write> scratch: array<u32>;

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) li: u32) {
    let i = (wg.x + wg.y * nwg.x) * 64u + li;
    if (i >= params[0]) { return; }
    scratch[i] = 3u * src[i];
}
"#,
    "main",
    &[Read, Read, ReadWrite],
    64,
);

// out[i] = scratch[i] + 1 for i < params[0].
static FROM_SCRATCH: Kernel = Kernel::new(
    "test/from_scratch",
    r#"
@group(0) @binding(0) var<storage, read> params: array<u32>;
@group(0) @binding(1) var<storage, read> scratch: array<u32>;
@group(0) @binding(2) var<storage, read_write> dst: array<u32>;

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) li: u32) {
    let i = (wg.x + wg.y * nwg.x) * 64u + li;
    if (i >= params[0]) { return; }
    dst[i] = scratch[i] + 1u;
}
"#,
    "main",
    &[Read, Read, ReadWrite],
    64,
);

// Adds params[0] to every word of dst whose index is even (in place).
static BUMP_EVEN: Kernel = Kernel::new(
    "test/bump_even",
    r#"
@group(0) @binding(0) var<storage, read> params: array<u32>;
@group(0) @binding(1) var<storage, read_write> dst: array<u32>;

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) li: u32) {
    let i = (wg.x + wg.y * nwg.x) * 64u + li;
    if (i >= arrayLength(&dst) || i % 2u != 0u) { return; }
    dst[i] = dst[i] + params[0];
}
"#,
    "main",
    &[Read, ReadWrite],
    64,
);

fn u32s(n: u32, f: impl Fn(u32) -> u32) -> HostTensor {
    let data: Vec<u32> = (0..n).map(f).collect();
    HostTensor::from_slice([n], &data).unwrap()
}

fn u32_desc(n: u32) -> TensorDesc {
    TensorDesc::new(DataType::Uint32, [n])
}

#[test]
fn finds_an_adapter_or_fails_with_help() {
    // Never skipped: without an adapter this fails, and the message says how to fix it.
    match shared() {
        Ok(c) => {
            let a = c.adapter();
            assert!(!a.name.is_empty());
            assert!(!a.backend.is_empty());
            assert_eq!(a.software, a.device_type == "Cpu");
        }
        Err(e) => {
            let msg = e.to_string();
            assert!(msg.contains(NO_ADAPTER_HELP), "{msg}");
            panic!("no GPU adapter: {msg}");
        }
    }
}

#[test]
fn no_adapter_help_says_how_to_fix() {
    assert!(NO_ADAPTER_HELP.contains("no GPU adapter"));
    assert!(NO_ADAPTER_HELP.contains("lavapipe"));
    assert!(NO_ADAPTER_HELP.contains("apt-get install mesa-vulkan-drivers"));
}

/// Runs test `name` of this binary in a child process with `env` set and
/// returns its combined output, asserting that it passed.
fn run_child(name: &str, env: &[(&str, &str)]) -> String {
    let exe = std::env::current_exe().unwrap();
    let mut cmd = std::process::Command::new(exe);
    cmd.args(["--exact", name, "--nocapture", "--test-threads=1"]);
    cmd.env("OPS_GPU_TEST_CHILD", "1");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "child test {name} failed:\n{text}");
    assert!(
        text.contains("1 passed"),
        "child test {name} did not run:\n{text}"
    );
    text
}

fn in_child() -> bool {
    std::env::var_os("OPS_GPU_TEST_CHILD").is_some()
}

#[test]
fn child_no_adapter() {
    if !in_child() {
        return;
    }
    match Context::new() {
        Err(OpError::NoAdapter(msg)) => {
            assert!(msg.contains(NO_ADAPTER_HELP), "{msg}");
            println!("CHILD-SAW-NO-ADAPTER");
        }
        other => panic!("expected NoAdapter, got {other:?}"),
    }
}

#[test]
fn no_adapter_is_an_error_with_help() {
    // wgpu finds no adapter when limited to a backend that is not compiled in.
    let text = run_child(
        "child_no_adapter",
        &[("WGPU_BACKEND", "noop"), ("OPS_ADAPTER", "")],
    );
    assert!(text.contains("CHILD-SAW-NO-ADAPTER"), "{text}");
}

#[test]
fn child_bad_ops_adapter() {
    if !in_child() {
        return;
    }
    match Context::new() {
        Err(OpError::InvalidArgument(msg)) => {
            assert!(msg.contains("OPS_ADAPTER"), "{msg}");
            println!("CHILD-SAW-BAD-OPS-ADAPTER");
        }
        other => panic!("expected InvalidArgument, got {other:?}"),
    }
}

#[test]
fn bad_ops_adapter_is_an_error() {
    let text = run_child("child_bad_ops_adapter", &[("OPS_ADAPTER", "quantum")]);
    assert!(text.contains("CHILD-SAW-BAD-OPS-ADAPTER"), "{text}");
}

#[test]
fn context_is_send_and_sync() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Context>();
    assert_send_sync::<ExecError>();
}

#[test]
fn adds_a_parameter() {
    let n = 1000;
    let input = u32s(n, |i| i * 7);
    let out = ctx()
        .execute(&add_plan(n, 5), &[&input], &[u32_desc(n)])
        .unwrap();
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].desc(), &u32_desc(n));
    let got = out[0].to_vec::<u32>().unwrap();
    let want: Vec<u32> = (0..n).map(|i| i * 7 + 5).collect();
    assert_eq!(got, want);
}

#[test]
fn zero_outputs_start_zero_and_empty_params_bind() {
    // Output 1 is never written; it must come back zero. A pass with no
    // parameter words still gets a one-word parameter buffer.
    let n = 100;
    let input = u32s(n, |i| i + 1);
    let plan = GpuPlan {
        outputs: vec![OutputInit::Zero, OutputInit::Zero],
        scratch_bytes: vec![],
        passes: vec![Pass {
            kernel: &BUMP_EVEN,
            buffers: vec![BufferRef::Params, BufferRef::Output(0)],
            params: vec![],
            workgroups: 2,
        }],
        index_checks: vec![],
    };
    let out = ctx()
        .execute(&plan, &[&input], &[u32_desc(n), u32_desc(n)])
        .unwrap();
    assert_eq!(out[0].to_vec::<u32>().unwrap(), vec![0; n as usize]);
    assert_eq!(out[1].to_vec::<u32>().unwrap(), vec![0; n as usize]);
}

#[test]
fn index_check_reports_lowest_position() {
    let n = 300;
    let ok = u32s(n, |i| i % 10);
    let bad = u32s(n, |i| {
        if i == 77 || i == 250 || i == 131 {
            10
        } else {
            i % 10
        }
    });
    let plan = |inputs: [usize; 2]| GpuPlan {
        outputs: vec![],
        scratch_bytes: vec![],
        passes: vec![
            check_pass(inputs[0], n, 10, 0),
            check_pass(inputs[1], n, 10, 1),
        ],
        index_checks: vec![0, 1],
    };
    // Both in range.
    let out = ctx().execute(&plan([0, 0]), &[&ok], &[]).unwrap();
    assert!(out.is_empty());
    // Check 1 fails at 77.
    let err = ctx().execute(&plan([0, 1]), &[&ok, &bad], &[]).unwrap_err();
    assert_eq!(
        err,
        ExecError::Index {
            check: 1,
            position: 77
        }
    );
    // Both fail: the lowest check wins.
    let err = ctx().execute(&plan([1, 1]), &[&ok, &bad], &[]).unwrap_err();
    assert_eq!(
        err,
        ExecError::Index {
            check: 0,
            position: 77
        }
    );
}

#[test]
fn index_error_is_reported_even_with_outputs() {
    let n = 64;
    let idx = u32s(n, |i| if i == 40 { 1000 } else { i });
    let plan = GpuPlan {
        outputs: vec![OutputInit::Zero],
        scratch_bytes: vec![],
        passes: vec![
            Pass {
                kernel: &ADD,
                buffers: vec![BufferRef::Params, BufferRef::Input(0), BufferRef::Output(0)],
                params: vec![1, n],
                workgroups: 1,
            },
            check_pass(0, n, 64, 0),
        ],
        index_checks: vec![0],
    };
    let err = ctx().execute(&plan, &[&idx], &[u32_desc(n)]).unwrap_err();
    assert_eq!(
        err,
        ExecError::Index {
            check: 0,
            position: 40
        }
    );
}

#[test]
fn many_workgroups_use_a_2d_grid() {
    let n: u32 = 70_000;
    let plan = GpuPlan {
        outputs: vec![OutputInit::Zero],
        scratch_bytes: vec![],
        passes: vec![Pass {
            kernel: &WIDE,
            buffers: vec![BufferRef::Params, BufferRef::Output(0)],
            params: vec![n],
            workgroups: u64::from(n),
        }],
        index_checks: vec![],
    };
    let out = ctx().execute(&plan, &[], &[u32_desc(n)]).unwrap();
    let got = out[0].to_vec::<u32>().unwrap();
    assert_eq!(got.len(), n as usize);
    for (i, &v) in got.iter().enumerate() {
        assert_eq!(v, 2 * i as u32 + 1, "element {i}");
    }
}

#[test]
fn scratch_buffers_are_zeroed_and_shared_between_passes() {
    let n = 200;
    let input = u32s(n, |i| i);
    let plan = GpuPlan {
        outputs: vec![OutputInit::Zero],
        scratch_bytes: vec![u64::from(2 * n) * 4],
        passes: vec![
            Pass {
                kernel: &TO_SCRATCH,
                buffers: vec![
                    BufferRef::Params,
                    BufferRef::Input(0),
                    BufferRef::Scratch(0),
                ],
                params: vec![n],
                workgroups: u64::from(n).div_ceil(64),
            },
            Pass {
                kernel: &FROM_SCRATCH,
                buffers: vec![
                    BufferRef::Params,
                    BufferRef::Scratch(0),
                    BufferRef::Output(0),
                ],
                params: vec![2 * n],
                workgroups: u64::from(2 * n).div_ceil(64),
            },
        ],
        index_checks: vec![],
    };
    let out = ctx().execute(&plan, &[&input], &[u32_desc(2 * n)]).unwrap();
    let got = out[0].to_vec::<u32>().unwrap();
    let want: Vec<u32> = (0..2 * n)
        .map(|i| if i < n { 3 * i + 1 } else { 1 })
        .collect();
    assert_eq!(got, want);
}

#[test]
fn copy_of_input_starts_outputs() {
    let n = 129;
    let input = u32s(n, |i| 1000 + i);
    let plan = GpuPlan {
        outputs: vec![OutputInit::CopyOfInput(0)],
        scratch_bytes: vec![],
        passes: vec![Pass {
            kernel: &BUMP_EVEN,
            buffers: vec![BufferRef::Params, BufferRef::Output(0)],
            params: vec![5],
            workgroups: u64::from(n).div_ceil(64),
        }],
        index_checks: vec![],
    };
    let out = ctx().execute(&plan, &[&input], &[u32_desc(n)]).unwrap();
    let got = out[0].to_vec::<u32>().unwrap();
    let want: Vec<u32> = (0..n)
        .map(|i| 1000 + i + if i % 2 == 0 { 5 } else { 0 })
        .collect();
    assert_eq!(got, want);
}

#[test]
fn packed_bytes_are_padded_and_truncated() {
    // 7 bytes live in two words; the kernel adds 1 to word 0 (byte 0).
    let data: Vec<u8> = vec![10, 20, 30, 40, 50, 60, 70];
    let input = HostTensor::from_slice([7], &data).unwrap();
    let plan = GpuPlan {
        outputs: vec![OutputInit::CopyOfInput(0)],
        scratch_bytes: vec![],
        passes: vec![Pass {
            kernel: &BUMP_EVEN,
            buffers: vec![BufferRef::Params, BufferRef::Output(0)],
            params: vec![1],
            workgroups: 1,
        }],
        index_checks: vec![],
    };
    let out = ctx()
        .execute(&plan, &[&input], &[TensorDesc::new(DataType::Uint8, [7])])
        .unwrap();
    assert_eq!(out[0].bytes(), &[11, 20, 30, 40, 50, 60, 70]);
    // An empty tensor still gets a (4-byte) buffer and comes back empty.
    let empty = HostTensor::from_slice::<u16>([0], &[]).unwrap();
    let plan = GpuPlan {
        outputs: vec![OutputInit::CopyOfInput(0)],
        scratch_bytes: vec![0],
        passes: vec![],
        index_checks: vec![],
    };
    let out = ctx()
        .execute(&plan, &[&empty], &[TensorDesc::new(DataType::Uint16, [0])])
        .unwrap();
    assert!(out[0].is_empty());
}

static BAD_WGSL: Kernel = Kernel::new(
    "test/bad_wgsl",
    "@compute @workgroup_size(1) fn main() { let x: u32 = not_a_thing; }",
    "main",
    &[],
    1,
);

static BAD_ENTRY: Kernel = Kernel::new(
    "test/bad_entry",
    "@compute @workgroup_size(1) fn main() {}",
    "missing",
    &[],
    1,
);

// Declares a binding the layout does not have.
static BAD_LAYOUT: Kernel = Kernel::new(
    "test/bad_layout",
    r#"
@group(0) @binding(0) var<storage, read_write> dst: array<u32>;
@compute @workgroup_size(1) fn main() { dst[0] = 1u; }
"#,
    "main",
    &[Read],
    1,
);

fn one_pass(kernel: &'static Kernel, buffers: Vec<BufferRef>) -> GpuPlan {
    GpuPlan {
        outputs: vec![OutputInit::Zero],
        scratch_bytes: vec![],
        passes: vec![Pass {
            kernel,
            buffers,
            params: vec![],
            workgroups: 1,
        }],
        index_checks: vec![],
    }
}

#[test]
fn invalid_kernels_are_errors() {
    let c = own_context();
    for (kernel, buffers) in [
        (&BAD_WGSL, vec![]),
        (&BAD_ENTRY, vec![]),
        (&BAD_LAYOUT, vec![BufferRef::Output(0)]),
    ] {
        let err = c
            .execute(&one_pass(kernel, buffers), &[], &[u32_desc(1)])
            .unwrap_err();
        match err {
            ExecError::Op(OpError::Device(msg)) => assert!(msg.contains(kernel.key), "{msg}"),
            other => panic!("{}: expected a device error, got {other:?}", kernel.key),
        }
    }
    // Failures are not cached as pipelines.
    assert_eq!(
        c.cache_stats(),
        CacheStats {
            compiled: 0,
            hits: 0
        }
    );
    // The context still works afterwards.
    let input = u32s(3, |i| i);
    let out = c
        .execute(&add_plan(3, 1), &[&input], &[u32_desc(3)])
        .unwrap();
    assert_eq!(out[0].to_vec::<u32>().unwrap(), vec![1, 2, 3]);
}

#[test]
fn bad_wgsl_error_names_the_problem() {
    let err = ctx()
        .execute(&one_pass(&BAD_WGSL, vec![]), &[], &[u32_desc(1)])
        .unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains("test/bad_wgsl"), "{msg}");
    assert!(msg.contains("not_a_thing"), "{msg}");
}

#[test]
fn pipelines_are_compiled_once() {
    let c = own_context();
    let input = u32s(10, |i| i);
    for round in 0..3u32 {
        let out = c
            .execute(&add_plan(10, round), &[&input], &[u32_desc(10)])
            .unwrap();
        assert_eq!(
            out[0].to_vec::<u32>().unwrap(),
            (0..10).map(|i| i + round).collect::<Vec<_>>()
        );
    }
    assert_eq!(
        c.cache_stats(),
        CacheStats {
            compiled: 1,
            hits: 2
        }
    );
    // Two passes of one kernel in one plan: one more hit each.
    let mut plan = add_plan(10, 1);
    plan.passes.push(add_pass(10, 2));
    let out = c.execute(&plan, &[&input], &[u32_desc(10)]).unwrap();
    assert_eq!(
        out[0].to_vec::<u32>().unwrap(),
        (0..10).map(|i| i + 2).collect::<Vec<_>>()
    );
    assert_eq!(
        c.cache_stats(),
        CacheStats {
            compiled: 1,
            hits: 4
        }
    );
}

#[test]
fn concurrent_runs_on_one_context() {
    let c = Arc::new(own_context());
    let threads: Vec<_> = (0..8u32)
        .map(|t| {
            let c = Arc::clone(&c);
            std::thread::spawn(move || {
                let n = 500 + t * 37;
                let input = u32s(n, |i| i * (t + 1));
                for round in 0..3 {
                    let out = c
                        .execute(&add_plan(n, t + round), &[&input], &[u32_desc(n)])
                        .unwrap();
                    let want: Vec<u32> = (0..n).map(|i| i * (t + 1) + t + round).collect();
                    assert_eq!(
                        out[0].to_vec::<u32>().unwrap(),
                        want,
                        "thread {t} round {round}"
                    );
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(
        c.cache_stats(),
        CacheStats {
            compiled: 1,
            hits: 23
        }
    );
}

#[test]
fn malformed_plans_are_errors() {
    let c = ctx();
    let input = u32s(4, |i| i);
    let invalid = |r: Result<Vec<HostTensor>, ExecError>| match r {
        Err(ExecError::Op(OpError::InvalidArgument(m))) => m,
        other => panic!("expected InvalidArgument, got {other:?}"),
    };
    // Output count.
    invalid(c.execute(&add_plan(4, 1), &[&input], &[]));
    // Missing input.
    invalid(c.execute(&add_plan(4, 1), &[], &[u32_desc(4)]));
    // Binding count.
    let mut plan = add_plan(4, 1);
    plan.passes[0].buffers.pop();
    invalid(c.execute(&plan, &[&input], &[u32_desc(4)]));
    // Out-of-range buffer references.
    for r in [
        BufferRef::Output(3),
        BufferRef::Scratch(0),
        BufferRef::Input(9),
    ] {
        let mut plan = add_plan(4, 1);
        plan.passes[0].buffers[2] = r;
        invalid(c.execute(&plan, &[&input], &[u32_desc(4)]));
    }
    // CopyOfInput of a missing input, or of another size.
    let mut plan = add_plan(4, 1);
    plan.outputs[0] = OutputInit::CopyOfInput(1);
    invalid(c.execute(&plan, &[&input], &[u32_desc(4)]));
    plan.outputs[0] = OutputInit::CopyOfInput(0);
    invalid(c.execute(&plan, &[&input], &[u32_desc(5)]));
}

#[test]
fn limits_give_too_large() {
    let c = ctx();
    let too_large = |r: Result<Vec<HostTensor>, ExecError>| match r {
        Err(ExecError::Op(OpError::TooLarge { what, limit })) => format!("{what} / {limit}"),
        other => panic!("expected TooLarge, got {other:?}"),
    };
    let input = u32s(4, |i| i);
    // Workgroups beyond the 2-D grid.
    let mut plan = add_plan(4, 1);
    plan.passes[0].workgroups = u64::MAX;
    let m = too_large(c.execute(&plan, &[&input], &[u32_desc(4)]));
    assert!(m.contains("max_compute_workgroups_per_dimension"), "{m}");
    // A buffer beyond the device's limits (never allocated).
    let huge = TensorDesc::new(DataType::Uint32, [u32::MAX, 1 << 16]);
    let m = too_large(c.execute(&add_plan(4, 1), &[&input], &[huge]));
    assert!(
        m.contains("max_buffer_size") || m.contains("max_storage_buffer_binding_size"),
        "{m}"
    );
    // Byte size overflowing u64.
    let overflow = TensorDesc::new(DataType::Uint64, [u32::MAX, u32::MAX, 4]);
    too_large(c.execute(&add_plan(4, 1), &[&input], &[overflow]));
    // Scratch beyond the limits.
    let mut plan = add_plan(4, 1);
    plan.scratch_bytes.push(u64::MAX - 2);
    too_large(c.execute(&plan, &[&input], &[u32_desc(4)]));
}

#[test]
fn zero_workgroups_skip_the_dispatch() {
    let input = u32s(4, |i| i);
    let mut plan = add_plan(4, 1);
    plan.passes[0].workgroups = 0;
    let out = ctx().execute(&plan, &[&input], &[u32_desc(4)]).unwrap();
    assert_eq!(out[0].to_vec::<u32>().unwrap(), vec![0; 4]);
}

// A minimal operator: `output[i] = input[i] + 1`, with an index check that
// every input value is below `bound`.
#[derive(Clone, Debug)]
struct BoundedAddOne {
    n: u32,
    bound: u32,
}

fn build(args: &OpArgs) -> Result<Box<dyn Operator>, OpError> {
    Ok(Box::new(BoundedAddOne::from_args(args)?))
}

static INFO: OperatorInfo = OperatorInfo {
    name: "BoundedAddOne",
    instance: "",
    groups: &[],
    namespace: "",
    aliases: &[],
    inputs: &["input"],
    outputs: &["output"],
    introduced: None,
    kernels: &[&ADD, &CHECK],
    build,
    tensors: &[
        TensorInfo {
            name: "input",
            seed: "input",
            output: false,
            host: false,
        },
        TensorInfo {
            name: "output",
            seed: "output",
            output: true,
            host: false,
        },
    ],
    attrs: &[],
    table: &TABLE,
    rules: &[],
    strided_inputs: false,
};

static TABLE: ops_core::support::SupportTable = ops_core::support::SupportTable {
    operator: "BoundedAddOne",
    selector: None,
    introduced: None,
    entries: &[],
    tensor_names: &["input", "output"],
    seed_names: &["input", "output"],
};

impl Operator for BoundedAddOne {
    fn info(&self) -> &'static OperatorInfo {
        &INFO
    }

    fn validate(&self, _level: FeatureLevel) -> Result<(), ValidationError> {
        Ok(())
    }
    fn min_feature_level(&self) -> Option<FeatureLevel> {
        None
    }
    fn input_descs(&self) -> Vec<TensorDesc> {
        vec![u32_desc(self.n)]
    }
    fn output_descs(&self) -> Vec<TensorDesc> {
        vec![u32_desc(self.n)]
    }
    fn run_cpu(&self, inputs: &[&HostTensor]) -> Result<Vec<HostTensor>, OpError> {
        let v: Vec<u32> = inputs[0]
            .to_vec::<u32>()
            .unwrap()
            .iter()
            .map(|x| x + 1)
            .collect();
        Ok(vec![HostTensor::from_slice([self.n], &v)?])
    }
    fn gpu_plan_for(&self, _: DeviceClass) -> Result<GpuPlan, OpError> {
        let mut plan = add_plan(self.n, 1);
        plan.passes.push(check_pass(0, self.n, self.bound, 0));
        plan.index_checks.push(0);
        Ok(plan)
    }
    fn index_error(&self, inputs: &[&HostTensor], _check: usize, position: u64) -> OpError {
        OpError::IndexOutOfRange {
            tensor: "input".into(),
            position: vec![position as u32],
            value: inputs[0].get_int(position as usize).unwrap_or(-1),
            low: 0,
            high: i128::from(self.bound) - 1,
        }
    }
}

impl OperatorType for BoundedAddOne {
    const INFO: &'static OperatorInfo = &INFO;

    fn from_args(_args: &OpArgs) -> Result<Self, OpError> {
        Ok(BoundedAddOne { n: 4, bound: 10 })
    }
}

#[test]
fn run_checks_inputs_and_phrases_index_errors() {
    let c = ctx();
    let op = BoundedAddOne { n: 100, bound: 50 };
    let good = u32s(100, |i| i % 50);
    let out = c.run(&op, &[&good]).unwrap();
    assert_eq!(out, Operator::run_cpu(&op, &[&good]).unwrap());

    let bad = u32s(100, |i| if i == 63 { 77 } else { i % 50 });
    assert_eq!(
        c.run(&op, &[&bad]).unwrap_err(),
        OpError::IndexOutOfRange {
            tensor: "input".into(),
            position: vec![63],
            value: 77,
            low: 0,
            high: 49,
        }
    );

    // Wrong count, sizes or data type.
    for inputs in [
        vec![],
        vec![&good, &good],
        vec![&*Box::leak(Box::new(u32s(99, |i| i)))],
        vec![&*Box::leak(Box::new(
            HostTensor::from_slice([100], &[0i32; 100]).unwrap(),
        ))],
    ] {
        match c.run(&op, &inputs) {
            Err(OpError::InvalidArgument(_)) => {}
            other => panic!("expected InvalidArgument, got {other:?}"),
        }
    }
}

/// The profiler reports invalid kernels as errors (its error scopes unwind
/// in order on the early return) and keeps working afterwards.
#[test]
fn profiler_reports_invalid_kernels() {
    let c = own_context();
    let profiler = ops_gpu::Profiler::new(&c).unwrap();
    for (kernel, buffers) in [
        (&BAD_WGSL, vec![]),
        (&BAD_ENTRY, vec![]),
        (&BAD_LAYOUT, vec![BufferRef::Output(0)]),
    ] {
        match profiler.prepare(&one_pass(kernel, buffers), &[], &[u32_desc(1)]) {
            Err(OpError::Device(msg)) => assert!(msg.contains(kernel.key), "{msg}"),
            other => panic!("{}: expected a device error, got {other:?}", kernel.key),
        }
    }
    let input = u32s(3, |i| i);
    let prepared = profiler
        .prepare(&add_plan(3, 1), &[&input], &[u32_desc(3)])
        .unwrap();
    prepared.run().unwrap();
    assert_eq!(
        prepared.read_outputs().unwrap()[0].to_vec::<u32>().unwrap(),
        vec![1, 2, 3]
    );
}
