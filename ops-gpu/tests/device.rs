//! What callers see when the device itself fails: a lost device, an
//! allocation the device refuses, a buffer beyond its limits. Each is an
//! error from the call that hit it, and afterwards the context either works
//! or says it cannot.

use std::sync::Arc;

use ops_core::{
    Access, BufferRef, DataType, GpuPlan, HostTensor, Kernel, OpError, OutputInit, Pass, TensorDesc,
};
use ops_gpu::{Context, ExecError};

/// out[i] = in[i] + 1 for i < params[0].
static ADD_ONE: Kernel = Kernel::new(
    "test/add_one",
    r#"
@group(0) @binding(0) var<storage, read> params: array<u32>;
@group(0) @binding(1) var<storage, read> src: array<u32>;
@group(0) @binding(2) var<storage, read_write> dst: array<u32>;

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) li: u32) {
    let i = (wg.x + wg.y * nwg.x) * 64u + li;
    if (i >= params[0]) { return; }
    dst[i] = src[i] + 1u;
}
"#,
    "main",
    &[Access::Read, Access::Read, Access::ReadWrite],
    64,
);

fn plan(n: u32) -> GpuPlan {
    GpuPlan {
        outputs: vec![OutputInit::Zero],
        scratch_bytes: vec![],
        passes: vec![Pass {
            kernel: &ADD_ONE,
            buffers: vec![BufferRef::Params, BufferRef::Input(0), BufferRef::Output(0)],
            params: vec![n],
            workgroups: u64::from(n).div_ceil(64),
        }],
        index_checks: vec![],
    }
}

/// Runs the kernel on `n` words; the output when it worked.
fn add_one(ctx: &Context, n: u32) -> Result<Vec<u32>, ExecError> {
    let input = HostTensor::from_slice([n], &(0..n).collect::<Vec<u32>>()).unwrap();
    let out = ctx.execute(
        &plan(n),
        &[&input],
        &[TensorDesc::new(DataType::Uint32, [n])],
    )?;
    let out = out[0].to_vec::<u32>().unwrap();
    assert_eq!(out, (1..=n).collect::<Vec<u32>>());
    Ok(out)
}

fn own_context() -> Context {
    Context::new().unwrap_or_else(|e| panic!("GPU tests need an adapter: {e}"))
}

#[test]
fn a_buffer_beyond_the_limits_fails_that_call_only() {
    let ctx = own_context();
    add_one(&ctx, 100).unwrap();
    let max = ctx.limits().max_buffer_size;
    // An extra output far beyond max_buffer_size: refused before anything
    // is allocated.
    let mut p = plan(100);
    p.outputs.push(OutputInit::Zero);
    let input = HostTensor::from_slice([100], &[0u32; 100]).unwrap();
    let huge = TensorDesc::new(DataType::Uint64, [u32::MAX, (max >> 32).max(1) as u32 + 1]);
    match ctx.execute(
        &p,
        &[&input],
        &[TensorDesc::new(DataType::Uint32, [100]), huge],
    ) {
        Err(ExecError::Op(OpError::TooLarge { what, limit })) => {
            assert!(what.contains("output 1"), "{what}");
            assert!(limit.contains("max_buffer_size"), "{limit}");
        }
        other => panic!("expected TooLarge, got {other:?}"),
    }
    assert!(ctx.device_lost().is_none());
    add_one(&ctx, 1000).unwrap();
}

#[test]
fn a_lost_device_fails_every_later_call() {
    let ctx = own_context();
    add_one(&ctx, 10).unwrap();
    assert_eq!(ctx.device_lost(), None);
    ctx.destroy_device();
    let why = ctx.device_lost().expect("the context knows it is lost");
    for _ in 0..2 {
        match add_one(&ctx, 10) {
            Err(ExecError::Op(OpError::DeviceLost(m))) => assert_eq!(m, why),
            other => panic!("expected DeviceLost, got {other:?}"),
        }
    }
}

/// The device is lost while other threads are in the middle of calls: each
/// call returns (a result, or `DeviceLost` even when the loss surfaced as a
/// failed mapping; never a panic or a hang), and no call works afterwards.
#[test]
fn losing_the_device_under_running_calls() {
    let ctx = Arc::new(own_context());
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let ctx = Arc::clone(&ctx);
            std::thread::spawn(move || {
                let mut lost = false;
                for round in 0..40u32 {
                    match add_one(&ctx, 1000 + 17 * t + round) {
                        Ok(_) => assert!(!lost, "a call worked after the loss"),
                        Err(ExecError::Op(OpError::DeviceLost(_))) => lost = true,
                        Err(e) => panic!("thread {t} round {round}: unexpected {e:?}"),
                    }
                }
            })
        })
        .collect();
    std::thread::sleep(std::time::Duration::from_millis(30));
    ctx.destroy_device();
    for t in threads {
        t.join().expect("no call panics");
    }
    assert!(matches!(
        add_one(&ctx, 10),
        Err(ExecError::Op(OpError::DeviceLost(_)))
    ));
}

/// Runs test `name` of this binary in a child process and returns its
/// output, asserting that it passed.
fn run_child(name: &str) -> String {
    let exe = std::env::current_exe().unwrap();
    let out = std::process::Command::new(exe)
        .args(["--exact", name, "--nocapture", "--test-threads=1"])
        .env("OPS_GPU_TEST_CHILD", "1")
        .output()
        .unwrap();
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

/// The child of [`an_allocation_the_device_refuses_is_out_of_memory`]: with
/// its address space capped a little above what it uses, a call that needs
/// a 1 GiB buffer fails with `OutOfMemory`, and the next call works.
#[test]
fn child_out_of_memory() {
    if std::env::var_os("OPS_GPU_TEST_CHILD").is_none() {
        return;
    }
    let ctx = own_context();
    add_one(&ctx, 100).unwrap();
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let vm_kib: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmSize:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmSize in /proc/self/status");
    let cap = (vm_kib << 10) + (384 << 20);
    let pid = std::process::id().to_string();
    let limited = std::process::Command::new("prlimit")
        .args(["--pid", &pid, &format!("--as={cap}")])
        .status()
        .expect("prlimit (util-linux) caps the address space");
    assert!(limited.success());
    // An output no pass binds, so that only the allocation can fail.
    let mut p = plan(100);
    p.outputs.push(OutputInit::Zero);
    let input = HostTensor::from_slice([100], &[0u32; 100]).unwrap();
    let outputs = [
        TensorDesc::new(DataType::Uint32, [100]),
        TensorDesc::new(DataType::Uint32, [1 << 28]),
    ];
    match ctx.execute(&p, &[&input], &outputs) {
        Err(ExecError::Op(OpError::OutOfMemory(m))) => println!("CHILD-SAW-OOM: {m}"),
        other => panic!("expected OutOfMemory, got {other:?}"),
    }
    assert!(ctx.device_lost().is_none());
    add_one(&ctx, 1000).unwrap();
    println!("CHILD-RAN-AFTER-OOM");
}

#[test]
fn an_allocation_the_device_refuses_is_out_of_memory() {
    let text = run_child("child_out_of_memory");
    assert!(text.contains("CHILD-SAW-OOM"), "{text}");
    assert!(text.contains("CHILD-RAN-AFTER-OOM"), "{text}");
}
