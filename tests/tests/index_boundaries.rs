//! Correct at every size, for the gather and scatter patterns: every plan
//! variant of GatherND1 and Scatter, run through the catalog operators on
//! the GPU against the CPU reference at the sizes where their planners'
//! choices change.
//!
//! As for reductions (`reduce_boundaries.rs`), the boundaries come from the
//! planners themselves: each family of shapes varies one extent (a slice's
//! length, the columns of a scatter, its walk along the axis, the tuple
//! count) and every extent where `GatherNdGeometry::variant_on` or
//! `ScatterGeometry::strategy_on` changes on either device class is run
//! just below, at and above. The per-thread work arithmetic (work items a
//! thread, vectors a thread, rows between barriers) adds the extents around
//! its multiples. At each size every plan of
//! `Operator::gpu_plan_variants` runs, for 8-, 16-, 32- and 64-bit data
//! where the tables have them, with random data and indices and with every
//! index equal (collisions everywhere), on the shared context and through
//! the segmented kernels (`segmented_context_for`).

use std::collections::BTreeSet;

use ops_core::family::gather_nd::{
    single_vector_items, GatherNdGeometry, ELEMENTS_PER_THREAD, WORKGROUP_SIZE,
};
use ops_core::family::scatter::{ScatterGeometry, LOCKSTEP_ROWS};
use ops_core::fuzz::{data_tensor, Rng};
use ops_core::{DataType, DeviceClass, HostTensor, Operator, MAX_THREAD_STEPS};
use ops_tests::{assert_bitwise_eq, gather_nd1, gpu, scatter_axis0, segmented_context_for};

/// Index data: `count` values in `[-bound, bound)` (a quarter of them
/// negative, counting from the end), random or all one value, INT32 or
/// INT64 (word pairs) at random.
fn index_tensor(sizes: &[u32], bound: u32, same: bool, rng: &mut Rng) -> HostTensor {
    let count: u64 = sizes.iter().map(|&s| u64::from(s)).product();
    let bound = i64::from(bound);
    let draw = |rng: &mut Rng| {
        let v = rng.below(bound as u64) as i64;
        if rng.below(4) == 0 {
            v - bound
        } else {
            v
        }
    };
    let fixed = draw(rng);
    let values: Vec<i64> = (0..count)
        .map(|_| if same { fixed } else { draw(rng) })
        .collect();
    if rng.below(2) == 0 {
        HostTensor::from_slice(sizes.to_vec(), &values).unwrap()
    } else {
        let narrow: Vec<i32> = values.iter().map(|&v| v as i32).collect();
        HostTensor::from_slice(sizes.to_vec(), &narrow).unwrap()
    }
}

/// Runs every plan variant of `op` against its CPU reference, bit for bit;
/// returns the number of plans run.
fn every_plan(op: &dyn Operator, inputs: &[&HostTensor], what: &str) -> usize {
    every_plan_by(op, inputs, what, &|g, w, context| {
        assert_bitwise_eq(g, w, context)
    })
}

/// [`every_plan`] within the operator's accuracy contract (exact operators:
/// bits equal, except NaN payloads, which arithmetic does not keep).
fn every_plan_within(op: &dyn Operator, inputs: &[&HostTensor], what: &str) -> usize {
    let tolerance = op.tolerance();
    every_plan_by(op, inputs, what, &|g, w, context| {
        if let Err(e) = ops_core::fuzz::compare_within(
            std::slice::from_ref(g),
            std::slice::from_ref(w),
            tolerance,
        ) {
            panic!("{context}: {e}");
        }
    })
}

