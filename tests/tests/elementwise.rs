//! The element-wise family on the GPU against the CPU backend and the
//! accuracy contract's yardstick (computed in `f64`, rounded once).
//!
//! - Every unary float operator of the catalog on every FLOAT16 value and
//!   on FLOAT32 edge values plus 65,536 values spread over every binade,
//!   within the operator's declared bound.
//! - The binary float operators on every pair of FLOAT32 and FLOAT16 edge
//!   values (NaN, the infinities, both zeros, subnormals, extremes),
//!   broadcast as a column against a row.
//! - FLOAT64 (word pairs) `exp`, `log`, `tanh`, `pow` and the activations
//!   built on them, on edge values and seeded batches across the range
//!   (the thresholds of overflow and underflow, next to 1, tiny), within
//!   their bounds in FLOAT64 ULPs, special results exact.
//! - The kernel's thresholds: packed 8- and 16-bit outputs whose element
//!   count is not a multiple of a word, broadcasting of every dimension
//!   slot, the segmented variant of one-input kernels, the error of
//!   several-input kernels beyond one binding, and a dispatch of more than
//!   65,535 workgroups.
//! - The planner's schedules (`Walk`, `Rows`, `Vectors`) at and across
//!   their thresholds, each checked in every schedule the call can run in.

use std::collections::BTreeMap;

use ops_core::family::elementwise::Schedule;
use ops_core::fuzz::{compare_contract, edge_bits};
use ops_core::{DataType, HostTensor, OpArgs, OpError, Operator, TensorDesc};
use ops_gpu::Context;
use ops_tests::{gpu, tensor_with_edges, Rng};

/// Builds the ONNX operator `name` over `inputs` (by tensor name).
fn build(name: &str, inputs: &[(&str, &HostTensor)]) -> Box<dyn Operator> {
    build_in("onnx", name, inputs)
}

/// Builds the operator `name` of `namespace` over `inputs` (by tensor
/// name): the instance of a spec with optional or variadic tensors whose
/// inputs these are.
fn build_in(namespace: &str, name: &str, inputs: &[(&str, &HostTensor)]) -> Box<dyn Operator> {
    let names: Vec<&str> = inputs.iter().map(|(n, _)| *n).collect();
    let info = ops::catalog()
        .iter()
        .find(|i| i.namespace == namespace && i.name == name)
        .and_then(|i| i.instance_with_inputs(ops::catalog(), &names))
        .unwrap_or_else(|| panic!("no {namespace}::{name} of inputs {names:?}"));
    let args = OpArgs {
        tensors: inputs
            .iter()
            .map(|(n, t)| (n.to_string(), t.desc().clone()))
            .collect::<BTreeMap<_, _>>(),
        ..OpArgs::default()
    };
    (info.build)(&args).unwrap_or_else(|e| panic!("onnx::{name}: {e}"))
}

/// Runs `op` on `ctx` and on the CPU and holds the GPU to the accuracy
/// contract against the CPU's answer and the yardstick.
fn check(ctx: &Context, op: &dyn Operator, inputs: &[&HostTensor], context: &str) {
    let want = op
        .run_cpu(inputs)
        .unwrap_or_else(|e| panic!("{context}: cpu: {e}"));
    let yardstick = op.run_yardstick(inputs).unwrap();
    let got = ctx
        .run(op, inputs)
        .unwrap_or_else(|e| panic!("{context}: gpu: {e}"));
    if let Err(e) = compare_contract(&got, &want, &yardstick, op.tolerance()) {
        panic!("{context}: {e}");
    }
}

fn from_bits(dt: DataType, bits: impl Iterator<Item = u64>) -> HostTensor {
    let w = dt.size_bytes();
    let bytes: Vec<u8> = bits.flat_map(|b| b.to_le_bytes()[..w].to_vec()).collect();
    let n = (bytes.len() / w) as u32;
    HostTensor::from_bytes(TensorDesc::new(dt, [n]), bytes).unwrap()
}

/// Every FLOAT16 value; FLOAT32 edges and 65,536 values a fixed step apart
/// over all bit patterns (every binade, both signs, NaNs).
fn float_inputs(dt: DataType) -> HostTensor {
    match dt {
        DataType::Float16 => from_bits(dt, 0..1 << 16),
        _ => from_bits(
            dt,
            edge_bits(dt)
                .into_iter()
                .chain((0..1u64 << 16).map(|i| (i * 65_537) & 0xffff_ffff)),
        ),
    }
}

#[test]
fn unary_float_operators_meet_their_bounds_on_every_binade() {
    let ops = [
        ("Exp", "input"),
        ("Log", "input"),
        ("Tanh", "input"),
        ("Sqrt", "X"),
        ("Reciprocal", "X"),
        ("Sigmoid", "X"),
        ("Relu", "X"),
        ("LeakyRelu", "X"),
        ("Abs", "X"),
        ("Neg", "X"),
        ("Floor", "X"),
        ("Ceil", "X"),
        ("Round", "X"),
        ("Sign", "input"),
        ("IsNaN", "X"),
        ("IsInf", "X"),
        ("Elu", "X"),
        ("HardSigmoid", "X"),
    ];
    // The DirectML ones, with their defaults (no `ScaleBias`).
    let dml = [
        "ElementWiseIdentity",
        "ElementWiseAbs",
        "ElementWiseCeil",
        "ElementWiseFloor",
        "ElementWiseRound",
        "ElementWiseSign",
        "ElementWiseNegate",
        "ElementWiseSqrt",
        "ElementWiseExp",
        "ElementWiseLog",
        "ElementWiseRecip",
        "ActivationRelu",
        "ActivationLeakyRelu",
        "ActivationSigmoid",
        "ActivationTanh",
        "ActivationElu",
        "ActivationHardSigmoid",
    ];
    for dt in [DataType::Float32, DataType::Float16] {
        let x = float_inputs(dt);
        for (name, input) in ops {
            let op = build(name, &[(&input.to_ascii_lowercase(), &x)]);
            check(gpu(), op.as_ref(), &[&x], &format!("{name} {dt}"));
        }
        for name in dml {
            let op = build_in("", name, &[("input", &x)]);
            check(gpu(), op.as_ref(), &[&x], &format!("{name} {dt}"));
        }
    }
}

