//! Concurrency: one GPU context shared by many threads running the catalog's
//! operators at once, and pipelines compiled once per kernel even when
//! several threads need the same one first.

use std::collections::BTreeSet;
use std::sync::{Arc, Barrier};

use ops::{ArgMaxDesc, ArgMinDesc, GatherND1Desc, ReduceMinDesc, ScatterDesc};
use ops_core::{DataType, HostTensor, Operator, TensorDesc};
use ops_gpu::{CacheStats, Context};
use ops_tests::{assert_bitwise_eq, tensor_with_edges, Rng};

const THREADS: usize = 8;

fn fresh_context() -> Arc<Context> {
    Arc::new(Context::new().unwrap_or_else(|e| panic!("GPU tests need an adapter: {e}")))
}

/// In-range index values of `dtype` below `bound`.
fn indices(dtype: DataType, sizes: &[u32], bound: u64, rng: &mut Rng) -> HostTensor {
    let n: u64 = sizes.iter().map(|&s| u64::from(s)).product();
    let mut bytes = Vec::new();
    for _ in 0..n {
        let v = rng.below(bound);
        bytes.extend_from_slice(&v.to_le_bytes()[..dtype.size_bytes()]);
    }
    HostTensor::from_bytes(TensorDesc::new(dtype, sizes.to_vec()), bytes).unwrap()
}

/// Operator `which` (0..5: ArgMin, ArgMax, ReduceMin, GatherND1, Scatter)
/// with inputs whose data and sizes depend on `seed`.
fn case(which: usize, seed: u64) -> (Box<dyn Operator>, Vec<HostTensor>) {
    let mut rng = Rng::new(seed);
    let rows = 3 + rng.below(40) as u32;
    let cols = 1 + rng.below(300) as u32;
    match which {
        0 => {
            let x = tensor_with_edges(DataType::Float32, &[rows, cols], &mut rng);
            let d = ArgMinDesc::builder()
                .input(x.desc().clone())
                .output_dtype(DataType::Int64)
                .axes([1])
                .build()
                .unwrap();
            (Box::new(d), vec![x])
        }
        1 => {
            let x = tensor_with_edges(DataType::Int16, &[rows, cols], &mut rng);
            let d = ArgMaxDesc::builder()
                .input(x.desc().clone())
                .output_dtype(DataType::Uint32)
                .axes([0])
                .build()
                .unwrap();
            (Box::new(d), vec![x])
        }
        2 => {
            let x = tensor_with_edges(DataType::Float16, &[rows, cols], &mut rng);
            let axes = HostTensor::from_slice([1], &[-1i64]).unwrap();
            let d = ReduceMinDesc::builder()
                .data(x.desc().clone())
                .axes(axes.clone())
                .build()
                .unwrap();
            (Box::new(d), vec![x, axes])
        }
        3 => {
            let x = tensor_with_edges(DataType::Uint8, &[rows, cols], &mut rng);
            let idx = indices(DataType::Int32, &[2 * rows, 1], u64::from(rows), &mut rng);
            let d = GatherND1Desc::builder()
                .input(x.desc().clone())
                .indices(idx.desc().clone())
                .input_dimension_count(2)
                .indices_dimension_count(2)
                .build()
                .unwrap();
            (Box::new(d), vec![x, idx])
        }
        _ => {
            let x = tensor_with_edges(DataType::Float32, &[rows, cols], &mut rng);
            let idx = indices(DataType::Uint32, &[rows, cols], u64::from(cols), &mut rng);
            let up = tensor_with_edges(DataType::Float32, &[rows, cols], &mut rng);
            let d = ScatterDesc::builder()
                .input(x.desc().clone())
                .indices(idx.desc().clone())
                .updates(up.desc().clone())
                .axis(1)
                .build()
                .unwrap();
            (Box::new(d), vec![x, idx, up])
        }
    }
}

