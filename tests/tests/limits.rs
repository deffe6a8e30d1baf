//! Limits of the device: tensors larger than one storage binding, dispatches
//! of more than 65,535 workgroups, and sizes beyond what can run, which must
//! be [`OpError::TooLarge`] errors naming the limit, never a wgpu panic.
//!
//! A tensor larger than `max_storage_buffer_binding_size` (128 MiB on
//! lavapipe and by WebGPU's default) runs through the segmented variant of
//! its kernels, which binds it in up to four segments. The 300 MiB tests run
//! that path for real on the shared context; the others lower the binding
//! size of their own context to a few KiB, so that every operator's
//! segmented kernels run on small tensors.

use ops::{ArgMaxDesc, ArgMinDesc, ReduceMinDesc};
use ops_core::family::gather_nd;
use ops_core::family::reduce::params;
use ops_core::{DataType, DeviceClass, HostTensor, OpError, Operator, TensorDesc};
use ops_gpu::Context;
use ops_tests::{assert_bitwise_eq, gather_nd1, gpu, scatter_axis0, tensor_with_edges, Rng};

/// The binding size of the small-binding context: segments of 4 KiB, so
/// tensors of up to 16 KiB run segmented.
const SMALL_BINDING: u64 = 4096;

fn small_binding_context() -> Context {
    Context::new()
        .unwrap_or_else(|e| panic!("GPU tests need an adapter: {e}"))
        .with_max_binding_size(SMALL_BINDING)
}

/// Runs `op` on the CPU and on `ctx`, asserting equal outputs bit for bit.
fn same_on_both(ctx: &Context, op: &dyn Operator, inputs: &[&HostTensor]) -> Vec<HostTensor> {
    let cpu = op.run_cpu(inputs).unwrap();
    let gpu = ctx
        .run(op, inputs)
        .unwrap_or_else(|e| panic!("{op:?}: {e}"));
    assert_eq!(cpu.len(), gpu.len());
    for (g, c) in gpu.iter().zip(&cpu) {
        assert_bitwise_eq(g, c, &format!("{op:?}"));
    }
    cpu
}

fn too_large(r: Result<Vec<HostTensor>, OpError>) -> (String, String) {
    match r {
        Err(OpError::TooLarge { what, limit }) => (what, limit),
        other => panic!("expected TooLarge, got {other:?}"),
    }
}

/// Index values of `dtype` below `bound`, with some negative ones (counted
/// from the end) for signed types.
fn indices(dtype: DataType, sizes: &[u32], bound: u64, rng: &mut Rng) -> HostTensor {
    let n: u64 = sizes.iter().map(|&s| u64::from(s)).product();
    let mut bytes = Vec::new();
    for _ in 0..n {
        let v = rng.below(bound) as i64;
        let v = if dtype.is_signed_int() && rng.below(3) == 0 {
            v - bound as i64
        } else {
            v
        };
        bytes.extend_from_slice(&v.to_le_bytes()[..dtype.size_bytes()]);
    }
    HostTensor::from_bytes(TensorDesc::new(dtype, sizes.to_vec()), bytes).unwrap()
}

fn byte_size(t: &HostTensor) -> u64 {
    t.bytes().len() as u64
}

#[test]
fn the_device_reports_its_limits() {
    let limits = gpu().limits();
    eprintln!(
        "{}: max_buffer_size {}, max_storage_buffer_binding_size {}, \
         max_storage_buffers_per_shader_stage {}, min_storage_buffer_offset_alignment {}, \
         max_compute_workgroups_per_dimension {}",
        gpu().adapter().name,
        limits.max_buffer_size,
        limits.max_storage_buffer_binding_size,
        limits.max_storage_buffers_per_shader_stage,
        limits.min_storage_buffer_offset_alignment,
        limits.max_compute_workgroups_per_dimension
    );
    assert_eq!(
        gpu().max_binding_size(),
        limits.max_storage_buffer_binding_size
    );
    let small = small_binding_context();
    assert_eq!(small.max_binding_size(), SMALL_BINDING);
    // Never above what the device allows.
    let ctx = Context::new().unwrap().with_max_binding_size(u64::MAX);
    assert_eq!(
        ctx.max_binding_size(),
        limits.max_storage_buffer_binding_size
    );
}