fn every_plan_by(
    op: &dyn Operator,
    inputs: &[&HostTensor],
    what: &str,
    same: &dyn Fn(&HostTensor, &HostTensor, &str),
) -> usize {
    let want = op
        .run_cpu(inputs)
        .unwrap_or_else(|e| panic!("{what}: cpu: {e}"));
    let plans = op
        .gpu_plan_variants()
        .unwrap_or_else(|e| panic!("{what}: plans: {e}"));
    let start = std::time::Instant::now();
    for (name, plan) in &plans {
        let got = gpu()
            .run_plan(op, inputs, plan)
            .unwrap_or_else(|e| panic!("{what} {name}: {e}"));
        for (g, w) in got.iter().zip(&want) {
            same(g, w, &format!("{what} {name}"));
        }
        // Through the segmented kernels too, the largest buffer bound in 2
        // to 4 segments.
        let bytes = inputs
            .iter()
            .map(|t| t.bytes().len())
            .chain(want.iter().map(|t| t.bytes().len()))
            .map(|b| b as u64)
            .chain(plan.scratch_bytes.iter().copied())
            .max()
            .unwrap_or(0);
        if let Some(seg) = segmented_context_for(bytes) {
            let got = seg
                .run_plan(op, inputs, plan)
                .unwrap_or_else(|e| panic!("{what} {name}, segmented: {e}"));
            for (g, w) in got.iter().zip(&want) {
                same(g, w, &format!("{what} {name}, segmented"));
            }
        }
    }
    eprintln!(
        "{what}: {} plans, {:.2} s",
        plans.len(),
        start.elapsed().as_secs_f64()
    );
    plans.len()
}

/// The extents `first, first + step, ...` up to `max` where `choice`
/// changes, each with its neighbours (steps that keep the alignment of the
/// extent fixed: a change between the same two choices counts twice at
/// most), plus the first three multiples of each of `multiples` (and their
/// neighbours) up to `max`.
fn changes<T: PartialEq + Clone>(
    first: u64,
    step: u64,
    max: u64,
    choice: impl Fn(u64) -> T,
    multiples: &[u64],
) -> BTreeSet<u64> {
    let mut out = BTreeSet::new();
    let mut last = choice(first);
    let mut seen: Vec<(T, T, usize)> = Vec::new();
    let mut n = first + step;
    while n <= max {
        let c = choice(n);
        if c != last {
            let count = match seen.iter_mut().find(|(a, b, _)| *a == last && *b == c) {
                Some(entry) => {
                    entry.2 += 1;
                    entry.2
                }
                None => {
                    seen.push((last.clone(), c.clone(), 1));
                    1
                }
            };
            if count <= 2 {
                out.extend([n - step, n, n + step].into_iter().filter(|&m| m <= max));
            }
            last = c;
        }
        n += step;
    }
    for &m in multiples {
        for k in 1..=3 {
            out.extend(
                [k * m - 1, k * m, k * m + 1]
                    .into_iter()
                    .filter(|&x| x >= 1 && x <= max),
            );
        }
    }
    out
}

const CLASSES: [DeviceClass; 2] = [DeviceClass::Software, DeviceClass::Hardware];

#[test]
fn gather_variants_at_their_boundaries() {
    let mut rng = Rng::new(0x6a7e);
    let (mut sizes, mut runs) = (0usize, 0usize);
    let mut seen = BTreeSet::new();
    for dt in [
        DataType::Uint8,
        DataType::Float16,
        DataType::Float32,
        DataType::Int32,
    ] {
        // Slices of n elements, [3, n] gathered by [5, 1] tuples.
        let variant = |n: u64| {
            let g = GatherNdGeometry::new(&[3, n as u32], &[5, 1], 2, 2, 0).unwrap();
            CLASSES.map(|c| g.variant_on(c, dt))
        };
        // Slices of whole 16-byte vectors, and slices one element past.
        let slices: BTreeSet<u64> = [16, 17]
            .into_iter()
            .flat_map(|first| changes(first, 16, 20_000, variant, &[]))
            .collect();
        for n in slices {
            let input = data_tensor(dt, &[3, n as u32], &mut rng);
            for same in [false, true] {
                let idx = index_tensor(&[5, 1], 3, same, &mut rng);
                let op = gather_nd1(&input, &idx, 2);
                runs += every_plan(
                    &op,
                    &[&input, &idx],
                    &format!("GatherND1 {dt} slices of {n}"),
                );
                seen.extend(op.gpu_plan_variants().unwrap().into_iter().map(|(v, _)| v));
            }
            sizes += 1;
        }
        // Single elements gathered by n tuples, around the
        // work a thread takes.
        let per_thread = [
            ELEMENTS_PER_THREAD * u64::from(WORKGROUP_SIZE),
            single_vector_items(dt) * u64::from(WORKGROUP_SIZE),
        ];
        // Tuples of two values into [64, 64], of one into [1, 64].
        let pairs = data_tensor(dt, &[64, 64], &mut rng);
        let row = data_tensor(dt, &[1, 64], &mut rng);
        for n in changes(1, 1, 4 * per_thread[0], |_| (), &per_thread) {
            for (input, tuple, input_dims) in [(&pairs, 2, 2), (&row, 1, 1)] {
                let idx = index_tensor(&[n as u32, tuple], 64, false, &mut rng);
                let op = gather_nd1(input, &idx, input_dims);
                let what = format!("GatherND1 {dt} {n} elements by tuples of {tuple}");
                runs += every_plan(&op, &[input, &idx], &what);
                seen.extend(op.gpu_plan_variants().unwrap().into_iter().map(|(v, _)| v));
                sizes += 1;
            }
        }
    }
    println!("GatherND1: {sizes} sizes, {runs} plans run, variants {seen:?}");
    for v in ops_core::family::gather_nd::GatherVariant::ALL {
        assert!(seen.contains(v.name()), "{} never ran", v.name());
    }
}