/// Runs `op` on `ctx` and checks it against the CPU reference.
fn check(ctx: &Context, op: &dyn Operator, inputs: &[HostTensor], context: &str) {
    let inputs: Vec<&HostTensor> = inputs.iter().collect();
    let want = op.run_cpu(&inputs).unwrap();
    let got = ctx
        .run(op, &inputs)
        .unwrap_or_else(|e| panic!("{context}: {e}"));
    for (g, w) in got.iter().zip(&want) {
        assert_bitwise_eq(g, w, context);
    }
}

/// The kernel keys and the pass count of `op`'s plan.
fn kernels_of(op: &dyn Operator) -> (BTreeSet<&'static str>, u64) {
    let plan = op.gpu_plan().unwrap();
    let keys = plan.passes.iter().map(|p| p.kernel.key).collect();
    (keys, plan.passes.len() as u64)
}

#[test]
fn contexts_and_descriptors_cross_threads() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Context>();
    assert_send_sync::<Box<dyn Operator>>();
    assert_send_sync::<HostTensor>();
}

/// Eight threads, five operators, one context: every result equals the CPU
/// reference, and each kernel was compiled once.
#[test]
fn eight_threads_run_different_operators_on_one_context() {
    const ROUNDS: u64 = 4;
    let ctx = fresh_context();
    let start = Arc::new(Barrier::new(THREADS));
    let threads: Vec<_> = (0..THREADS)
        .map(|t| {
            let (ctx, start) = (Arc::clone(&ctx), Arc::clone(&start));
            std::thread::spawn(move || {
                let mut keys = BTreeSet::new();
                let mut passes = 0;
                start.wait();
                for round in 0..ROUNDS {
                    // Each thread cycles through the operators from its own
                    // starting point, so different operators run at once.
                    let which = (t + round as usize) % 5;
                    let (op, inputs) = case(which, 1000 * t as u64 + round);
                    check(
                        &ctx,
                        op.as_ref(),
                        &inputs,
                        &format!("thread {t} round {round}"),
                    );
                    let (k, p) = kernels_of(op.as_ref());
                    keys.extend(k);
                    passes += p;
                }
                (keys, passes)
            })
        })
        .collect();
    let mut keys = BTreeSet::new();
    let mut passes = 0;
    for t in threads {
        let (k, p) = t.join().expect("a thread panicked");
        keys.extend(k);
        passes += p;
    }
    let compiled = keys.len() as u64;
    assert_eq!(
        ctx.cache_stats(),
        CacheStats {
            compiled,
            hits: passes - compiled
        },
        "kernels {keys:?}"
    );
}

/// Eight threads wait at a barrier and then need the same kernels at the
/// same moment on a fresh context: each is compiled once, the others wait
/// for it.
#[test]
fn pipelines_compile_once_under_concurrent_first_use() {
    for which in [4, 3, 0] {
        let ctx = fresh_context();
        let start = Arc::new(Barrier::new(THREADS));
        let (op, _) = case(which, 7);
        let (keys, passes) = kernels_of(op.as_ref());
        let threads: Vec<_> = (0..THREADS)
            .map(|t| {
                let (ctx, start) = (Arc::clone(&ctx), Arc::clone(&start));
                std::thread::spawn(move || {
                    // Same sizes (so the same kernels), different data.
                    let (op, _) = case(which, 7);
                    let (_, inputs) = case(which, 7);
                    let mut rng = Rng::new(t as u64);
                    let mut inputs = inputs;
                    inputs[0] = tensor_with_edges(inputs[0].dtype(), inputs[0].sizes(), &mut rng);
                    start.wait();
                    check(&ctx, op.as_ref(), &inputs, &format!("thread {t}"));
                })
            })
            .collect();
        for t in threads {
            t.join().expect("a thread panicked");
        }
        let compiled = keys.len() as u64;
        assert_eq!(
            ctx.cache_stats(),
            CacheStats {
                compiled,
                hits: THREADS as u64 * passes - compiled
            },
            "operator {which}: kernels {keys:?}"
        );
    }
}