#[test]
fn reductions_run_segmented() {
    let ctx = small_binding_context();
    let mut rng = Rng::new(11);
    // Contiguous rows: FLOAT32 input of 12,000 bytes (3 segments), a small output.
    let x = tensor_with_edges(DataType::Float32, &[3, 1000], &mut rng);
    let d = ArgMinDesc::builder()
        .input(x.desc().clone())
        .output_dtype(DataType::Uint32)
        .axes([1])
        .build()
        .unwrap();
    same_on_both(&ctx, &d, &[&x]);
    // Short rows: UINT8 input of 15,000 bytes, UINT32 output of 12,000 bytes.
    let x = tensor_with_edges(DataType::Uint8, &[3000, 5], &mut rng);
    let d = ArgMaxDesc::builder()
        .input(x.desc().clone())
        .output_dtype(DataType::Uint32)
        .axes([1])
        .build()
        .unwrap();
    same_on_both(&ctx, &d, &[&x]);
    // A long strided reduction with few outputs, split over workgroups and
    // combined from partial results: the splitting pass binds the input of
    // 16,000 bytes in segments, the combining pass runs unsegmented.
    let x = tensor_with_edges(DataType::Uint8, &[1000, 16], &mut rng);
    let d = ArgMinDesc::builder()
        .input(x.desc().clone())
        .output_dtype(DataType::Int32)
        .axes([0])
        .axis_direction(ops::argmin::AxisDirection::Decreasing)
        .build()
        .unwrap();
    assert!(d.gpu_plan().unwrap().passes.len() > 1);
    same_on_both(&ctx, &d, &[&x]);
    // Packed FLOAT16 output of 8,000 bytes stored with atomics in segments.
    let x = tensor_with_edges(DataType::Float16, &[2, 4000], &mut rng);
    let (d, axes) = reduce_min(&x, &[0]);
    same_on_both(&ctx, &d, &[&x, &axes]);
    // Two-word FLOAT64 elements across segment boundaries (16,000 bytes).
    let x = tensor_with_edges(DataType::Float64, &[1000, 2], &mut rng);
    let axes = HostTensor::from_slice([1], &[-1i32]).unwrap();
    let d = ReduceMinDesc::builder()
        .data(x.desc().clone())
        .axes(axes.clone())
        .keep_dims(true)
        .build()
        .unwrap();
    same_on_both(&ctx, &d, &[&x, &axes]);
    // The software plans' vector layouts read in segments: an inner block
    // of 7 FLOAT32 elements read 4 rows at a time (SplitColumns in phases,
    // 7,168 bytes), and rows of 64 elements a kept dimension apart
    // (SplitLanes over segments, 5,120 bytes), on any adapter.
    let sw = small_binding_context().with_device_class(DeviceClass::Software);
    let x = tensor_with_edges(DataType::Float32, &[2, 128, 7], &mut rng);
    let d = ArgMinDesc::builder()
        .input(x.desc().clone())
        .output_dtype(DataType::Int64)
        .axes([1])
        .build()
        .unwrap();
    let plan = d.gpu_plan_for(DeviceClass::Software).unwrap();
    assert_eq!(plan.passes[0].params[params::PHASES], 4);
    same_on_both(&sw, &d, &[&x]);
    let x = tensor_with_edges(DataType::Float32, &[5, 4, 64], &mut rng);
    let (d, axes) = reduce_min(&x, &[0, 2]);
    let plan = d.gpu_plan_for(DeviceClass::Software).unwrap();
    assert_eq!(plan.passes[0].params[params::SEGMENTS], 5);
    same_on_both(&sw, &d, &[&x, &axes]);
    // ReduceMin's column walks (ranks alone, again with positions after a
    // NaN) over segments: FLOAT16 columns of whole vectors (6,144 bytes)
    // and a FLOAT32 inner block of 7 read 4 rows at a time (7,168 bytes).
    for (dtype, sizes, kernel) in [
        (
            DataType::Float16,
            [3u32, 64, 16],
            "ReduceMin/reduce_split_columns/FLOAT16/FLOAT16",
        ),
        (
            DataType::Float32,
            [2, 128, 7],
            "ReduceMin/reduce_split_columns/FLOAT32/FLOAT32",
        ),
    ] {
        let x = tensor_with_edges(dtype, &sizes, &mut rng);
        let (d, axes) = reduce_min(&x, &[1]);
        let plan = d.gpu_plan_for(DeviceClass::Software).unwrap();
        assert_eq!(plan.passes[0].kernel.key, kernel);
        same_on_both(&sw, &d, &[&x, &axes]);
    }
    // Beyond four segments: an error naming the limit, nothing run.
    let x = tensor_with_edges(DataType::Int64, &[2100], &mut rng);
    let d = ArgMinDesc::builder()
        .input(x.desc().clone())
        .output_dtype(DataType::Int64)
        .axes([0])
        .build()
        .unwrap();
    let (what, limit) = too_large(ctx.run(&d, &[&x]));
    assert!(
        what.contains("input 0") && what.contains("16800 bytes"),
        "{what}"
    );
    assert!(
        limit.contains("max_storage_buffer_binding_size (4096 bytes)")
            && limit.contains("4 segments"),
        "{limit}"
    );
    // The context is still usable.
    let x = tensor_with_edges(DataType::Int64, &[100], &mut rng);
    let d = ArgMinDesc::builder()
        .input(x.desc().clone())
        .output_dtype(DataType::Int64)
        .axes([0])
        .build()
        .unwrap();
    same_on_both(&ctx, &d, &[&x]);
}

