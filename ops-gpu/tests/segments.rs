//! Tensors beyond one storage binding, with a hand-written kernel that
//! carries a segmented variant (generated kernels are tested in
//! `tests/tests/limits.rs`).

use ops_core::{
    Access, BufferRef, DataType, GpuPlan, HostTensor, Kernel, OpError, OutputInit, Pass, Segmented,
    TensorDesc,
};
use ops_gpu::{CacheStats, Context, ExecError};

use Access::{Read, ReadWrite};

/// dst[i] = src[i] + params[0] for i < params[1]; its variant binds src and
/// dst in three segments each.
static ADD: Kernel = Kernel::with_variant(
    "test/segmented_add",
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
    Segmented {
        wgsl: r#"
@group(0) @binding(0) var<storage, read> params: array<u32>;
@group(0) @binding(1) var<storage, read> src_s0: array<u32>;
@group(0) @binding(2) var<storage, read> src_s1: array<u32>;
@group(0) @binding(3) var<storage, read> src_s2: array<u32>;
@group(0) @binding(4) var<storage, read_write> dst_s0: array<u32>;
@group(0) @binding(5) var<storage, read_write> dst_s1: array<u32>;
@group(0) @binding(6) var<storage, read_write> dst_s2: array<u32>;

fn src_word(i: u32) -> u32 {
    let n = arrayLength(&src_s0);
    if (i < n) { return src_s0[i]; }
    let s = i / n;
    if (s == 1u) { return src_s1[i - n]; }
    return src_s2[i - 2u * n];
}

fn dst_set(i: u32, v: u32) {
    let n = arrayLength(&dst_s0);
    if (i < n) { dst_s0[i] = v; return; }
    let s = i / n;
    if (s == 1u) { dst_s1[i - n] = v; return; }
    dst_s2[i - 2u * n] = v;
}

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) li: u32) {
    let i = (wg.x + wg.y * nwg.x) * 64u + li;
    if (i >= params[1]) { return; }
    dst_set(i, src_word(i) + params[0]);
}
"#,
        segments: &[1, 3, 3],
    },
);

fn plan(kernel: &'static Kernel, n: u32, addend: u32) -> GpuPlan {
    GpuPlan {
        outputs: vec![OutputInit::Zero],
        scratch_bytes: vec![],
        passes: vec![Pass {
            kernel,
            buffers: vec![BufferRef::Params, BufferRef::Input(0), BufferRef::Output(0)],
            params: vec![addend, n],
            workgroups: u64::from(n).div_ceil(64),
        }],
        index_checks: vec![],
    }
}

fn u32s(n: u32) -> HostTensor {
    HostTensor::from_slice([n], &(0..n).map(|i| i * 3).collect::<Vec<_>>()).unwrap()
}

fn add(ctx: &Context, kernel: &'static Kernel, n: u32) -> Result<Vec<u32>, ExecError> {
    let out = ctx.execute(
        &plan(kernel, n, 7),
        &[&u32s(n)],
        &[TensorDesc::new(DataType::Uint32, [n])],
    )?;
    Ok(out[0].to_vec::<u32>().unwrap())
}

fn want(n: u32) -> Vec<u32> {
    (0..n).map(|i| i * 3 + 7).collect()
}

/// A context whose bindings hold 1 KiB: 256 words per segment.
fn small() -> Context {
    Context::new()
        .unwrap_or_else(|e| panic!("GPU tests need an adapter: {e}"))
        .with_max_binding_size(1024)
}

#[test]
fn large_buffers_run_in_segments() {
    let ctx = small();
    // One segment (the kernel itself), two and a dummy, exactly three, and
    // a last segment of a single word.
    for n in [200, 256, 300, 768, 513] {
        assert_eq!(add(&ctx, &ADD, n).unwrap(), want(n), "{n} words");
    }
    assert_eq!(
        ctx.cache_stats(),
        CacheStats {
            compiled: 2,
            hits: 3
        },
        "the kernel and its variant are compiled once each"
    );
}

#[test]
fn beyond_the_segments_is_too_large() {
    let ctx = small();
    match add(&ctx, &ADD, 769) {
        Err(ExecError::Op(OpError::TooLarge { what, limit })) => {
            assert!(
                what.contains("input 0") && what.contains("3088 bytes"), // 3,076 padded to 16
                "{what}"
            );
            assert!(
                limit.contains("max_storage_buffer_binding_size (1024 bytes)")
                    && limit.contains("3 segments"),
                "{limit}"
            );
        }
        other => panic!("expected TooLarge, got {other:?}"),
    }
    // The context still works.
    assert_eq!(add(&ctx, &ADD, 700).unwrap(), want(700));
}

static PLAIN: Kernel = Kernel::new(
    "test/plain_add",
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

static MALFORMED: Kernel = Kernel::with_variant(
    "test/malformed_variant",
    "@compute @workgroup_size(64) fn main() {}\n",
    "main",
    &[Read, Read, ReadWrite],
    64,
    Segmented {
        wgsl: "@compute @workgroup_size(64) fn main() {}\n",
        segments: &[1, 3],
    },
);

#[test]
fn kernels_without_a_usable_variant_are_errors() {
    let ctx = small();
    assert_eq!(add(&ctx, &PLAIN, 256).unwrap(), want(256));
    match add(&ctx, &PLAIN, 257) {
        Err(ExecError::Op(OpError::TooLarge { limit, .. })) => assert!(
            limit.contains("max_storage_buffer_binding_size")
                && limit.contains("no segmented variant"),
            "{limit}"
        ),
        other => panic!("expected TooLarge, got {other:?}"),
    }
    match add(&ctx, &MALFORMED, 257) {
        Err(ExecError::Op(OpError::InvalidArgument(m))) => {
            assert!(m.contains("malformed segmented variant"), "{m}")
        }
        other => panic!("expected InvalidArgument, got {other:?}"),
    }
}

/// The profiler runs plans with the runtime's executor: segmented variants
/// included, repeated runs starting from the plan's initial state, results
/// equal to `execute`'s.
#[test]
fn the_profiler_runs_segmented_variants_as_execute_does() {
    let ctx = small();
    let profiler = ops_gpu::Profiler::new(&ctx).unwrap();
    for n in [200, 513, 768] {
        let input = u32s(n);
        let desc = TensorDesc::new(DataType::Uint32, [n]);
        let prepared = profiler
            .prepare(&plan(&ADD, n, 7), &[&input], std::slice::from_ref(&desc))
            .unwrap();
        for _ in 0..3 {
            prepared.run().unwrap();
            let out = prepared.read_outputs().unwrap();
            assert_eq!(out[0].to_vec::<u32>().unwrap(), want(n), "{n} words");
        }
    }
    // Beyond the segments: the same error as `execute`'s.
    let input = u32s(769);
    let e = profiler
        .prepare(
            &plan(&ADD, 769, 7),
            &[&input],
            &[TensorDesc::new(DataType::Uint32, [769])],
        )
        .unwrap_err();
    assert!(
        matches!(&e, OpError::TooLarge { limit, .. } if limit.contains("3 segments")),
        "{e}"
    );
}