#[test]
fn scatter_strategies_at_their_boundaries() {
    let mut rng = Rng::new(0x5ca7);
    let (mut sizes, mut runs) = (0usize, 0usize);
    let mut seen = BTreeSet::new();
    for dt in [
        DataType::Uint8,
        DataType::Float16,
        DataType::Float32,
        DataType::Int64,
    ] {
        let geometry = |rows: u64, columns: u64, walk: u64| {
            ScatterGeometry::new(
                &[rows as u32, columns as u32],
                &[walk as u32, columns as u32],
                0,
            )
            .unwrap()
        };
        // Columns scanned, walks of 12 updates into 16 rows.
        let by_columns = |n: u64| {
            let g = geometry(16, n, 12);
            CLASSES.map(|c| g.strategy_on(c, dt))
        };
        let mut shapes: Vec<(u64, u64, u64)> = [16, 17]
            .into_iter()
            .flat_map(|first| changes(first, 16, 70_000, by_columns, &[]))
            .map(|n| (16, n, 12))
            .collect();
        // Walks scanned, 64 columns, and the rows between barriers.
        let by_walk = |n: u64| {
            let g = geometry(n.max(2), 64, n);
            CLASSES.map(|c| g.strategy_on(c, dt))
        };
        shapes.extend(
            changes(
                1,
                1,
                MAX_THREAD_STEPS + 1,
                by_walk,
                &[u64::from(LOCKSTEP_ROWS)],
            )
            .into_iter()
            .map(|n| (n.max(2), 64, n)),
        );
        for (rows, columns, walk) in shapes {
            let x = data_tensor(dt, &[rows as u32, columns as u32], &mut rng);
            let up = data_tensor(dt, &[walk as u32, columns as u32], &mut rng);
            for same in [false, true] {
                let idx = index_tensor(&[walk as u32, columns as u32], rows as u32, same, &mut rng);
                let op = scatter_axis0(&x, &idx, &up);
                let what = format!("Scatter {dt} [{rows}, {columns}] walk {walk} same {same}");
                runs += every_plan(&op, &[&x, &idx, &up], &what);
                seen.extend(op.gpu_plan_variants().unwrap().into_iter().map(|(v, _)| v));
            }
            sizes += 1;
        }
    }
    println!("Scatter: {sizes} sizes, {runs} plans run, strategies {seen:?}");
    for s in ["TwoPass", "Columns", "ColumnWords", "ColumnVectors"] {
        assert!(seen.contains(s), "{s} never ran");
    }
}