#[test]
fn binary_float_operators_on_every_pair_of_edge_values() {
    let ops = [
        ("Add", ["a", "b"]),
        ("Sub", ["a", "b"]),
        ("Mul", ["a", "b"]),
        ("Div", ["a", "b"]),
        ("Pow", ["x", "y"]),
        ("Max", ["data_0", "data_1"]),
        ("Min", ["data_0", "data_1"]),
        ("Equal", ["a", "b"]),
        ("Less", ["a", "b"]),
        ("GreaterOrEqual", ["a", "b"]),
    ];
    for dt in [DataType::Float32, DataType::Float16] {
        let edges = edge_bits(dt);
        let n = edges.len() as u32;
        let column = from_bits(dt, edges.iter().copied());
        let column =
            HostTensor::from_bytes(TensorDesc::new(dt, [n, 1]), column.into_bytes()).unwrap();
        let row = from_bits(dt, edges.iter().copied());
        for (name, [a, b]) in ops {
            let op = build(name, &[(a, &column), (b, &row)]);
            assert_eq!(op.output_descs()[0].sizes, [n, n], "{name}");
            check(
                gpu(),
                op.as_ref(),
                &[&column, &row],
                &format!("{name} {dt}"),
            );
        }
        // fmod needs its attribute.
        let info = ops::catalog()
            .iter()
            .find(|i| i.namespace == "onnx" && i.name == "Mod")
            .unwrap();
        let mut args = OpArgs::default();
        args.tensors.insert("a".into(), column.desc().clone());
        args.tensors.insert("b".into(), row.desc().clone());
        args.attributes
            .insert("fmod".into(), ops_core::AttrValue::Bool(true));
        let op = (info.build)(&args).unwrap();
        check(
            gpu(),
            op.as_ref(),
            &[&column, &row],
            &format!("Mod fmod {dt}"),
        );
    }
}

#[test]
fn packed_outputs_and_broadcasting_of_every_dimension_slot() {
    let mut rng = Rng::new(20);
    // 8- and 16-bit outputs whose counts leave a partial last word, and
    // a BOOL output from FLOAT32 inputs.
    for (dt, name) in [
        (DataType::Uint8, "Add"),
        (DataType::Int8, "Mul"),
        (DataType::Int16, "Sub"),
        (DataType::Float16, "Add"),
        (DataType::Float32, "Less"),
        (DataType::Int64, "Add"),
    ] {
        for count in [1u32, 2, 3, 5, 1023, 1025, 4099] {
            let a = tensor_with_edges(dt, &[count], &mut rng);
            let b = tensor_with_edges(dt, &[count], &mut rng);
            let op = build(name, &[("a", &a), ("b", &b)]);
            check(
                gpu(),
                op.as_ref(),
                &[&a, &b],
                &format!("{name} {dt} [{count}]"),
            );
        }
    }
    // Eight dimensions, each broadcast by one input or the other.
    let full = [2u32, 3, 1, 2, 3, 2, 1, 3];
    for k in 0..8 {
        let mut a_sizes = full;
        let mut b_sizes = full;
        a_sizes[k] = 1;
        b_sizes[(k + 3) % 8] = 1;
        let a = tensor_with_edges(DataType::Float32, &a_sizes, &mut rng);
        let b = tensor_with_edges(DataType::Float32, &b_sizes[k % 4..], &mut rng);
        let op = build("Add", &[("a", &a), ("b", &b)]);
        check(
            gpu(),
            op.as_ref(),
            &[&a, &b],
            &format!("Add broadcast slot {k}"),
        );
    }
}