/// ReduceMin of `x` over INT64 `axes`, and the axes tensor it takes as
/// its second input.
fn reduce_min(x: &HostTensor, axes: &[i64]) -> (ReduceMinDesc, HostTensor) {
    let axes = HostTensor::from_slice([axes.len() as u32], axes).unwrap();
    let d = ReduceMinDesc::builder()
        .data(x.desc().clone())
        .axes(axes.clone())
        .build()
        .unwrap();
    (d, axes)
}

#[test]
fn gathers_and_scatters_run_segmented() {
    let ctx = small_binding_context();
    let mut rng = Rng::new(12);
    // 32-bit data: input 12,000 bytes, indices 9,600, output 14,400.
    let x = tensor_with_edges(DataType::Float32, &[1000, 3], &mut rng);
    let idx = indices(DataType::Int64, &[1200, 1], 1000, &mut rng);
    let d = gather_nd1(&x, &idx, 2);
    assert!(byte_size(&x) > SMALL_BINDING && byte_size(&idx) > SMALL_BINDING);
    same_on_both(&ctx, &d, &[&x, &idx]);
    // Software plans' single vectors (four elements a thread, tuples read
    // and elements stored as vectors): input 12,000 bytes, index pairs
    // 8,008, output 4,004 (1,001 elements: a last thread of one).
    let sw = small_binding_context().with_device_class(DeviceClass::Software);
    let x = tensor_with_edges(DataType::Int32, &[60, 50], &mut rng);
    let idx = indices(DataType::Int32, &[1001, 2], 50, &mut rng);
    let d = gather_nd1(&x, &idx, 2);
    let plan = d.gpu_plan_for(DeviceClass::Software).unwrap();
    assert!(plan.passes[0]
        .kernel
        .key
        .contains("gather_nd_single_vectors_2"));
    assert!(byte_size(&x) > 2 * SMALL_BINDING && byte_size(&idx) > SMALL_BINDING);
    same_on_both(&sw, &d, &[&x, &idx]);
    // Packed 8-bit data: whole output words stored through the accessors.
    let x = tensor_with_edges(DataType::Uint8, &[5000, 2], &mut rng);
    let idx = indices(DataType::Uint32, &[3000, 1], 5000, &mut rng);
    let d = gather_nd1(&x, &idx, 2);
    same_on_both(&ctx, &d, &[&x, &idx]);
    // An out-of-range index in the last segment of the indices: the same
    // error from both backends.
    let mut bad = indices(DataType::Int32, &[3000, 1], 5000, &mut rng).into_bytes();
    bad[2900 * 4..2901 * 4].copy_from_slice(&5000i32.to_le_bytes());
    let bad = HostTensor::from_bytes(TensorDesc::new(DataType::Int32, [3000, 1]), bad).unwrap();
    let d = gather_nd1(&x, &bad, 2);
    let cpu = d.run_cpu(&[&x, &bad]).unwrap_err();
    assert!(
        matches!(&cpu, OpError::IndexOutOfRange { position, value: 5000, .. } if position == &[2900, 0]),
        "{cpu:?}"
    );
    assert_eq!(ctx.run(&d, &[&x, &bad]).unwrap_err(), cpu);
    // Slices of 36 16-byte vectors (the gather's vector mode) and of 130
    // words (row mode), straddling the segment boundaries: input 11,520 and
    // 10,400 bytes, output 13,824 and 15,600; then a bad index in vector mode.
    for (cols, tuples, mode) in [
        (144u32, 24u32, gather_nd::params::SLICE_VECTORS),
        (130, 30, gather_nd::params::ROW_BLOCKS),
    ] {
        let x = tensor_with_edges(DataType::Float32, &[20, cols], &mut rng);
        let mut idx = indices(DataType::Int64, &[tuples, 1], 20, &mut rng);
        let d = gather_nd1(&x, &idx, 2);
        assert!(d.gpu_plan().unwrap().passes[0].params[mode] > 0, "{cols}");
        assert!(byte_size(&x) > 2 * SMALL_BINDING);
        same_on_both(&ctx, &d, &[&x, &idx]);
        if mode == gather_nd::params::SLICE_VECTORS {
            let mut bytes = idx.into_bytes();
            bytes[20 * 8..21 * 8].copy_from_slice(&(-21i64).to_le_bytes());
            idx = HostTensor::from_bytes(TensorDesc::new(DataType::Int64, [tuples, 1]), bytes)
                .unwrap();
            let cpu = d.run_cpu(&[&x, &idx]).unwrap_err();
            assert!(
                matches!(&cpu, OpError::IndexOutOfRange { position, value: -21, .. } if position == &[20, 0]),
                "{cpu:?}"
            );
            assert_eq!(ctx.run(&d, &[&x, &idx]).unwrap_err(), cpu);
        }
    }

    // Scatter: output (FLOAT32) and winner words of 16,000 bytes, indices
    // of 8,000 or 16,000 bytes.
    for (dt, ix) in [
        (DataType::Float32, DataType::Int32),
        (DataType::Uint16, DataType::Uint64),
    ] {
        let x = tensor_with_edges(dt, &[2000, 2], &mut rng);
        let idx = indices(ix, &[1000, 2], 2000, &mut rng);
        let up = tensor_with_edges(dt, &[1000, 2], &mut rng);
        let d = scatter_axis0(&x, &idx, &up);
        same_on_both(&ctx, &d, &[&x, &idx, &up]);
    }
    // Software plans' ColumnWords (whole output words, plain stores) and
    // ColumnVectors (vectors of updates and indices, whole-vector stores)
    // on outputs of 16,000 to 16,320 bytes in segments, the vector walks'
    // indices and updates too: few updates per column.
    let sw = small_binding_context().with_device_class(DeviceClass::Software);
    for (dt, sizes, k, kernel) in [
        (DataType::Uint8, [2000u32, 8], 6u32, "scatter_column_words"),
        (DataType::Float16, [4000, 2], 5, "scatter_column_words"),
        (DataType::Float32, [30, 136], 8, "scatter_column_vectors"),
        (DataType::Int64, [15, 136], 8, "scatter_column_vectors"),
    ] {
        let x = tensor_with_edges(dt, &sizes, &mut rng);
        let idx = indices(
            DataType::Int32,
            &[k, sizes[1]],
            u64::from(sizes[0]),
            &mut rng,
        );
        let up = tensor_with_edges(dt, &[k, sizes[1]], &mut rng);
        let d = scatter_axis0(&x, &idx, &up);
        let plan = d.gpu_plan_for(DeviceClass::Software).unwrap();
        assert!(plan.passes[0].kernel.key.contains(kernel));
        same_on_both(&sw, &d, &[&x, &idx, &up]);
    }
}

