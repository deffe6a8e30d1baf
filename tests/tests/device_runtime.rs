//! The device-resident runtime: device tensors, recordings of many calls in
//! one submission, deferred index checks, contexts on the caller's device,
//! the buffer pool, and the errors of each.

use std::future::Future;
use std::sync::Arc;
use std::task::{Context as TaskContext, Poll, Wake, Waker};

use ops::{onnx, ArgMaxDesc};
use ops_core::fuzz::compare_within;
use ops_core::{DataType, HostTensor, OpError, Operator, TensorDesc, Tolerance};
use ops_gpu::Context;
use ops_tests::{assert_bitwise_eq, gather_nd1, gpu, tensor_with_edges, Rng};

/// The operators of one link of the chain: Relu, Transpose, ArgMax along
/// the transposed rows, Gather of label rows by the arg-max, Add of a bias.
struct Link {
    relu: onnx::ReluDesc,
    transpose: onnx::TransposeDesc,
    argmax: ArgMaxDesc,
    gather: onnx::GatherDesc,
    add: onnx::AddDesc,
}

fn link(rows: u32, cols: u32) -> Link {
    let x = TensorDesc::new(DataType::Float32, [rows, cols]);
    let relu = onnx::ReluDesc::builder().x(x.clone()).build().unwrap();
    let transpose = onnx::TransposeDesc::builder().data(x).build().unwrap();
    let argmax = ArgMaxDesc::builder()
        .input(TensorDesc::new(DataType::Float32, [cols, rows]))
        .output_dtype(DataType::Int32)
        .axes([0])
        .build()
        .unwrap();
    let gather = onnx::GatherDesc::builder()
        .data(TensorDesc::new(DataType::Int32, [cols, 3]))
        .indices(TensorDesc::new(DataType::Int32, [1, rows]))
        .build()
        .unwrap();
    let add = onnx::AddDesc::builder()
        .a(TensorDesc::new(DataType::Int32, [1, rows, 3]))
        .b(TensorDesc::new(DataType::Int32, [3]))
        .build()
        .unwrap();
    Link {
        relu,
        transpose,
        argmax,
        gather,
        add,
    }
}

fn int32(sizes: &[u32], rng: &mut Rng) -> HostTensor {
    let n: u32 = sizes.iter().product();
    let v: Vec<i32> = (0..n).map(|_| rng.below(2001) as i32 - 1000).collect();
    HostTensor::from_slice(sizes.to_vec(), &v).unwrap()
}

/// Records `links` links (5 calls each) on `ctx`, reading every call's
/// output, submits once, and checks each against the CPU reference run on
/// the CPU's own results. Returns the calls recorded.
fn chain_on(ctx: &Context, links: usize, seed: u64) -> usize {
    let mut rng = Rng::new(seed);
    let (rows, cols) = (1 + rng.below(24) as u32, 1 + rng.below(40) as u32);
    let ops = link(rows, cols);
    let mut host = Vec::new();
    let mut rec = ctx.record();
    let mut want = Vec::new();
    for _ in 0..links {
        let x = tensor_with_edges(DataType::Float32, &[rows, cols], &mut rng);
        let labels = int32(&[cols, 3], &mut rng);
        let bias = int32(&[3], &mut rng);
        let (xd, ld, bd) = (
            ctx.upload(&x).unwrap(),
            ctx.upload(&labels).unwrap(),
            ctx.upload(&bias).unwrap(),
        );
        let y = rec.run(&ops.relu, &[&xd]).unwrap();
        let t = rec.run(&ops.transpose, &[&y[0]]).unwrap();
        let a = rec.run(&ops.argmax, &[&t[0]]).unwrap();
        let g = rec.run(&ops.gather, &[&ld, &a[0]]).unwrap();
        let s = rec.run(&ops.add, &[&g[0], &bd]).unwrap();
        for out in [&y[0], &t[0], &a[0], &g[0], &s[0]] {
            rec.read(out).unwrap();
        }
        let cy = ops.relu.run_cpu(&[&x]).unwrap();
        let ct = ops.transpose.run_cpu(&[&cy[0]]).unwrap();
        let ca = ops.argmax.run_cpu(&[&ct[0]]).unwrap();
        let cg = ops.gather.run_cpu(&[&labels, &ca[0]]).unwrap();
        let cs = ops.add.run_cpu(&[&cg[0], &bias]).unwrap();
        want.extend([cy, ct, ca, cg, cs].map(|mut v| v.remove(0)));
        host.push((x, labels, bias));
    }
    let calls = rec.calls();
    let got = rec.submit().unwrap().wait().unwrap();
    assert_eq!(got.len(), want.len());
    // Exact operators; a NaN is any NaN (the CPU reference quiets
    // signalling NaNs, the GPU may not), as everywhere in the catalog.
    for (k, (g, w)) in got.chunks(1).zip(want.chunks(1)).enumerate() {
        if let Err(e) = compare_within(g, w, Tolerance::Exact) {
            panic!("seed {seed}, call {k}: {e}");
        }
    }
    calls
}