/// Gathers along an axis (every batch before the axis reading the same
/// indices) at the slice lengths where the gather planner changes its
/// variant, and element gathers at the work a thread takes (output
/// elements, or words of 8- and 16-bit data, around multiples of
/// `ELEMENTS_PER_THREAD * WORKGROUP_SIZE`), with ONNX's indices smaller
/// than the data off the axis.
#[test]
fn axis_and_element_gathers_at_their_boundaries() {
    use ops_core::family::gather_elements as ge;
    use ops_core::family::gather_nd::GatherShape;
    let mut rng = Rng::new(0x6a7f);
    let (mut sizes, mut runs) = (0usize, 0usize);
    let mut seen = BTreeSet::new();
    for dt in [
        DataType::Uint8,
        DataType::Float16,
        DataType::Float32,
        DataType::Int64,
    ] {
        // [2, 4, n] gathered along axis 1 by [3] indices: two batches.
        let variant = |n: u64| {
            let shape = GatherShape::Axis {
                axis: 1,
                indices_rank: 1,
            };
            let g = GatherNdGeometry::of(&[2, 4, n as u32], &[3], shape).unwrap();
            CLASSES.map(|c| g.variant_on(c, dt))
        };
        let slices: BTreeSet<u64> = [16, 17]
            .into_iter()
            .flat_map(|first| changes(first, 16, 8_000, variant, &[]))
            .collect();
        for n in slices {
            let data = data_tensor(dt, &[2, 4, n as u32], &mut rng);
            for same in [false, true] {
                let idx = index_tensor(&[3], 4, same, &mut rng);
                let op = ops::onnx::GatherDesc::builder()
                    .data(data.desc().clone())
                    .indices(idx.desc().clone())
                    .axis(1)
                    .build()
                    .unwrap();
                let what = format!("onnx::Gather {dt} slices of {n}");
                runs += every_plan(&op, &[&data, &idx], &what);
                seen.extend(op.gpu_plan_variants().unwrap().into_iter().map(|(v, _)| v));
            }
            sizes += 1;
        }
        // Element gathers of n output elements along axis 0 of [5, n + 3]
        // data by [2, n] indices.
        let per_thread = ge::ELEMENTS_PER_THREAD * u64::from(ge::WORKGROUP_SIZE);
        let lanes = 4 / dt.size_bytes().min(4) as u64;
        for n in changes(
            1,
            1,
            3 * per_thread * lanes,
            |_| (),
            &[per_thread * lanes / 2],
        ) {
            let data = data_tensor(dt, &[5, n as u32 + 3], &mut rng);
            let idx = index_tensor(&[2, n as u32], 5, false, &mut rng);
            let op = ops::onnx::GatherElementsDesc::builder()
                .data(data.desc().clone())
                .indices(idx.desc().clone())
                .axis(0)
                .build()
                .unwrap();
            let what = format!("onnx::GatherElements {dt} [2, {n}] from [5, {}]", n + 3);
            runs += every_plan(&op, &[&data, &idx], &what);
            sizes += 1;
        }
    }
    println!("Gather along an axis and GatherElements: {sizes} sizes, {runs} plans run, gather variants {seen:?}");
    for v in ["gather_nd_elements", "gather_nd_rows", "gather_nd_vectors"] {
        assert!(seen.contains(v), "{v} never ran along an axis");
    }
}

/// Scatters with a declared combine (ONNX ScatterElements) at the walk
/// lengths where the plan adds a pass (multiples of `WALK_STEPS`), and at
/// column counts around a workgroup: a replacement and a sum, 8-, 16-, 32-
/// and 64-bit data, every update of a column on one element (collisions
/// everywhere) or spread, plain and segmented.
#[test]
fn combining_scatters_at_their_boundaries() {
    use ops::onnx::scatterelements::ScatterReduction;
    use ops_core::family::scatter::{
        COMBINE_WALK_STEPS as WALK_STEPS, WORKGROUP_SIZE as COMBINE_WG,
    };
    let mut rng = Rng::new(0x5ca8);
    let (mut sizes, mut runs) = (0usize, 0usize);
    let mut passes = BTreeSet::new();
    for dt in [
        DataType::Uint8,
        DataType::Float16,
        DataType::Float32,
        DataType::Int64,
    ] {
        // (walk, columns): walks across the pass boundaries of a few
        // columns, then columns across a workgroup.
        let mut shapes: Vec<(u64, u64)> = [
            WALK_STEPS - 1,
            WALK_STEPS,
            WALK_STEPS + 1,
            2 * WALK_STEPS + 1,
        ]
        .into_iter()
        .map(|walk| (walk, 3))
        .collect();
        let wg = u64::from(COMBINE_WG);
        shapes.extend([wg - 1, wg, wg + 1, 2 * wg + 1].into_iter().map(|c| (5, c)));
        for (walk, columns) in shapes {
            let rows = 4u32;
            let data = data_tensor(dt, &[rows, columns as u32], &mut rng);
            let updates = data_tensor(dt, &[walk as u32, columns as u32], &mut rng);
            for (reduction, same) in [
                (ScatterReduction::None, false),
                (ScatterReduction::Add, true),
                (ScatterReduction::Max, false),
            ] {
                let idx = index_tensor(&[walk as u32, columns as u32], rows, same, &mut rng);
                let op = ops::onnx::ScatterElementsDesc::builder()
                    .data(data.desc().clone())
                    .indices(idx.desc().clone())
                    .updates(updates.desc().clone())
                    .axis(0)
                    .reduction(reduction)
                    .build()
                    .unwrap();
                let what = format!(
                    "onnx::ScatterElements {dt} {reduction:?} walk {walk}, {columns} columns"
                );
                runs += every_plan_within(&op, &[&data, &idx, &updates], &what);
                passes.insert(op.gpu_plan_for(DeviceClass::Software).unwrap().passes.len());
            }
            sizes += 1;
        }
    }
    println!("combining scatters: {sizes} sizes, {runs} plans run, pass counts {passes:?}");
    assert!(passes.contains(&3), "no walk took three passes: {passes:?}");
}