/// `bytes` bytes of pseudo-random data, cheap even in debug builds: a
/// random block of a prime number of words, repeated (a per-element loop
/// over 300 MiB takes seconds without optimisation, copies do not). Rows of
/// a tensor filled with it start at different places of the block.
fn cheap_bytes(bytes: usize, seed: u64) -> Vec<u8> {
    const BLOCK_WORDS: usize = 1_000_003;
    let mut rng = Rng::new(seed);
    let block: Vec<u8> = (0..BLOCK_WORDS)
        .flat_map(|_| rng.next_u64().to_le_bytes())
        .collect();
    let mut out = Vec::with_capacity(bytes);
    while out.len() < bytes {
        let n = block.len().min(bytes - out.len());
        out.extend_from_slice(&block[..n]);
    }
    out
}

/// 300 MiB as INT64 [1024, 38400]: 39.3 M elements in three 128 MiB
/// segments on lavapipe; each output reduces one row, some rows straddle
/// segment boundaries.
#[test]
fn argmin_of_300_mib() {
    let start = std::time::Instant::now();
    let desc = TensorDesc::new(DataType::Int64, [1024, 38400]);
    let x = HostTensor::from_bytes(desc, cheap_bytes(300 << 20, 1)).unwrap();
    assert_eq!(byte_size(&x), 300 << 20);
    let d = ArgMinDesc::builder()
        .input(x.desc().clone())
        .output_dtype(DataType::Uint32)
        .axes([1])
        .build()
        .unwrap();
    let made = start.elapsed();
    let cpu = d.run_cpu(&[&x]).unwrap();
    let cpu_time = start.elapsed() - made;
    let g = gpu().run(&d, &[&x]).unwrap();
    let gpu_time = start.elapsed() - made - cpu_time;
    assert_bitwise_eq(&g[0], &cpu[0], "ArgMin of 300 MiB");
    eprintln!(
        "ArgMin of 300 MiB: data {made:?}, CPU reference {cpu_time:?}, GPU {gpu_time:?} \
         (max_storage_buffer_binding_size {})",
        gpu().max_binding_size()
    );
}

