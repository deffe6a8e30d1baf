//! The profiling helpers: resident-buffer runs, the copy kernels and the
//! minimal dispatch, on whatever adapter `Context::new` picks (lavapipe on
//! machines without a GPU). No timing is asserted, only results.

use ops_core::{
    Access, BufferRef, DataType, GpuPlan, HostTensor, Kernel, OutputInit, Pass, TensorDesc,
};
use ops_gpu::{copy_plan, copy_words_plan, shared, Context, MinimalDispatch, Profiler, TimeSource};

fn ctx() -> &'static Context {
    shared().unwrap_or_else(|e| panic!("no GPU context: {e}"))
}

fn words(n: u32) -> HostTensor {
    let data: Vec<u32> = (0..n).map(|i| i.wrapping_mul(0x9e37_79b9)).collect();
    HostTensor::from_slice([n], &data).unwrap()
}

#[test]
fn copies_round_trip_and_time() {
    let p = Profiler::new(ctx()).unwrap();
    assert_eq!(p.adapter(), ctx().adapter());
    for plan in [copy_plan(4096), copy_words_plan(4096)] {
        let (plan, desc) = plan.unwrap();
        assert_eq!(desc, TensorDesc::new(DataType::Uint32, [1024]));
        let input = words(1024);
        let prepared = p
            .prepare(&plan, &[&input], std::slice::from_ref(&desc))
            .unwrap();
        for _ in 0..2 {
            let s = prepared.run().unwrap();
            assert_eq!(s.gpu.is_some(), p.time_source() != TimeSource::WallClock);
            assert!(s.best() <= s.wall.max(s.best()));
        }
        assert_eq!(prepared.read_outputs().unwrap(), vec![input]);
    }
    assert!(copy_plan(20).is_err());
    assert!(copy_plan(0).is_err());
}

// out[i] = in[i] + params[0] for i < params[1]; also reports i into status 0
// when in[i] == params[2].
static ADD: Kernel = Kernel::new(
    "test/profile_add",
    r#"
@group(0) @binding(0) var<storage, read> params: array<u32>;
@group(0) @binding(1) var<storage, read> src: array<u32>;
@group(0) @binding(2) var<storage, read_write> dst: array<u32>;
@group(0) @binding(3) var<storage, read_write> status: array<atomic<u32>>;

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) li: u32) {
    let i = (wg.x + wg.y * nwg.x) * 64u + li;
    if (i >= params[1]) { return; }
    if (src[i] == params[2]) { atomicMin(&status[0], i); }
    dst[i] = src[i] + params[0];
}
"#,
    "main",
    &[
        Access::Read,
        Access::Read,
        Access::ReadWrite,
        Access::ReadWrite,
    ],
    64,
);

fn add_plan(n: u32, addend: u32, bad: u32) -> GpuPlan {
    GpuPlan {
        outputs: vec![OutputInit::Zero],
        scratch_bytes: vec![],
        passes: vec![Pass {
            kernel: &ADD,
            buffers: vec![
                BufferRef::Params,
                BufferRef::Input(0),
                BufferRef::Output(0),
                BufferRef::Status,
            ],
            params: vec![addend, n, bad],
            workgroups: u64::from(n).div_ceil(64),
        }],
        index_checks: vec![0],
    }
}

#[test]
fn prepared_runs_match_execute_and_report_index_checks() {
    let p = Profiler::new(ctx()).unwrap();
    let input = words(1000);
    let desc = input.desc().clone();
    let plan = add_plan(1000, 7, 1);
    let want = ctx()
        .execute(&plan, &[&input], std::slice::from_ref(&desc))
        .unwrap();
    let prepared = p
        .prepare(&plan, &[&input], std::slice::from_ref(&desc))
        .unwrap();
    prepared.run().unwrap();
    assert_eq!(prepared.read_outputs().unwrap(), want);
    // Element 3 holds the "bad" value: the status word reports it.
    let bad = input.get::<u32>(3);
    let prepared = p
        .prepare(
            &add_plan(1000, 7, bad),
            &[&input],
            std::slice::from_ref(&desc),
        )
        .unwrap();
    prepared.run().unwrap();
    let e = prepared.read_outputs().unwrap_err();
    assert!(
        e.to_string().contains("index check 0 failed at element 3"),
        "{e}"
    );
    // Mismatched outputs are an error, not a panic.
    assert!(p.prepare(&plan, &[&input], &[]).is_err());
}

#[test]
fn minimal_dispatch_matches_context_run() {
    // Its own context, so that no other test touches its cache.
    let own = &Context::new().unwrap_or_else(|e| panic!("no GPU context: {e}"));
    let input = words(256);
    let desc = input.desc().clone();
    let plan = add_plan(256, 5, u32::MAX);
    let want = own
        .execute(&plan, &[&input], std::slice::from_ref(&desc))
        .unwrap();
    let before = own.cache_stats();
    let minimal = MinimalDispatch::new(own, &plan, 1024, &desc).unwrap();
    for _ in 0..3 {
        assert_eq!(minimal.call(input.bytes()).unwrap(), want[0].bytes());
    }
    // Its pipeline is its own: the context's cache is untouched.
    assert_eq!(own.cache_stats(), before);
    assert!(minimal.call(&[0u8; 2048]).is_err());
    let two = GpuPlan {
        passes: vec![plan.passes[0].clone(), plan.passes[0].clone()],
        ..plan
    };
    assert!(MinimalDispatch::new(own, &two, 1024, &desc).is_err());
}