/// ONNX ScatterND at the tuple counts where the plan adds a pass
/// (multiples of `WALK_STEPS`) and at slice lengths around a workgroup
/// (threads are slice positions): a replacement and a sum, 8-, 16-, 32- and
/// 64-bit data, tuples all naming one slice or spread, plain and segmented.
#[test]
fn scatter_nd_at_its_boundaries() {
    use ops::onnx::scatternd::ScatterNDReduction;
    use ops_core::family::scatter::{ND_WALK_STEPS as WALK_STEPS, WORKGROUP_SIZE as ND_WG};
    let mut rng = Rng::new(0x5ca9);
    let (mut sizes, mut runs) = (0usize, 0usize);
    let mut passes = BTreeSet::new();
    for dt in [
        DataType::Uint8,
        DataType::Float16,
        DataType::Float32,
        DataType::Int64,
    ] {
        // (tuples, slice length) into a [6, slice] input by one-value tuples.
        let mut shapes: Vec<(u64, u64)> = [
            WALK_STEPS - 1,
            WALK_STEPS,
            WALK_STEPS + 1,
            2 * WALK_STEPS + 1,
        ]
        .into_iter()
        .map(|t| (t, 1))
        .collect();
        let wg = u64::from(ND_WG);
        shapes.extend([wg - 1, wg, wg + 1, 2 * wg + 1].into_iter().map(|s| (7, s)));
        for (tuples, slice) in shapes {
            let data = data_tensor(dt, &[6, slice as u32], &mut rng);
            let updates = data_tensor(dt, &[tuples as u32, slice as u32], &mut rng);
            for (reduction, same) in [
                (ScatterNDReduction::None, false),
                (ScatterNDReduction::Add, true),
                (ScatterNDReduction::Min, false),
            ] {
                let idx = index_tensor(&[tuples as u32, 1], 6, same, &mut rng);
                let op = ops::onnx::ScatterNDDesc::builder()
                    .data(data.desc().clone())
                    .indices(idx.desc().clone())
                    .updates(updates.desc().clone())
                    .reduction(reduction)
                    .build()
                    .unwrap();
                let what = format!(
                    "onnx::ScatterND {dt} {reduction:?} {tuples} tuples of slices of {slice}"
                );
                runs += every_plan_within(&op, &[&data, &idx, &updates], &what);
                passes.insert(op.gpu_plan_for(DeviceClass::Software).unwrap().passes.len());
            }
            sizes += 1;
        }
    }
    println!("ScatterND: {sizes} sizes, {runs} plans run, pass counts {passes:?}");
    assert!(
        passes.contains(&3),
        "no scatter took three passes: {passes:?}"
    );
}