/// The FLOAT64 words of a tensor.
fn f64_words(t: &HostTensor) -> Vec<u64> {
    t.bytes()
        .chunks(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

fn show_f64(bits: u64) -> String {
    format!("{:e} ({bits:#018x})", f64::from_bits(bits))
}

/// Runs `op` on the GPU and on the CPU and asserts its FLOAT64 output is
/// the CPU's bit for bit (any NaN matching any NaN); `operands(i)` names
/// the inputs of element `i` for the message.
fn check_f64_exact(
    op: &dyn Operator,
    inputs: &[&HostTensor],
    context: &str,
    operands: impl Fn(usize) -> Vec<u64>,
) {
    let want = op
        .run_cpu(inputs)
        .unwrap_or_else(|e| panic!("{context}: cpu: {e}"));
    let got = gpu()
        .run(op, inputs)
        .unwrap_or_else(|e| panic!("{context}: gpu: {e}"));
    assert_eq!(got[0].desc(), want[0].desc(), "{context}");
    let (g, w) = (f64_words(&got[0]), f64_words(&want[0]));
    let same =
        |a: u64, b: u64| a == b || (f64::from_bits(a).is_nan() && f64::from_bits(b).is_nan());
    let bad: Vec<usize> = (0..w.len()).filter(|&i| !same(g[i], w[i])).collect();
    if let Some(&i) = bad.first() {
        let args: Vec<String> = operands(i).into_iter().map(show_f64).collect();
        panic!(
            "{context}: {} of {} elements differ; the first, element {i} of ({}), is {}, expected {}",
            bad.len(),
            w.len(),
            args.join(", "),
            show_f64(g[i]),
            show_f64(w[i]),
        );
    }
}

/// ONNX `Mod` with `fmod` set (required for floats).
fn build_fmod(a: &HostTensor, b: &HostTensor) -> Box<dyn Operator> {
    let info = ops::catalog()
        .iter()
        .find(|i| i.namespace == "onnx" && i.name == "Mod")
        .unwrap();
    let mut args = OpArgs::default();
    args.tensors.insert("a".into(), a.desc().clone());
    args.tensors.insert("b".into(), b.desc().clone());
    args.attributes
        .insert("fmod".into(), ops_core::AttrValue::Bool(true));
    (info.build)(&args).unwrap()
}

/// FLOAT64 (word pairs on the GPU) through the operators that take it, on
/// every pair of its edge values (every edge value for the unary ones),
/// bit for bit as the CPU's `f64`.
#[test]
fn float64_operators_on_every_pair_of_edge_values() {
    let dt = DataType::Float64;
    let edges = edge_bits(dt);
    let n = edges.len() as u32;
    let column = from_bits(dt, edges.iter().copied());
    let column = HostTensor::from_bytes(TensorDesc::new(dt, [n, 1]), column.into_bytes()).unwrap();
    let row = from_bits(dt, edges.iter().copied());
    let pair = |i: usize| vec![edges[i / n as usize], edges[i % n as usize]];
    for (name, [a, b]) in [
        ("Add", ["a", "b"]),
        ("Sub", ["a", "b"]),
        ("Mul", ["a", "b"]),
        ("Div", ["a", "b"]),
        ("Mod", ["a", "b"]),
        ("Max", ["data_0", "data_1"]),
        ("Min", ["data_0", "data_1"]),
        ("Mean", ["data_0", "data_1"]),
        ("Equal", ["a", "b"]),
        ("Less", ["a", "b"]),
        ("GreaterOrEqual", ["a", "b"]),
    ] {
        let op = if name == "Mod" {
            build_fmod(&column, &row)
        } else {
            build(name, &[(a, &column), (b, &row)])
        };
        assert_eq!(op.output_descs()[0].sizes, [n, n], "{name}");
        if op.output_descs()[0].dtype == dt {
            check_f64_exact(op.as_ref(), &[&column, &row], &format!("{name} {dt}"), pair);
        } else {
            check(
                gpu(),
                op.as_ref(),
                &[&column, &row],
                &format!("{name} {dt}"),
            );
        }
    }
    for name in [
        "Sqrt",
        "Reciprocal",
        "Floor",
        "Ceil",
        "Round",
        "Neg",
        "Abs",
        "LeakyRelu",
    ] {
        let op = build(name, &[("x", &row)]);
        check_f64_exact(op.as_ref(), &[&row], &format!("{name} {dt}"), |i| {
            vec![edges[i]]
        });
    }
}

/// A random FLOAT64 of one of several kinds: any bit pattern, subnormals,
/// the exponents near 1, near the top and near the bottom of the range,
/// powers of two, integers and halves below 2^53, and significands of few
/// bits (exact quotients, products and roots).
fn random_f64(rng: &mut Rng) -> u64 {
    let sign = rng.next_u64() & 0x8000_0000_0000_0000;
    let fraction = rng.next_u64() & 0x000F_FFFF_FFFF_FFFF;
    let exp = |e: i64| (e as u64) << 52;
    let width = rng.below(54);
    let magnitude = match rng.below(9) {
        0 => rng.next_u64() & 0x7FFF_FFFF_FFFF_FFFF,
        1 => fraction >> rng.below(52),
        2 => exp(rng.range(963, 1083)) | fraction,
        3 => exp(rng.range(1990, 2046)) | fraction,
        4 => exp(rng.range(1, 60)) | fraction,
        5 => exp(rng.range(1, 2046)),
        6 => (rng.below(1 << width) as f64).to_bits(),
        7 => (rng.below(1 << width.min(52)) as f64 + 0.5).to_bits(),
        _ => exp(rng.range(900, 1150)) | (fraction & !((1 << rng.range(30, 52)) - 1)),
    };
    sign | magnitude
}

/// FLOAT64 `/`, `%` (fmod), `sqrt`, `floor`, `ceil` and `round` on random
/// bits of every kind ([`random_f64`]), bit for bit as the CPU's `f64`:
/// quotients overflowing and underflowing into subnormals, ties.
#[test]
fn float64_division_remainder_root_and_rounding_on_random_bits() {
    let dt = DataType::Float64;
    let mut rng = Rng::new(64);
    let n = 1usize << 17;
    let a: Vec<u64> = (0..n).map(|_| random_f64(&mut rng)).collect();
    let mut b: Vec<u64> = (0..n).map(|_| random_f64(&mut rng)).collect();
    // Quotients just around the largest finite and the smallest normal
    // values and halves of the smallest subnormal: a divisor of the
    // dividend's size shifted by a power of two, its fraction random or
    // the dividend's give or take a unit (ties below the subnormals).
    for i in 0..n / 8 {
        let target = [2045i64, 2046, 1, 0, -1, -52, -53][i % 7];
        let ea = ((a[i] >> 52) & 0x7FF) as i64;
        let eb = ea - target + 1022;
        if !(0..=2046).contains(&eb) {
            continue;
        }
        let fraction = match rng.below(3) {
            0 => b[i],
            1 => a[i],
            _ => a[i].wrapping_add(rng.below(3)).wrapping_sub(1),
        } & 0x800F_FFFF_FFFF_FFFF;
        b[i] = fraction | ((eb as u64) << 52);
    }
    // Remainders of values close in size.
    for i in n / 8..n / 4 {
        let ea = ((a[i] >> 52) & 0x7FF) as i64;
        let eb = (ea - rng.range(0, 64)).max(0);
        b[i] = (b[i] & 0x800F_FFFF_FFFF_FFFF) | ((eb as u64) << 52);
    }
    let (ta, tb) = (
        from_bits(dt, a.iter().copied()),
        from_bits(dt, b.iter().copied()),
    );
    let pair = |i: usize| vec![a[i], b[i]];
    let div = build("Div", &[("a", &ta), ("b", &tb)]);
    check_f64_exact(div.as_ref(), &[&ta, &tb], "Div FLOAT64 random", pair);
    let rem = build_fmod(&ta, &tb);
    check_f64_exact(rem.as_ref(), &[&ta, &tb], "Mod fmod FLOAT64 random", pair);
    // Roots of every kind, of exact squares, and of squares' neighbours.
    let mut x: Vec<u64> = a.iter().map(|&v| v & 0x7FFF_FFFF_FFFF_FFFF).collect();
    for i in 0..n / 4 {
        let r = f64::from_bits(x[i] & 0x7FFF_FFFF_FC00_0000).sqrt();
        let r = f64::from_bits(r.to_bits() & !0x3FF_FFFF);
        x[i] = (r * r).to_bits().wrapping_add([0u64, 1, u64::MAX][i % 3]);
    }
    x.extend(&a[..n / 8]);
    let tx = from_bits(dt, x.iter().copied());
    let sqrt = build("Sqrt", &[("x", &tx)]);
    check_f64_exact(sqrt.as_ref(), &[&tx], "Sqrt FLOAT64 random", |i| vec![x[i]]);
    for name in ["Floor", "Ceil", "Round", "Reciprocal"] {
        let op = build(name, &[("x", &ta)]);
        check_f64_exact(
            op.as_ref(),
            &[&ta],
            &format!("{name} FLOAT64 random"),
            |i| vec![a[i]],
        );
    }
}

#[test]
fn one_input_kernels_run_segmented_and_wider_ones_refuse_beyond_a_binding() {
    let ctx = Context::new()
        .unwrap_or_else(|e| panic!("GPU tests need an adapter: {e}"))
        .with_max_binding_size(4096);
    let mut rng = Rng::new(21);
    // 12 KiB tensors: three segments of 4 KiB each.
    for dt in [
        DataType::Float32,
        DataType::Float16,
        DataType::Int8,
        DataType::Float64,
    ] {
        let x = tensor_with_edges(dt, &[12_288 / dt.size_bytes() as u32 + 3], &mut rng);
        let name = if dt.is_float() { "Neg" } else { "Abs" };
        let op = build(name, &[("x", &x)]);
        check(&ctx, op.as_ref(), &[&x], &format!("{name} {dt} segmented"));
    }
    let a = tensor_with_edges(DataType::Float32, &[4096], &mut rng);
    let op = build("Add", &[("a", &a), ("b", &a)]);
    match ctx.run(op.as_ref(), &[&a, &a]) {
        Err(OpError::TooLarge { limit, .. }) => {
            assert!(limit.contains("max_storage_buffer_binding_size"), "{limit}")
        }
        other => panic!("Add beyond one binding: {other:?}"),
    }
}

/// Runs `name` over `inputs` in every schedule the call can run in, each
/// held to the contract against the CPU, after checking that the planner
/// picks `want`.
fn run_every_schedule(name: &str, inputs: &[(&str, &HostTensor)], want: Schedule) {
    let op = build(name, inputs);
    let tensors: Vec<&HostTensor> = inputs.iter().map(|(_, t)| *t).collect();
    let context = format!(
        "{name} {:?}",
        inputs
            .iter()
            .map(|(_, t)| (t.dtype(), t.sizes().to_vec()))
            .collect::<Vec<_>>()
    );
    let variants = op.gpu_plan_variants().unwrap();
    assert_eq!(variants[0].0, want.name(), "{context}: the planner's pick");
    assert_eq!(op.gpu_plan().unwrap(), variants[0].1, "{context}");
    let want_cpu = op.run_cpu(&tensors).unwrap();
    let yardstick = op.run_yardstick(&tensors).unwrap();
    for (variant, plan) in &variants {
        let got = gpu()
            .run_plan(op.as_ref(), &tensors, plan)
            .unwrap_or_else(|e| panic!("{context} {variant}: {e}"));
        if let Err(e) = compare_contract(&got, &want_cpu, &yardstick, op.tolerance()) {
            panic!("{context} {variant}: {e}");
        }
    }
}

/// The planner's schedules at and across their thresholds: two merged
/// dimensions whose rows hold one workgroup's items (`ROWS_MIN_ITEMS`) or
/// more in whole output vectors run `Vectors`, in whole output words but
/// not whole vectors `Rows`, one item fewer, a partial word or another
/// rank `Walk`; each schedule the call can run in (the planner's and
/// `Walk`) agrees with the CPU for row and column broadcasts, three
/// inputs, packed 8- and 16-bit outputs and 64-bit ones.
#[test]
fn schedules_at_and_across_their_thresholds() {
    use ops_core::family::elementwise::ROWS_MIN_ITEMS;
    let n = ROWS_MIN_ITEMS as u32;
    let mut rng = Rng::new(22);
    let walk = Schedule::Walk;
    let rows = Schedule::Rows;
    for (dt, lanes) in [
        (DataType::Float32, 1u32),
        (DataType::Float16, 2),
        (DataType::Int8, 4),
        (DataType::Int64, 1),
    ] {
        let row = n * lanes;
        // (rows, columns, schedule): below, at and past one workgroup's
        // items (at: whole vectors; past: a partial last vector), a partial
        // last block, a partial last word.
        let mut shapes = vec![
            (3, row - lanes, walk),
            (3, row, Schedule::Vectors),
            (3, row + lanes, rows),
            (2, 2 * row + lanes, rows),
            (2, 2 * row + 4 * lanes, Schedule::Vectors),
        ];
        if lanes > 1 {
            shapes.push((3, row + 1, walk));
        }
        for (m, cols, want) in shapes {
            let mut r = Rng::new(u64::from(m * cols));
            let a = tensor_with_edges(dt, &[m, cols], &mut r);
            let b_row = tensor_with_edges(dt, &[cols], &mut r);
            let b_col = tensor_with_edges(dt, &[m, 1], &mut r);
            run_every_schedule("Add", &[("a", &a), ("b", &b_row)], want);
            run_every_schedule("Sub", &[("a", &b_col), ("b", &a)], want);
            // Same shapes merge to one dimension.
            run_every_schedule("Mul", &[("a", &a), ("b", &a)], Schedule::Flat);
            let cond = tensor_with_edges(DataType::Bool, &[m, 1], &mut r);
            run_every_schedule(
                "Where",
                &[("condition", &cond), ("x", &b_row), ("y", &a)],
                want,
            );
        }
    }
    // A leading dimension of 1 and a scalar do not count as dimensions.
    let a = tensor_with_edges(DataType::Float32, &[1, 4, 1, n], &mut rng);
    let b = tensor_with_edges(DataType::Float32, &[1], &mut rng);
    let c = tensor_with_edges(DataType::Float32, &[4, 1, 1], &mut rng);
    run_every_schedule("Add", &[("a", &a), ("b", &b)], Schedule::Flat);
    run_every_schedule("Add", &[("a", &a), ("b", &c)], Schedule::Vectors);
    let a = tensor_with_edges(DataType::Float32, &[1, 4, 1, n + 1], &mut rng);
    run_every_schedule("Add", &[("a", &a), ("b", &c)], rows);
    // Three merged dimensions walk.
    let d = tensor_with_edges(DataType::Float32, &[2, 1, n], &mut rng);
    let e = tensor_with_edges(DataType::Float32, &[3, 1], &mut rng);
    run_every_schedule("Add", &[("a", &d), ("b", &e)], walk);
}

/// `Flat` at and across its threshold (one output vector: 16, 8 and 4
/// elements of 8-, 16- and 32/64-bit outputs) and with a partial last
/// vector, for every pairing of input and output widths the kernels
/// specialise: inputs read as words, one vector or several (`Where`'s BOOL
/// condition beside 64-bit values, comparisons of 64-bit inputs into BOOL),
/// an input of the output's shape beside a scalar one, and seven inputs.
#[test]
fn flat_at_and_across_its_threshold() {
    use ops_core::family::elementwise::vector_elements;
    for dt in [
        DataType::Uint8,
        DataType::Int16,
        DataType::Float16,
        DataType::Float32,
        DataType::Int64,
        DataType::Float64,
    ] {
        let g = vector_elements(dt) as u32;
        for count in [g - 1, g, g + 1, 2 * g - 1, 5 * g, 5 * g + 3, 1021 * g + 7] {
            let want = if count >= g {
                Schedule::Flat
            } else {
                Schedule::Walk
            };
            let mut r = Rng::new(u64::from(count) * 31 + dt.size_bytes() as u64);
            let a = tensor_with_edges(dt, &[count], &mut r);
            let b = tensor_with_edges(dt, &[count], &mut r);
            let scalar = tensor_with_edges(dt, &[], &mut r);
            let cond = tensor_with_edges(DataType::Bool, &[count], &mut r);
            let cond_scalar = tensor_with_edges(DataType::Bool, &[1], &mut r);
            run_every_schedule("Max", &[("data_0", &a), ("data_1", &b)], want);
            run_every_schedule("Max", &[("data_0", &scalar), ("data_1", &b)], want);
            run_every_schedule(
                "Where",
                &[("condition", &cond), ("x", &a), ("y", &scalar)],
                want,
            );
            run_every_schedule(
                "Where",
                &[("condition", &cond_scalar), ("x", &a), ("y", &b)],
                want,
            );
            run_every_schedule("Equal", &[("a", &a), ("b", &b)], {
                let g_bool = vector_elements(DataType::Bool) as u32;
                if count >= g_bool {
                    Schedule::Flat
                } else {
                    Schedule::Walk
                }
            });
            let seven: Vec<(String, &HostTensor)> = (0..7)
                .map(|i| (format!("data_{i}"), if i % 3 == 1 { &scalar } else { &a }))
                .collect();
            let seven: Vec<(&str, &HostTensor)> =
                seven.iter().map(|(n, t)| (n.as_str(), *t)).collect();
            run_every_schedule("Min", &seven, want);
        }
    }
}

/// Every schedule over a grid of several rows of workgroups (a context
/// allowing 4 workgroups per dimension): the kernels linearise `x + y *
/// num_workgroups.x` and leave the grid's workgroups past the plan's.
#[test]
fn schedules_on_a_two_dimensional_grid() {
    use ops_core::family::elementwise::ROWS_MIN_ITEMS;
    let ctx = Context::new()
        .unwrap_or_else(|e| panic!("GPU tests need an adapter: {e}"))
        .with_max_workgroups_per_dimension(4);
    let n = ROWS_MIN_ITEMS as u32;
    let mut rng = Rng::new(23);
    // The last shape runs `Flat` (a vector a thread) and `Walk` in 14
    // workgroups each, two of the 16 of this grid left idle.
    for (m, cols) in [(7u32, n), (4, 2 * n + 5), (1, 14_001)] {
        let a = tensor_with_edges(DataType::Float32, &[m, cols], &mut rng);
        let b = tensor_with_edges(DataType::Float32, &[cols], &mut rng);
        let op = build("Add", &[("a", &a), ("b", &b)]);
        for (variant, plan) in op.gpu_plan_variants().unwrap() {
            if plan.passes[0].workgroups > 16 {
                assert_eq!(variant, "elementwise", "[{m}, {cols}]");
                continue;
            }
            assert!(plan.passes[0].workgroups > 4, "[{m}, {cols}] {variant}");
            let got = ctx.run_plan(op.as_ref(), &[&a, &b], &plan).unwrap();
            let want = op.run_cpu(&[&a, &b]).unwrap();
            let yardstick = op.run_yardstick(&[&a, &b]).unwrap();
            if let Err(e) = compare_contract(&got, &want, &yardstick, op.tolerance()) {
                panic!("Add [{m}, {cols}] {variant}: {e}");
            }
        }
    }
}

/// 65,536 * 1024 + 7 FLOAT32 elements (268 MB, two segments of the 128 MiB
/// binding): 65,537 workgroups, more than one grid dimension holds.
#[test]
fn more_than_65535_workgroups() {
    let n = (1u32 << 26) + 7;
    let bits = (0..u64::from(n)).map(|i| (i * 2_654_435_761) & 0xffff_ffff);
    let x = from_bits(DataType::Float32, bits.clone());
    let op = build("Neg", &[("x", &x)]);
    let want = from_bits(DataType::Float32, bits.map(|b| b ^ 0x8000_0000));
    // `Walk` (an element a work item) and `Flat` (4 elements a thread)
    // spread their workgroups over two grid dimensions.
    let variants = op.gpu_plan_variants().unwrap();
    let walk = &variants.iter().find(|(v, _)| v == "elementwise").unwrap().1;
    assert!(
        walk.passes[0].workgroups > 65_535,
        "{}",
        walk.passes[0].workgroups
    );
    assert_eq!(variants[0].0, "elementwise-flat");
    assert!(variants[0].1.passes[0].workgroups > 65_535);
    for (variant, plan) in &variants {
        let got = gpu().run_plan(op.as_ref(), &[&x], plan).unwrap();
        assert!(
            got[0].bytes() == want.bytes(),
            "Neg of 2^26 + 7 elements, {variant}"
        );
    }
}

/// FLOAT64 values for `exp`, `log`, `tanh` and `pow` beyond
/// [`edge_bits`]: small integers, halves, the thresholds of overflow and
/// underflow, values next to 1.
fn float64_special_inputs() -> Vec<u64> {
    let extra = [
        0.5,
        -0.5,
        2.0,
        -2.0,
        3.0,
        -3.0,
        0.75,
        -1.5,
        10.0,
        1e-300,
        -1e-300,
        1e300,
        709.782712893384,
        709.79,
        -708.3964185322641,
        -745.1332191019411,
        -745.14,
        22.0,
        -19.5,
        1e-9,
        -3.7e-9,
        f64::from_bits(1f64.to_bits() + 1),
        f64::from_bits(1f64.to_bits() - 1),
        f64::EPSILON,
        std::f64::consts::LN_2,
        1075.0,
        -1074.5,
    ];
    let mut bits = edge_bits(DataType::Float64);
    bits.extend(extra.iter().map(|x| x.to_bits()));
    bits
}

/// The largest FLOAT64 ULP distance between `got` and `want`; a special
/// result (NaN, an infinity, a zero of either sign) on either side must
/// match exactly (any NaN for a NaN).
fn float64_max_ulp(want: &HostTensor, got: &HostTensor, context: &str) -> (u64, usize) {
    let w: Vec<f64> = want.to_vec().unwrap();
    let g: Vec<f64> = got.to_vec().unwrap();
    let mut worst = (0, 0);
    for (i, (&w, &g)) in w.iter().zip(&g).enumerate() {
        let special = |x: f64| x.is_nan() || x.is_infinite() || x == 0.0;
        if special(w) || special(g) {
            let same = (w.is_nan() && g.is_nan()) || w.to_bits() == g.to_bits();
            assert!(same, "{context}: element {i}: want {w:e}, got {g:e}");
            continue;
        }
        let d = ops_core::accuracy::ulp_distance(DataType::Float64, w.to_bits(), g.to_bits())
            .unwrap_or_else(|| panic!("{context}: element {i}: want {w:e}, got {g:e}"));
        if d > worst.0 {
            worst = (d, i);
        }
    }
    worst
}

/// Runs `op` on the GPU and the CPU, checks the FLOAT64 results against
/// the operator's ULP bound (specials exact) and gives the largest
/// distance seen.
fn float64_within_bound(op: &dyn Operator, inputs: &[&HostTensor], context: &str) -> u64 {
    let want = op.run_cpu(inputs).unwrap();
    let got = gpu().run(op, inputs).unwrap();
    let bound = match op.tolerance() {
        ops_core::Tolerance::Ulp(n) => n,
        other => panic!("{context}: {other:?}"),
    };
    let (d, i) = float64_max_ulp(&want[0], &got[0], context);
    let args: Vec<f64> = inputs
        .iter()
        .map(|t| t.to_vec::<f64>().unwrap()[i % t.len()])
        .collect();
    assert!(
        d <= bound,
        "{context}: {d} ULP (bound {bound}) at element {i}, inputs {args:?}"
    );
    eprintln!(
        "{context}: max {d} ULP (bound {bound}), {} values",
        want[0].len()
    );
    d
}

fn f64_tensor(values: &[f64], sizes: &[u32]) -> HostTensor {
    HostTensor::from_slice(sizes, values).unwrap()
}

/// FLOAT64 Exp, Log, Tanh, Sigmoid, Elu (edge values) and Pow (every pair
/// of them): special results exact, the others within the bound.
#[test]
fn float64_transcendentals_on_edge_values() {
    let bits = float64_special_inputs();
    let values: Vec<f64> = bits.iter().map(|&b| f64::from_bits(b)).collect();
    let n = values.len() as u32;
    let x = f64_tensor(&values, &[n]);
    for (name, input) in [
        ("Exp", "input"),
        ("Log", "input"),
        ("Tanh", "input"),
        ("Sigmoid", "x"),
        ("Elu", "x"),
    ] {
        let op = build(name, &[(input, &x)]);
        float64_within_bound(op.as_ref(), &[&x], &format!("{name} FLOAT64 edges"));
    }
    let column = f64_tensor(&values, &[n, 1]);
    let op = build("Pow", &[("x", &column), ("y", &x)]);
    float64_within_bound(op.as_ref(), &[&column, &x], "Pow FLOAT64 edge pairs");
    let pairs = values
        .iter()
        .flat_map(|&a| values.iter().map(move |&b| (a, b)));
    assert_pow_twin(op.as_ref(), &[&column, &x], pairs, "edge pairs");
}

/// The GPU's FLOAT64 `pow` gives the bits of its CPU twin
/// (`ops_core::wgsl::float64_fn::cpu::pow`, which the CPU reference takes
/// for an integer base's float power) on `pairs`, the operands of `op`'s
/// output elements in order.
fn assert_pow_twin(
    op: &dyn Operator,
    inputs: &[&HostTensor],
    pairs: impl Iterator<Item = (f64, f64)>,
    context: &str,
) {
    let got: Vec<f64> = gpu().run(op, inputs).unwrap()[0].to_vec().unwrap();
    let mut count = 0;
    for (i, (a, b)) in pairs.enumerate() {
        let want = ops_core::wgsl::float64_fn::cpu::pow(a, b);
        assert_eq!(
            got[i].to_bits(),
            want.to_bits(),
            "{context}: pow({a:e}, {b:e}): GPU {:e}, CPU twin {want:e}",
            got[i]
        );
        count += 1;
    }
    assert_eq!(count, got.len(), "{context}");
}

/// A float in `[low, high)`, uniformly.
fn uniform(rng: &mut Rng, low: f64, high: f64) -> f64 {
    low + (high - low) * (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64
}

/// Random FLOAT64 inputs across the whole range and near the hard places,
/// checked within each operator's bound; prints the largest error seen.
#[test]
fn float64_transcendentals_on_random_inputs() {
    let mut rng = Rng::new(64);
    let count = 4096;
    let any_bits = |rng: &mut Rng| f64::from_bits(rng.next_u64());
    // exp: the whole domain, the overflow and underflow thresholds,
    // subnormal results, tiny arguments, any bits.
    let mut xs = Vec::new();
    for i in 0..count {
        xs.push(match i % 6 {
            0 => uniform(&mut rng, -746.0, 710.0),
            1 => uniform(&mut rng, 709.7, 709.8),
            2 => uniform(&mut rng, -745.2, -708.0),
            3 => uniform(&mut rng, -1.0, 1.0) * 2f64.powi(-(rng.below(60) as i32)),
            4 => uniform(&mut rng, -20.0, 20.0),
            _ => any_bits(&mut rng),
        });
    }
    let x = f64_tensor(&xs, &[count]);
    let op = build("Exp", &[("input", &x)]);
    let exp_max = float64_within_bound(op.as_ref(), &[&x], "Exp FLOAT64 random");
    // Sigmoid (exp and `/`) and Elu (tanh and `/`) on the same inputs.
    let op = build("Sigmoid", &[("x", &x)]);
    let sigmoid_max = float64_within_bound(op.as_ref(), &[&x], "Sigmoid FLOAT64 random");
    let op = build("Elu", &[("x", &x)]);
    let elu_max = float64_within_bound(op.as_ref(), &[&x], "Elu FLOAT64 random");
    // log: any positive bits, subnormals, next to 1 on both sides, near
    // sqrt(2) and 1/2.
    let mut xs = Vec::new();
    for i in 0..count {
        xs.push(match i % 5 {
            0 => f64::from_bits(rng.next_u64() >> 1),
            1 => f64::from_bits(rng.below(1 << 52)),
            2 => 1.0 + uniform(&mut rng, -1.0, 1.0) * 2f64.powi(-(rng.below(53) as i32)),
            3 => uniform(&mut rng, 0.5, 2.0),
            _ => uniform(&mut rng, 1.4, 1.43) * 2f64.powi(rng.range(-1070, 1020) as i32),
        });
    }
    let x = f64_tensor(&xs, &[count]);
    let op = build("Log", &[("input", &x)]);
    let log_max = float64_within_bound(op.as_ref(), &[&x], "Log FLOAT64 random");
    // tanh: tiny, around the switches (2^-28, ln 2 / 2, 22), both signs.
    let mut xs = Vec::new();
    for i in 0..count {
        let s = if rng.chance(1, 2) { -1.0 } else { 1.0 };
        xs.push(
            s * match i % 5 {
                0 => uniform(&mut rng, 0.0, 1.0) * 2f64.powi(-(rng.below(40) as i32)),
                1 => uniform(&mut rng, 0.0, 2.0),
                2 => uniform(&mut rng, 2.0, 25.0),
                3 => 2f64.powi(-28) * uniform(&mut rng, 0.9, 1.1),
                _ => any_bits(&mut rng).abs(),
            },
        );
    }
    let x = f64_tensor(&xs, &[count]);
    let op = build("Tanh", &[("input", &x)]);
    let tanh_max = float64_within_bound(op.as_ref(), &[&x], "Tanh FLOAT64 random");
    // pow: results over the whole range and at its ends (b chosen for
    // a target b log a), bases next to 1 with large exponents, negative
    // bases with integer exponents, any bits.
    let (mut a_s, mut b_s) = (Vec::new(), Vec::new());
    for i in 0..count {
        let (a, b) = match i % 6 {
            0 | 1 => {
                let a = f64::from_bits(rng.next_u64() >> 1);
                let target = if i % 6 == 0 {
                    uniform(&mut rng, -745.0, 709.7)
                } else if rng.chance(1, 2) {
                    uniform(&mut rng, 700.0, 709.9)
                } else {
                    uniform(&mut rng, -746.0, -700.0)
                };
                (a, target / a.ln())
            }
            2 => {
                let a = 1.0 + uniform(&mut rng, -1.0, 1.0) * 2f64.powi(-(rng.below(52) as i32));
                (a, uniform(&mut rng, -700.0, 700.0) / a.ln())
            }
            3 => (-uniform(&mut rng, 0.0, 4.0), rng.range(-600, 600) as f64),
            4 => (uniform(&mut rng, 0.0, 10.0), uniform(&mut rng, -30.0, 30.0)),
            _ => (any_bits(&mut rng), any_bits(&mut rng)),
        };
        a_s.push(a);
        b_s.push(b);
    }
    let a = f64_tensor(&a_s, &[count]);
    let b = f64_tensor(&b_s, &[count]);
    let op = build("Pow", &[("x", &a), ("y", &b)]);
    let pow_max = float64_within_bound(op.as_ref(), &[&a, &b], "Pow FLOAT64 random");
    let pairs = a_s.iter().copied().zip(b_s.iter().copied());
    assert_pow_twin(op.as_ref(), &[&a, &b], pairs, "random pairs");
    eprintln!(
        "FLOAT64 max ULP over {count} random values each: exp {exp_max}, log {log_max}, \
         tanh {tanh_max}, pow {pow_max}, sigmoid {sigmoid_max}, elu {elu_max}"
    );
    // Pow's bound (1024) is FLOAT32's; the pairs keep FLOAT64 far inside.
    assert!(pow_max <= 4, "Pow FLOAT64: {pow_max} ULP");
}

/// ONNX Pow of an integer base and a float exponent, bit for bit with the
/// CPU: small bases (negative, 0, 1) against integral exponents, halves,
/// quarters and thirds (perfect powers: `4^0.5`, `9^1.5`, `16^0.25`,
/// `3^6.0`), random exponents, and results past the type's range
/// (saturating), NaN and the infinities; INT32 and INT64 bases (INT64 with
/// results beyond 2^53, where the last bits of the FLOAT64 power are the
/// result's) with FLOAT32, FLOAT16 and FLOAT64 exponents.
#[test]
fn integer_powers_of_float_exponents() {
    let mut rng = Rng::new(0x1F);
    let bases: Vec<i64> = (-9..=40)
        .chain([81, 100, 1000, 1 << 20, 2_000_000_011])
        .chain([3_000_000_019, 1 << 40, -(1 << 33), i64::MAX, i64::MIN])
        .collect();
    let mut exps: Vec<f64> = vec![
        0.0,
        -0.0,
        1.0,
        2.0,
        3.0,
        4.0,
        5.0,
        6.0,
        0.5,
        1.5,
        0.25,
        0.75,
        2.5,
        -1.0,
        -0.5,
        -2.0,
        1.0 / 3.0,
        2.0 / 3.0,
        5.46,
        18.0,
        31.0,
        32.0,
        62.0,
        63.0,
        64.0,
        100.0,
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
    ];
    exps.extend((0..40).map(|_| -4.0 + 12.0 * (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64));
    let m = exps.len();
    let mut exact = 0;
    for base_t in [DataType::Int32, DataType::Int64] {
        let bases: Vec<i64> = if base_t == DataType::Int32 {
            let fits = |b: &&i64| i32::try_from(**b).is_ok();
            bases.iter().filter(fits).copied().collect()
        } else {
            bases.clone()
        };
        let n = bases.len();
        let x = if base_t == DataType::Int32 {
            let v: Vec<i32> = bases.iter().map(|&b| b as i32).collect();
            HostTensor::from_slice([n as u32, 1].as_slice(), &v)
        } else {
            HostTensor::from_slice([n as u32, 1].as_slice(), &bases)
        }
        .unwrap();
        for exp_t in [DataType::Float32, DataType::Float16, DataType::Float64] {
            let row = [1, m as u32];
            let y = match exp_t {
                DataType::Float32 => {
                    let v: Vec<f32> = exps.iter().map(|&e| e as f32).collect();
                    HostTensor::from_slice(row.as_slice(), &v)
                }
                DataType::Float16 => {
                    let v: Vec<half::f16> = exps.iter().map(|&e| half::f16::from_f64(e)).collect();
                    HostTensor::from_slice(row.as_slice(), &v)
                }
                _ => HostTensor::from_slice(row.as_slice(), &exps),
            }
            .unwrap();
            let op = build("Pow", &[("x", &x), ("y", &y)]);
            let want = op.run_cpu(&[&x, &y]).unwrap().remove(0);
            let got = gpu().run(op.as_ref(), &[&x, &y]).unwrap().remove(0);
            let size = base_t.size_bytes();
            let element = |t: &HostTensor, i: usize| t.bytes()[i * size..(i + 1) * size].to_vec();
            let differ: Vec<String> = (0..n * m)
                .filter(|&i| element(&got, i) != element(&want, i))
                .take(4)
                .map(|i| {
                    let (b, e) = (bases[i / m], exps[i % m]);
                    let (g, w) = (element(&got, i), element(&want, i));
                    format!("{b}^{e}: {g:?} against {w:?}")
                })
                .collect();
            assert!(differ.is_empty(), "{base_t} ^ {exp_t}: {differ:?}");
            exact += 1;
            // Values read back: the integer at (base, exponent).
            let v: Vec<i64> = if base_t == DataType::Int32 {
                got.to_vec::<i32>()
                    .unwrap()
                    .into_iter()
                    .map(i64::from)
                    .collect()
            } else {
                got.to_vec::<i64>().unwrap()
            };
            let at = |b: i64, e: f64| {
                let i = bases.iter().position(|&x| x == b).unwrap();
                let j = exps
                    .iter()
                    .position(|&x| x.to_bits() == e.to_bits())
                    .unwrap();
                v[i * m + j]
            };
            let (min, max) = if base_t == DataType::Int32 {
                (i64::from(i32::MIN), i64::from(i32::MAX))
            } else {
                (i64::MIN, i64::MAX)
            };
            if exp_t != DataType::Float16 {
                // ONNX's pow_types node tests and the perfect powers.
                assert_eq!([at(1, 4.0), at(2, 5.0), at(3, 6.0)], [1, 32, 729]);
                assert_eq!(
                    [at(4, 0.5), at(9, 1.5), at(16, 0.25), at(3, 6.0)],
                    [2, 27, 2, 729]
                );
                assert_eq!([at(0, -1.0), at(7, f64::NAN), at(-8, 0.5)], [max, 0, 0]);
                assert_eq!([at(2, 64.0), at(-2, 63.0)], [max, min]);
            }
            if base_t == DataType::Int64 && exp_t == DataType::Float64 {
                // Beyond 2^53: powers of two, 10^18 and 1000^5.46 as
                // glibc's correctly rounded pow gives them.
                assert_eq!(
                    [at(2, 62.0), at(10, 18.0)],
                    [1 << 62, 1_000_000_000_000_000_000]
                );
                assert_eq!([at(i64::MIN, 1.0), at(i64::MAX, 1.0)], [i64::MIN, i64::MAX]);
                assert_eq!(at(1000, 5.46), 1000f64.powf(5.46) as i64);
                assert_eq!(at(1 << 40, 1.5), 1 << 60);
            }
        }
    }
    assert_eq!(exact, 6);
}

/// A FLOAT32 signaling NaN widens to a quiet FLOAT64 NaN on the GPU as on
/// the CPU, so `pow(1, NaN)` is 1 on both: through an INT32 base (the real
/// power) and through a FLOAT64 base (the exponent converted).
#[test]
fn narrow_signaling_nan_exponents_widen_quiet() {
    let snan = f32::from_bits(0x7f80_0001);
    let y =
        HostTensor::from_slice([2u32].as_slice(), &[snan, f32::from_bits(0xffa0_0000)]).unwrap();
    let int = HostTensor::from_slice([2u32].as_slice(), &[1i32, 1]).unwrap();
    let wide = HostTensor::from_slice([2u32].as_slice(), &[1.0f64, 1.0]).unwrap();
    for x in [&int, &wide] {
        let op = build("Pow", &[("x", x), ("y", &y)]);
        let want = op.run_cpu(&[x, &y]).unwrap().remove(0);
        let got = gpu().run(op.as_ref(), &[x, &y]).unwrap().remove(0);
        assert_eq!(got.bytes(), want.bytes(), "{} ^ sNaN", x.dtype());
        assert_eq!(got.bytes(), x.bytes(), "{} ^ sNaN is 1", x.dtype());
    }
}