#[test]
fn a_chain_equals_the_cpu_reference() {
    assert_eq!(chain_on(gpu(), 4, 1), 20);
}

/// 1,000 recorded operator calls from 8 threads on one context, 5
/// submissions of 25 calls each per thread, every result equal to the CPU
/// reference bit for bit.
#[test]
fn a_thousand_recorded_calls_from_eight_threads() {
    let ctx = Arc::new(Context::new().unwrap());
    let threads: Vec<_> = (0..8u64)
        .map(|t| {
            let ctx = Arc::clone(&ctx);
            std::thread::spawn(move || {
                (0..5)
                    .map(|s| chain_on(&ctx, 5, t * 100 + s))
                    .sum::<usize>()
            })
        })
        .collect();
    let calls: usize = threads.into_iter().map(|t| t.join().unwrap()).sum();
    assert_eq!(calls, 1000);
    let stats = ctx.pool_stats();
    assert!(stats.hits > stats.misses, "{stats:?}");
}

#[test]
fn a_tensor_of_another_context_is_refused() {
    let a = gpu();
    // A second context on the same device: it shares nothing with the first.
    let b = Context::from_device(a.device().clone(), a.queue().clone());
    let x = HostTensor::from_slice([4], &[1f32, -2., 3., -4.]).unwrap();
    let relu = onnx::ReluDesc::builder()
        .x(x.desc().clone())
        .build()
        .unwrap();
    let xa = a.upload(&x).unwrap();
    let mut rec = b.record();
    match rec.run(&relu, &[&xa]) {
        Err(OpError::WrongContext(m)) => assert!(m.contains("input `x` of `Relu`"), "{m}"),
        other => panic!("expected WrongContext, got {other:?}"),
    }
    assert_eq!(rec.calls(), 0);
    assert!(matches!(b.download(&xa), Err(OpError::WrongContext(_))));
    let out_a = a.zeros(x.desc().clone()).unwrap();
    let xb = b.upload(&x).unwrap();
    assert!(matches!(
        rec.run_into(&relu, &[&xb], &[&out_a]),
        Err(OpError::WrongContext(_))
    ));
    // Each context runs its own tensors on the shared device.
    let yb = rec.run(&relu, &[&xb]).unwrap();
    rec.read(&yb[0]).unwrap();
    let got = rec.submit().unwrap().wait().unwrap();
    assert_eq!(got[0], relu.run_cpu(&[&x]).unwrap()[0]);
    assert_eq!(
        a.run_on_device(&relu, &[&xa])
            .map(|v| a.download(&v[0]).unwrap())
            .unwrap(),
        got[0]
    );
}