/// 300 MiB as FLOAT32 [78643, 1000] (rows of 4000 bytes, so that rows
/// straddle the 128 MiB segment boundaries); 512 rows gathered, among them
/// the first, the last and those around each boundary.
#[test]
fn gather_nd1_of_300_mib() {
    let start = std::time::Instant::now();
    let (rows, cols) = (78643u32, 1000u32);
    let desc = TensorDesc::new(DataType::Float32, [rows, cols]);
    let x =
        HostTensor::from_bytes(desc, cheap_bytes(rows as usize * cols as usize * 4, 2)).unwrap();
    assert!(byte_size(&x) > 299 << 20 && byte_size(&x) < 301 << 20);
    let mut rng = Rng::new(13);
    let mut picks: Vec<i64> = vec![0, i64::from(rows) - 1, -1, -i64::from(rows)];
    for boundary in [1u64, 2] {
        let row = (boundary << 27) / 4000;
        picks.extend([row as i64 - 1, row as i64, row as i64 + 1]);
    }
    while picks.len() < 512 {
        picks.push(rng.below(u64::from(rows)) as i64);
    }
    let idx = HostTensor::from_slice([512, 1], &picks).unwrap();
    let d = gather_nd1(&x, &idx, 2);
    let made = start.elapsed();
    let cpu = d.run_cpu(&[&x, &idx]).unwrap();
    let cpu_time = start.elapsed() - made;
    let g = gpu().run(&d, &[&x, &idx]).unwrap();
    let gpu_time = start.elapsed() - made - cpu_time;
    assert_bitwise_eq(&g[0], &cpu[0], "GatherND1 of 300 MiB");
    eprintln!("GatherND1 of 300 MiB: data {made:?}, CPU reference {cpu_time:?}, GPU {gpu_time:?}");
}