/// The `view` family (ONNX Transpose, Tile) and the `pad` family (ONNX Pad,
/// reflecting) at output counts around the
/// work a thread takes (`ELEMENTS_PER_THREAD * WORKGROUP_SIZE` elements, or
/// words of 8- and 16-bit data), plain and segmented.
#[test]
fn views_at_their_boundaries() {
    use ops_core::family::view::{ELEMENTS_PER_THREAD as VIEW_EPT, WORKGROUP_SIZE as VIEW_WG};
    let mut rng = Rng::new(0x71e3);
    let (mut sizes, mut runs) = (0usize, 0usize);
    for dt in [
        DataType::Uint8,
        DataType::Float16,
        DataType::Float32,
        DataType::Int64,
    ] {
        let lanes = 4 / dt.size_bytes().min(4) as u64;
        let per_thread = VIEW_EPT * u64::from(VIEW_WG) * lanes;
        for n in changes(1, 1, 3 * per_thread, |_| (), &[per_thread / 2]) {
            // [2, n] transposed to [n, 2]: 2n output elements.
            let data = data_tensor(dt, &[2, n as u32], &mut rng);
            let op = ops::onnx::TransposeDesc::builder()
                .data(data.desc().clone())
                .build()
                .unwrap();
            runs += every_plan(&op, &[&data], &format!("onnx::Transpose {dt} [2, {n}]"));
            // [1, n] tiled to [2, n].
            let row = data_tensor(dt, &[1, n as u32], &mut rng);
            let repeats = HostTensor::from_slice([2], &[2i64, 1]).unwrap();
            let op = ops::onnx::TileDesc::builder()
                .input(row.desc().clone())
                .repeats(repeats.clone())
                .build()
                .unwrap();
            runs += every_plan(&op, &[&row, &repeats], &format!("onnx::Tile {dt} [1, {n}]"));
            // [2, n] reflected by one column each side: 2(n + 2) elements.
            if n >= 2 {
                let pads = HostTensor::from_slice([4], &[0i64, 1, 0, 1]).unwrap();
                let none = HostTensor::zeros(ops_core::TensorDesc::new(dt, [0])).unwrap();
                let axes =
                    HostTensor::zeros(ops_core::TensorDesc::new(DataType::Int64, [0])).unwrap();
                let op = ops::onnx::PadDesc::builder()
                    .data(data.desc().clone())
                    .pads(pads.clone())
                    .constant_value(none.clone())
                    .axes(axes.clone())
                    .mode(ops::onnx::pad::PadMode::Reflect)
                    .build()
                    .unwrap();
                runs += every_plan(
                    &op,
                    &[&data, &pads, &none, &axes],
                    &format!("onnx::Pad {dt} [2, {n}]"),
                );
            }
            sizes += 1;
        }
    }
    println!("views: {sizes} sizes, {runs} plans run");
    assert!(sizes >= 36, "{sizes} sizes");
}

/// ONNX Transpose of the last two axes of 66,000 `side` x `side`
/// matrices of `dt`: its plan `schedule` takes a workgroup a matrix, past
/// the 65,535 workgroups of one grid dimension. Runs every plan and
/// returns how many ran.
fn transposes_past_one_grid_dimension(
    dt: DataType,
    side: u32,
    schedule: &str,
    rng: &mut Rng,
) -> usize {
    let data = data_tensor(dt, &[66_000, side, side], rng);
    let op = ops::onnx::TransposeDesc::builder()
        .data(data.desc().clone())
        .perm([0i64, 2, 1])
        .build()
        .unwrap();
    let plans = op.gpu_plan_variants().unwrap();
    let (_, plan) = plans
        .iter()
        .find(|(n, _)| n == schedule)
        .unwrap_or_else(|| panic!("a {schedule} plan"));
    assert_eq!(plan.passes[0].workgroups, 66_000);
    every_plan(
        &op,
        &[&data],
        &format!("onnx::Transpose {dt} [66000, {side}, {side}]"),
    )
}