/// An index out of range in the middle of a chain: found when the
/// submission is finished, reported as `Context::run` reports it.
#[test]
fn index_errors_are_read_once_and_name_the_call() {
    let ctx = gpu();
    let x = HostTensor::from_slice([4, 3], &(0..12).map(|v| v as f32).collect::<Vec<_>>()).unwrap();
    let good = HostTensor::from_slice([2, 1], &[1u32, 3]).unwrap();
    let bad = HostTensor::from_slice([2, 1], &[1u32, 7]).unwrap();
    let gather = gather_nd1(&x, &good, 2);
    let relu = onnx::ReluDesc::builder()
        .x(x.desc().clone())
        .build()
        .unwrap();
    let want = ctx.run(&gather, &[&x, &bad]).unwrap_err();
    assert!(matches!(want, OpError::IndexOutOfRange { .. }), "{want:?}");

    let (xd, gd, bd) = (
        ctx.upload(&x).unwrap(),
        ctx.upload(&good).unwrap(),
        ctx.upload(&bad).unwrap(),
    );
    let mut rec = ctx.record();
    let y = rec.run(&relu, &[&xd]).unwrap();
    rec.run(&gather, &[&y[0], &gd]).unwrap();
    rec.run(&gather, &[&y[0], &bd]).unwrap();
    rec.run(&gather, &[&xd, &gd]).unwrap();
    assert_eq!(rec.submit().unwrap().wait().unwrap_err(), want);

    // Without the bad call the same chain is fine.
    let mut rec = ctx.record();
    let y = rec.run(&relu, &[&xd]).unwrap();
    let g = rec.run(&gather, &[&y[0], &gd]).unwrap();
    rec.read(&g[0]).unwrap();
    let got = rec.submit().unwrap().wait().unwrap();
    assert_eq!(got[0], gather.run_cpu(&[&x, &good]).unwrap()[0]);
}

#[test]
fn outputs_into_tensors_the_caller_provides() {
    let ctx = gpu();
    let x = HostTensor::from_slice([5], &[1i32, -2, 3, -4, 5]).unwrap();
    let relu = onnx::ReluDesc::builder()
        .x(x.desc().clone())
        .build()
        .unwrap();
    let xd = ctx.upload(&x).unwrap();
    // A dirty pooled buffer first: what is left in it must not show.
    let junk = HostTensor::from_slice([5], &[-9i32; 5]).unwrap();
    drop(ctx.upload(&junk).unwrap());
    let out = ctx.zeros(x.desc().clone()).unwrap();
    let mut rec = ctx.record();
    rec.run_into(&relu, &[&xd], &[&out]).unwrap();
    rec.read(&out).unwrap();
    let got = rec.submit().unwrap().wait().unwrap();
    assert_eq!(got[0].to_vec::<i32>(), Some(vec![1, 0, 3, 0, 5]));

    let mut rec = ctx.record();
    let wrong = ctx.zeros(TensorDesc::new(DataType::Int32, [6])).unwrap();
    let err = rec.run_into(&relu, &[&xd], &[&wrong]).unwrap_err();
    assert!(
        matches!(&err, OpError::InvalidArgument(m) if m.contains("output `y` of `Relu`")),
        "{err}"
    );
    let err = rec.run_into(&relu, &[&xd], &[&xd]).unwrap_err();
    assert!(
        matches!(&err, OpError::InvalidArgument(m) if m.contains("a call cannot write a tensor it reads")),
        "{err}"
    );
    let err = rec.run_into(&relu, &[&xd], &[]).map(drop);
    assert!(err.is_ok(), "no outputs given: the call makes its own");
    let err = rec.run_into(&relu, &[&xd], &[&out, &out]).unwrap_err();
    assert!(matches!(err, OpError::InvalidArgument(_)));
    assert_eq!(rec.calls(), 1);
    rec.submit().unwrap().wait().unwrap();
}