/// A gather of 65,600 slices of 129 FLOAT32 elements (33.9 MB): one
/// workgroup per slice in the gather's row mode, 65,600 workgroups, more
/// than the 65,535 of one grid dimension. (The assertion on the plan keeps
/// the test honest if the gather's strategy changes.)
#[test]
fn more_than_65535_workgroups() {
    let mut rng = Rng::new(14);
    let x = tensor_with_edges(DataType::Float32, &[2, 129], &mut rng);
    let idx = indices(DataType::Int32, &[65_600, 1], 2, &mut rng);
    let d = gather_nd1(&x, &idx, 2);
    let plan = d.gpu_plan().unwrap();
    assert!(
        plan.passes[0].workgroups > 65_535,
        "{} workgroups",
        plan.passes[0].workgroups
    );
    same_on_both(gpu(), &d, &[&x, &idx]);
}

/// Outputs far larger than their inputs (a gather repeats slices): each size
/// past a limit is an error naming it, before anything is allocated.
#[test]
fn outputs_beyond_the_limits_are_too_large() {
    // Output [tuples, slice] from input [1, slice] and indices [tuples, 1].
    let gather = |slice: u32, tuples: u32| {
        let x = HostTensor::zeros(TensorDesc::new(DataType::Float32, [1, slice])).unwrap();
        let idx = HostTensor::zeros(TensorDesc::new(DataType::Uint32, [tuples, 1])).unwrap();
        let d = gather_nd1(&x, &idx, 2);
        (d, x, idx)
    };
    let limits = gpu().limits();
    let slice = 1u32 << 20; // 4 MiB per tuple
                            // Just beyond four segments (516 MiB on lavapipe): beyond the binding
                            // limit, or on devices whose binding limit is near their buffer limit,
                            // beyond that.
    let tuples = (4 * gpu().max_binding_size() / (4 << 20) + 1) as u32;
    let (d, x, idx) = gather(slice, tuples);
    let (what, limit) = too_large(gpu().run(&d, &[&x, &idx]));
    assert!(what.contains("output 0"), "{what}");
    assert!(
        limit.contains("max_storage_buffer_binding_size") || limit.contains("max_buffer_size"),
        "{limit}"
    );
    // Beyond max_buffer_size (2 GiB on lavapipe).
    let tuples = (limits.max_buffer_size / (4 << 20) + 1).min(1 << 12) as u32;
    let (d, x, idx) = gather(slice, tuples);
    let (_, limit) = too_large(gpu().run(&d, &[&x, &idx]));
    assert!(
        limit.contains("max_buffer_size") || limit.contains("u32") || limit.contains("host limit"),
        "{limit}"
    );
    // 2^33 elements: beyond u32 element addressing, on both backends.
    let (d, x, idx) = gather(1 << 20, 1 << 13);
    let (_, limit) = too_large(gpu().run(&d, &[&x, &idx]));
    assert!(limit.contains("u32"), "{limit}");
    let (_, limit) = too_large(d.run_cpu(&[&x, &idx]));
    assert!(limit.contains("u32"), "{limit}");
    // The shared context still works.
    let (d, x, idx) = gather(16, 4);
    same_on_both(gpu(), &d, &[&x, &idx]);
}

/// The hardware plans' kernels run segmented too: with 64 KiB bindings a
/// 256 KiB tensor is bound in four segments, and the all-axes reduction
/// (`reduce_split_lanes_tree`, four chunks of 64 KiB) and the split column
/// reduction match the CPU reference bit for bit.
#[test]
fn hardware_plans_run_segmented() {
    let ctx = Context::new()
        .unwrap_or_else(|e| panic!("GPU tests need an adapter: {e}"))
        .with_max_binding_size(64 << 10)
        .with_device_class(ops_core::DeviceClass::Hardware);
    let mut rng = Rng::new(0x5e9_7ee);
    let mut kernels = std::collections::BTreeSet::new();
    for (dtype, sizes) in [
        (DataType::Float32, [256u32, 256]),
        (DataType::Float16, [256, 512]),
        (DataType::Int64, [128, 256]),
    ] {
        let input = tensor_with_edges(dtype, &sizes, &mut rng);
        assert_eq!(byte_size(&input), 256 << 10);
        let all: Box<dyn Operator> = Box::new(
            ArgMinDesc::builder()
                .input(input.desc().clone())
                .output_dtype(DataType::Int64)
                .axes([0, 1])
                .build()
                .unwrap(),
        );
        let (columns, axes) = reduce_min(&input, &[0]);
        let columns: Box<dyn Operator> = Box::new(columns);
        for (op, inputs) in [(all, vec![&input]), (columns, vec![&input, &axes])] {
            let plan = op.gpu_plan_for(ops_core::DeviceClass::Hardware).unwrap();
            kernels.extend(
                plan.passes
                    .iter()
                    .map(|p| p.kernel.key.split('/').nth(1).unwrap()),
            );
            same_on_both(&ctx, op.as_ref(), &inputs);
        }
    }
    for k in ["reduce_split_lanes_tree", "reduce_split_columns"] {
        assert!(kernels.contains(k), "{kernels:?}");
    }
}