/// The tiled transpose of the `view` family (`Schedule::Tiled`): ONNX
/// Transpose of the last two axes, `[batch, columns, rows]` to `[batch,
/// rows, columns]`, at extents around the tile's side and the planner's
/// threshold (`TILED_MIN_EXTENT`), ragged and tile-aligned, one matrix
/// and several, for 8-, 16-, 32- and 64-bit data (8- and 16-bit tiles
/// need whole words: the extents that are not run the walk alone),
/// every plan (tiled and walk), plain and segmented; and a transpose of
/// more than 65,535 tiles, which the runtime spreads over two grid
/// dimensions.
#[test]
fn transposes_in_tiles() {
    use ops_core::family::view::{Schedule, TILE, TILED_MIN_EXTENT};
    let mut rng = Rng::new(0x711e);
    let t = TILE;
    let m = TILED_MIN_EXTENT;
    let extents = [1, 2, m - 1, m, m + 1, t - 1, t, t + 1, 100];
    let (mut tiled, mut runs) = (0usize, 0usize);
    let transpose = |data: &HostTensor| {
        ops::onnx::TransposeDesc::builder()
            .data(data.desc().clone())
            .perm([0i64, 2, 1])
            .build()
            .unwrap()
    };
    for dt in [
        DataType::Uint8,
        DataType::Float16,
        DataType::Float32,
        DataType::Int64,
    ] {
        for (k, &rows) in extents.iter().enumerate() {
            for (j, &columns) in extents.iter().enumerate() {
                // One matrix, or three (a batch stride that is whole words
                // whenever the rows and columns are).
                let batch = if (k + j) % 2 == 0 { 1 } else { 3 };
                let data = data_tensor(dt, &[batch, columns, rows], &mut rng);
                let op = transpose(&data);
                let plans = op.gpu_plan_variants().unwrap();
                if plans.iter().any(|(n, _)| n == Schedule::Tiled.name()) {
                    tiled += 1;
                }
                runs += every_plan(
                    &op,
                    &[&data],
                    &format!("onnx::Transpose {dt} [{batch}, {columns}, {rows}]"),
                );
            }
        }
    }
    // 66,000 matrices of 4 x 4: a tile each, past the 65,535 workgroups
    // of one grid dimension.
    for dt in [DataType::Uint8, DataType::Float16, DataType::Int64] {
        runs += transposes_past_one_grid_dimension(dt, 4, Schedule::Tiled.name(), &mut rng);
    }
    println!("tiled transposes: {tiled} shapes with a tiled plan, {runs} plans run");
    assert!(tiled >= 150, "{tiled} shapes with a tiled plan");
}

/// The register-block transpose of the `view` family (`Schedule::Blocks`,
/// what a CPU adapter runs): ONNX Transpose of the last two axes at
/// extents of one block, around a workgroup's tile of `BLOCK_GRID` blocks
/// (one short, at, one past) and one element past a block (no block
/// plan: not whole vectors), one matrix and several, for 8-, 16-, 32- and
/// 64-bit data (blocks of 16, 8, 4 and 2 elements), every plan, plain and
/// segmented; and a transpose of more than 65,535 tiles.
#[test]
fn transposes_in_register_blocks() {
    use ops_core::family::view::{block_side, Schedule, BLOCK_GRID};
    let mut rng = Rng::new(0xb10c);
    let (mut blocks, mut runs) = (0usize, 0usize);
    let transpose = |data: &HostTensor| {
        ops::onnx::TransposeDesc::builder()
            .data(data.desc().clone())
            .perm([0i64, 2, 1])
            .build()
            .unwrap()
    };
    let has_blocks = |op: &dyn Operator| {
        let plans = op.gpu_plan_variants().unwrap();
        plans.iter().any(|(n, _)| n == Schedule::Blocks.name())
    };
    for dt in [
        DataType::Uint8,
        DataType::Float16,
        DataType::Float32,
        DataType::Int64,
    ] {
        let s = block_side(dt);
        let t = BLOCK_GRID * s;
        let extents = [s, t - s, t, t + s, s + 1];
        for (k, &rows) in extents.iter().enumerate() {
            for (j, &columns) in extents.iter().enumerate() {
                let batch = if (k + j) % 2 == 0 { 1 } else { 3 };
                let data = data_tensor(dt, &[batch, columns, rows], &mut rng);
                let op = transpose(&data);
                let whole = rows % s == 0 && columns % s == 0;
                assert_eq!(has_blocks(&op), whole, "{dt} [{batch}, {columns}, {rows}]");
                blocks += usize::from(whole);
                runs += every_plan(
                    &op,
                    &[&data],
                    &format!("onnx::Transpose {dt} [{batch}, {columns}, {rows}]"),
                );
            }
        }
        // 66,000 matrices of one block each: a tile each, past the
        // 65,535 workgroups of one grid dimension.
        runs += transposes_past_one_grid_dimension(dt, s, Schedule::Blocks.name(), &mut rng);
    }
    println!("block transposes: {blocks} shapes with a blocks plan, {runs} plans run");
    assert_eq!(blocks, 4 * 16, "{blocks} shapes with a blocks plan");
}