/// A minimal executor, not pollster: the future must not depend on one.
fn run_to_end<F: Future>(f: F) -> F::Output {
    struct Unpark(std::thread::Thread);
    impl Wake for Unpark {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut cx = TaskContext::from_waker(&waker);
    let mut f = std::pin::pin!(f);
    loop {
        match f.as_mut().poll(&mut cx) {
            Poll::Ready(v) => return v,
            Poll::Pending => std::thread::park(),
        }
    }
}

#[test]
fn finishing_is_async() {
    let ctx = gpu();
    let mut rng = Rng::new(7);
    let x = tensor_with_edges(DataType::Float16, &[33, 17], &mut rng);
    let relu = onnx::ReluDesc::builder()
        .x(x.desc().clone())
        .build()
        .unwrap();
    let xd = ctx.upload(&x).unwrap();
    let mut rec = ctx.record();
    let y = rec.run(&relu, &[&xd]).unwrap();
    rec.read(&y[0]).unwrap();
    let sub = rec.submit().unwrap();
    let got = run_to_end(sub.finish()).unwrap();
    let want = relu.run_cpu(&[&x]).unwrap();
    compare_within(&got, &want, Tolerance::Exact).unwrap();
    let back = run_to_end(ctx.download_async(&y[0])).unwrap();
    assert_bitwise_eq(&back, &got[0], "download_async");
    assert_eq!(run_to_end(ctx.download_async(&xd)).unwrap(), x);
}

#[test]
fn buffers_come_back_to_the_pool() {
    let ctx = Context::new().unwrap();
    chain_on(&ctx, 3, 11);
    let first = ctx.pool_stats();
    assert!(first.free_buffers > 0, "{first:?}");
    chain_on(&ctx, 3, 11);
    let second = ctx.pool_stats();
    assert_eq!(
        second.misses, first.misses,
        "the same work again needs no new buffer"
    );
    assert!(second.hits > first.hits);
    ctx.set_pool_limit(0);
    assert_eq!(ctx.pool_stats().free_bytes, 0);
    chain_on(&ctx, 1, 12);
    assert_eq!(ctx.pool_stats().free_buffers, 0);
}

#[test]
fn mistakes_are_errors() {
    let ctx = gpu();
    let huge = TensorDesc::new(DataType::Float32, [u32::MAX, u32::MAX]);
    assert!(matches!(ctx.zeros(huge), Err(OpError::TooLarge { .. })));
    let buffer = ctx.device().create_buffer(&wgpu_desc(64, false));
    let desc = TensorDesc::new(DataType::Float32, [4]);
    assert!(matches!(
        ctx.wrap_buffer(buffer, desc.clone()),
        Err(OpError::InvalidArgument(_))
    ));
    let small = ctx.device().create_buffer(&wgpu_desc(8, true));
    assert!(matches!(
        ctx.wrap_buffer(small, desc.clone()),
        Err(OpError::InvalidArgument(_))
    ));
    // A recording into its own encoder is submitted, not finished, and a
    // mismatched tensor records nothing.
    let x = ctx.zeros(TensorDesc::new(DataType::Float32, [3])).unwrap();
    let relu = onnx::ReluDesc::builder().x(desc).build().unwrap();
    let mut rec = ctx.record();
    assert!(matches!(
        rec.run(&relu, &[&x]),
        Err(OpError::InvalidArgument(_))
    ));
    assert!(matches!(
        rec.run(&relu, &[]),
        Err(OpError::InvalidArgument(_))
    ));
    assert!(matches!(rec.finish(), Err(OpError::InvalidArgument(_))));
}

fn wgpu_desc(size: u64, usable: bool) -> ops_gpu::wgpu::BufferDescriptor<'static> {
    use ops_gpu::wgpu::BufferUsages as U;
    ops_gpu::wgpu::BufferDescriptor {
        label: None,
        size,
        usage: if usable {
            U::STORAGE | U::COPY_SRC | U::COPY_DST
        } else {
            U::STORAGE
        },
        mapped_at_creation: false,
    }
}

#[test]
fn a_lost_device_fails_every_call() {
    let ctx = Context::new().unwrap();
    let x = HostTensor::from_slice([2], &[1f32, -1.]).unwrap();
    let relu = onnx::ReluDesc::builder()
        .x(x.desc().clone())
        .build()
        .unwrap();
    let xd = ctx.upload(&x).unwrap();
    ctx.destroy_device();
    assert!(matches!(ctx.upload(&x), Err(OpError::DeviceLost(_))));
    assert!(matches!(ctx.download(&xd), Err(OpError::DeviceLost(_))));
    assert!(matches!(
        ctx.record().run(&relu, &[&xd]),
        Err(OpError::DeviceLost(_))
    ));
    assert!(matches!(
        ctx.run_on_device(&relu, &[&xd]),
        Err(OpError::DeviceLost(_))
    ));
}

/// A download may outlive its context: dropping the context stops its
/// poller (and never waits on the future), and the future still ends.
#[test]
fn a_future_may_outlive_its_context() {
    let x = HostTensor::from_slice([3], &[1u16, 2, 3]).unwrap();
    let ctx = Context::new().unwrap();
    let t = ctx.upload(&x).unwrap();
    let future = ctx.download_async(&t);
    drop(t);
    drop(ctx);
    match run_to_end(future) {
        Ok(back) => assert_eq!(back, x),
        Err(e) => assert!(matches!(e, OpError::Device(_)), "{e:?}"),
    }
}