/// Outputs of 65,535² INT64 elements (32 GiB) from inputs of a few bytes
/// (an Expand, a Pad, a OneHot and a broadcast Add): both backends refuse
/// them with `TooLarge` naming the host limit, before allocating anything,
/// and the same operators within the limit still run.
#[test]
fn outputs_past_the_host_limit_are_too_large() {
    let n = 65_535u32;
    let int64 = |sizes: &[u32], v: &[i64]| HostTensor::from_slice(sizes.to_vec(), v).unwrap();
    let none = |dtype| HostTensor::zeros(TensorDesc::new(dtype, [0])).unwrap();
    let cases = |n: u32| -> Vec<(Box<dyn Operator>, Vec<HostTensor>)> {
        let seven = int64(&[1], &[7]);
        let shape = int64(&[2], &[n.into(), n.into()]);
        let expand = ops::onnx::ExpandDesc::builder()
            .input(seven.desc().clone())
            .shape(shape.clone())
            .build()
            .unwrap();
        let one = int64(&[1, 1], &[5]);
        let pads = int64(&[4], &[0, 0, i64::from(n) - 1, i64::from(n) - 1]);
        let pad = ops::onnx::PadDesc::builder()
            .data(one.desc().clone())
            .pads(pads.clone())
            .constant_value(none(DataType::Int64))
            .axes(none(DataType::Int64))
            .build()
            .unwrap();
        let index = int64(&[1], &[0]);
        let depth = int64(&[], &[i64::from(n) * i64::from(n)]);
        let values = int64(&[2], &[0, 1]);
        let one_hot = ops::onnx::OneHotDesc::builder()
            .indices(index.desc().clone())
            .depth(depth.clone())
            .values(values.desc().clone())
            .build()
            .unwrap();
        let column = int64(&[n, 1], &vec![1; n as usize]);
        let row = int64(&[1, n], &vec![2; n as usize]);
        let add = ops::onnx::AddDesc::builder()
            .a(column.desc().clone())
            .b(row.desc().clone())
            .build()
            .unwrap();
        vec![
            (Box::new(expand), vec![seven, shape]),
            (
                Box::new(pad),
                vec![one, pads, none(DataType::Int64), none(DataType::Int64)],
            ),
            (Box::new(one_hot), vec![index, depth, values]),
            (Box::new(add), vec![column, row]),
        ]
    };
    for (op, inputs) in cases(n) {
        let inputs: Vec<&HostTensor> = inputs.iter().collect();
        let bytes = u64::from(n) * u64::from(n) * 8;
        for (backend, r) in [
            ("cpu", op.run_cpu(&inputs)),
            ("gpu", gpu().run(&*op, &inputs)),
        ] {
            let (what, limit) = too_large(r);
            assert!(
                what.contains(&format!("of {bytes} bytes")),
                "{backend}: {what}"
            );
            assert!(
                limit.contains("host limit") && limit.contains("OPS_HOST_LIMIT"),
                "{backend}: {limit}"
            );
        }
    }
    for (op, inputs) in cases(3) {
        let inputs: Vec<&HostTensor> = inputs.iter().collect();
        same_on_both(gpu(), &*op, &inputs);
    }
}
