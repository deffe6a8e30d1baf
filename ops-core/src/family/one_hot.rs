//! The `one_hot` family: each output element is the on value where the
//! index value of its sequence selects its coordinate on the one-hot axis,
//! and the off value everywhere else (ONNX OneHot, DirectML ONE_HOT).
//!
//! ```text
//! o = (outer, a, inner)    // the output position: before the axis, on it, after it
//! i = indices[outer, inner]                      // the sequence's index value
//! output[o] = resolve(i, depth) == a ? values[1] : values[0]
//! ```
//!
//! The indices hold one value per sequence along the output's axis: their
//! element count is the output's divided by its size on the axis (ONNX's
//! indices lack the axis, DirectML's have it of size 1; in row-major order
//! both number the sequences alike). `resolve` turns a value into a
//! position in `[0, depth)`: signed values in `[-depth, -1]` count from the
//! end; a floating-point value is first truncated toward zero as
//! `cast<INT64>` does (NaN is 0, the infinities fall outside); any value
//! outside `[-depth, depth - 1]` selects nothing, and its sequence is all
//! off values. That is never an error.
//!
//! The off value is element 0 of the values tensor and the on value
//! element 1 (DirectML: the 1st element along the fastest-changing
//! dimension of size > 1, which in a packed tensor is element 1 too); the
//! kernels read both from the device, and every element moves as raw bits.
//!
//! # GPU algorithm
//!
//! One pass of one kernel per values (output) type and indices type: one work item per
//! output element (32- and 64-bit data) or per output `u32` word of 4 or 2
//! elements (8- and 16-bit data: the thread assembles the word, so no store
//! needs atomics), [`ELEMENTS_PER_THREAD`] items a thread, WORKGROUP_SIZE
//! apart. A work item splits its position into `(outer, a, inner)` with two
//! divisions and compares the resolved index value with `a`.
//!
//! A work item is an output element (32- and 64-bit data) or an output
//! `u32` word of 4 or 2 elements (8- and 16-bit data, assembled in a
//! register and stored once). Each element splits its position into the
//! sequence it belongs to and its coordinate `a` on the axis, resolves its
//! sequence's index value into `[0, depth)` (or `NONE`) and stores the on
//! value where that is `a`. Integer index values resolve with
//! `gen_resolve_index`; floating-point ones are truncated toward
//! zero from their bits first (NaN is 0, the infinities and anything of
//! magnitude 2^32 or more select nothing), so no adapter's float-to-int
//! conversion is trusted.

//!
//! A spec states it as `compute one_hot { indices: I  values: V  output: Y  axis: <integer expression> }`.

use super::{accesses, buffers, Binding, Call, Constraint, Family, KernelDecl, Param, Role, Value};
use crate::family::coordinates;
use crate::scalar::Precision;
use crate::wgsl::dtype;
use crate::wgsl::segments::Buffer;
use crate::wgsl::writer::Writer;
use crate::{
    element_count, f16, Access, DataType, DeviceClass, GpuPlan, HostTensor, IndexBounds,
    KernelText, OpError, OutOfRange, OutputInit, Pass, TensorDesc,
};

/// Threads per workgroup of the kernels.
pub const WORKGROUP_SIZE: u32 = 256;

/// Work items a thread takes, `WORKGROUP_SIZE` apart.
#[doc(hidden)]
pub const ELEMENTS_PER_THREAD: u64 = 4;

/// The parameters of `compute one_hot`, in order.
const PARAMS: &[Param] = &[
    Param::input("indices"),
    Param::input("values"),
    Param::output("output"),
    Param::count("axis"),
];
const INDICES: usize = 0;
const VALUES: usize = 1;
const OUTPUT: usize = 2;
const AXIS: usize = 3;

/// The bindings of every kernel, in order (`values`: element 0 is the off
/// value, element 1 the on value).
pub const BINDINGS: [Binding; 4] = [
    Binding {
        buffer: Buffer::params(),
        role: Role::Params,
    },
    Binding {
        buffer: Buffer::read("indices", true),
        role: Role::Input(INDICES),
    },
    Binding {
        buffer: Buffer::read("values", true),
        role: Role::Input(VALUES),
    },
    Binding {
        buffer: Buffer::read_write("output", false, true),
        role: Role::Output(OUTPUT),
    },
];
const ACCESS: [Access; 4] = accesses(&BINDINGS);
const BUFFERS: [Buffer<'static>; 4] = buffers(&BINDINGS);

/// The entry point's name.
const ENTRY: &str = "main";

/// The kernels' variant (the middle of their keys).
const VARIANT: &str = "one_hot";

super::param_words! {
    /// The parameter words of the kernel (the uniform `params` block).
    pub mod params [4] {
        /// Output element count.
        OUTPUT_COUNT = 0,
        /// Work items (output elements, or output words of 8- and 16-bit data).
        WORK_COUNT = 1,
        /// Depth: the output's size on the one-hot axis.
        DEPTH = 2,
        /// Inner: the output's element count after the axis.
        INNER = 3,
    }
}

/// The family, as [`super::FAMILIES`] registers it.
pub struct OneHot;

impl Family for OneHot {
    fn name(&self) -> &'static str {
        "one_hot"
    }

    fn params(&self) -> &'static [Param] {
        PARAMS
    }

    fn constraints(&self, _config: &[Value]) -> &'static [Constraint] {
        // The indices are numbers (floats truncate): BOOL selects nothing
        // meaningful.
        &[
            Constraint::Numbers(INDICES),
            Constraint::SameTypes(VALUES, OUTPUT, "takes its elements from"),
        ]
    }

    fn kernels(
        &self,
        config: &[Value],
        pairs: &dyn Fn(usize, usize) -> Vec<(DataType, DataType)>,
    ) -> Vec<KernelDecl> {
        let pairs = pairs(config[VALUES].tensor(), config[INDICES].tensor());
        KernelDecl::for_pairs(
            pairs,
            |_, indices| indices != DataType::Bool,
            &[(VARIANT, &ACCESS)],
            WORKGROUP_SIZE,
        )
    }

    fn kernel_text(
        &self,
        _config: &[Value],
        k: &KernelDecl,
        key: &str,
        origin: &str,
    ) -> KernelText {
        let (values, indices) = (k.types[0], k.types[1]);
        module(values, indices, key, origin)
    }

    fn run_cpu(
        &self,
        call: &Call<'_>,
        inputs: &[&HostTensor],
        _precision: Precision,
    ) -> Result<Vec<HostTensor>, OpError> {
        let out = one_hot_cpu(
            call.host(inputs, INDICES)?,
            call.host(inputs, VALUES)?,
            call.desc(OUTPUT),
            call.count(AXIS)?,
        )?;
        Ok(vec![out])
    }

    fn gpu_plan(&self, call: &Call<'_>, _class: DeviceClass) -> Result<GpuPlan, OpError> {
        one_hot_plan(call)
    }

    fn index_bounds(&self, call: &Call<'_>) -> Vec<IndexBounds> {
        let output = call.desc(OUTPUT);
        match call.count(AXIS) {
            Ok(axis) if axis < output.sizes.len() => vec![IndexBounds {
                tensor: call.input(INDICES),
                addresses: call.slot(OUTPUT),
                sizes: vec![output.sizes[axis]],
                out_of_range: OutOfRange::Ignored,
            }],
            _ => Vec::new(),
        }
    }
}

/// How a one-hot encoding walks its output.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OneHotGeometry {
    /// The output's size on the axis.
    pub depth: u64,
    /// The output's element count after the axis.
    pub inner: u64,
    /// The output's element count.
    pub output_count: u64,
    /// The sequences: the output's element count without the axis.
    pub sequences: u64,
}

fn invalid(m: String) -> OpError {
    OpError::InvalidArgument(m)
}

impl OneHotGeometry {
    /// The geometry of an output of `sizes` one-hot along `axis`.
    pub fn new(sizes: &[u32], axis: usize) -> Result<OneHotGeometry, OpError> {
        if axis >= sizes.len() {
            return Err(invalid(format!(
                "the one-hot axis {axis} must be a dimension of the output (sizes {sizes:?})"
            )));
        }
        let count = |s: &[u32]| {
            element_count(s).ok_or_else(|| OpError::TooLarge {
                what: format!("a one-hot output of sizes {sizes:?}"),
                limit: "element count overflows u64".into(),
            })
        };
        let sequences = count(&[&sizes[..axis], &sizes[axis + 1..]].concat())?;
        Ok(OneHotGeometry {
            depth: u64::from(sizes[axis]),
            inner: count(&sizes[axis + 1..])?,
            output_count: count(sizes)?,
            sequences,
        })
    }

    /// The work items of the kernel for data type `data`.
    pub fn work_items(&self, data: DataType) -> u64 {
        crate::family::word_items(self.output_count, data)
    }

    /// `(sequence, a)` of output position `o`: the index element it
    /// compares with and its coordinate on the axis.
    pub fn split(&self, o: u64) -> (u64, u64) {
        let inner = self.inner.max(1);
        let q = o / inner;
        let depth = self.depth.max(1);
        ((q / depth) * inner + o % inner, q % depth)
    }
}

/// Index element `i` of `indices` as an integer: integers exactly,
/// floating-point values truncated toward zero as `cast<INT64>` does (NaN
/// is 0; values beyond `i64` saturate). `None` past the end, or for BOOL.
pub fn index_value(indices: &HostTensor, i: usize) -> Option<i128> {
    if i >= indices.len() {
        return None;
    }
    let x = match indices.dtype() {
        DataType::Float64 => indices.get::<f64>(i),
        DataType::Float32 => f64::from(indices.get::<f32>(i)),
        DataType::Float16 => f64::from(indices.get::<f16>(i)),
        DataType::Bool => return None,
        _ => return indices.get_int(i),
    };
    Some(if x.is_nan() {
        0
    } else {
        x.trunc() as i64 as i128
    })
}

/// The axis position index value `v` selects among `depth`: `[0, depth)`
/// as it is, `[-depth, -1]` counted from the end, anything else `None`.
pub fn resolve(v: i128, depth: u64) -> Option<u64> {
    let n = i128::from(depth);
    match v {
        v if (0..n).contains(&v) => Some(v as u64),
        v if v < 0 && v >= -n => Some((v + n) as u64),
        _ => None,
    }
}

fn check_call(
    g: &OneHotGeometry,
    indices: &TensorDesc,
    values: &TensorDesc,
    output: &TensorDesc,
) -> Result<(), OpError> {
    if output.dtype != values.dtype {
        return Err(invalid(format!(
            "the output data type {} must be the values' {}",
            output.dtype, values.dtype
        )));
    }
    if indices.dtype == DataType::Bool {
        return Err(invalid("the indices must be numbers, not BOOL".into()));
    }
    let index_count = indices.element_count().unwrap_or(u64::MAX);
    if index_count != g.sequences {
        return Err(invalid(format!(
            "the indices (sizes {:?}) must hold one value per sequence of the output (sizes {:?}) along the axis: {} values",
            indices.sizes, output.sizes, g.sequences
        )));
    }
    let values_count = values.element_count().unwrap_or(0);
    if values_count < 2 {
        return Err(invalid(format!(
            "the values (sizes {:?}) must hold the off and the on value",
            values.sizes
        )));
    }
    if g.output_count > u64::from(u32::MAX) || index_count > u64::from(u32::MAX) {
        return Err(OpError::TooLarge {
            what: format!("a one-hot output of {} elements", g.output_count),
            limit: "u32 element addressing (as on the GPU)".into(),
        });
    }
    Ok(())
}

/// The CPU reference: the output described by `output`, one-hot along
/// `axis`; each element the on value (element 1 of `values`) where the
/// index value of its sequence selects its axis coordinate, else the off
/// value (element 0). Elements move as raw bytes.
pub fn one_hot_cpu(
    indices: &HostTensor,
    values: &HostTensor,
    output: &TensorDesc,
    axis: usize,
) -> Result<HostTensor, OpError> {
    let g = OneHotGeometry::new(&output.sizes, axis)?;
    check_call(&g, indices.desc(), values.desc(), output)?;
    let width = values.dtype().size_bytes();
    let (off, on) = (&values.bytes()[..width], &values.bytes()[width..2 * width]);
    let mut bytes = Vec::with_capacity(g.output_count as usize * width);
    for o in 0..g.output_count {
        let (s, a) = g.split(o);
        let v = index_value(indices, s as usize).ok_or_else(|| {
            invalid(format!(
                "the indices have no element at {:?}",
                coordinates(indices.sizes(), s)
            ))
        })?;
        let hot = resolve(v, g.depth) == Some(a);
        bytes.extend_from_slice(if hot { on } else { off });
    }
    HostTensor::from_bytes(output.clone(), bytes)
}

/// The GPU plan: one pass of the kernel of the call's values and indices
/// types (none: [`OpError::Unsupported`]) binding [`BINDINGS`]. The output
/// ([`OutputInit::Overwritten`]) is stored whole; an empty one has no pass.
fn one_hot_plan(call: &Call<'_>) -> Result<GpuPlan, OpError> {
    let (indices, values, output) = (call.desc(INDICES), call.desc(VALUES), call.desc(OUTPUT));
    let g = OneHotGeometry::new(&output.sizes, call.count(AXIS)?)?;
    check_call(&g, indices, values, output)?;
    let kernel = call
        .kernel(VARIANT, &[values.dtype, indices.dtype])
        .ok_or_else(|| {
            OpError::Unsupported(format!(
                "no one_hot kernel for {} values with {} indices",
                values.dtype, indices.dtype
            ))
        })?;
    let mut plan = GpuPlan {
        outputs: vec![OutputInit::Overwritten; call.output(OUTPUT) + 1],
        scratch_bytes: Vec::new(),
        passes: Vec::new(),
        index_checks: Vec::new(),
    };
    let work = g.work_items(output.dtype);
    if work == 0 {
        return Ok(plan);
    }
    let mut p = vec![0u32; params::LEN];
    // Each fits: check_call bounds the output's element count by u32.
    p[params::OUTPUT_COUNT] = g.output_count as u32;
    p[params::WORK_COUNT] = work as u32;
    p[params::DEPTH] = g.depth as u32;
    p[params::INNER] = g.inner as u32;
    plan.passes.push(Pass {
        kernel,
        buffers: call.buffers(&BINDINGS),
        params: p,
        workgroups: work.div_ceil(ELEMENTS_PER_THREAD * u64::from(WORKGROUP_SIZE)),
    });
    Ok(plan)
}

fn module(values: DataType, indices: DataType, key: &str, origin: &str) -> crate::KernelText {
    let mut w = Writer::new();
    super::Prologue {
        origin,
        key,
        what: &[format!("one_hot: values {values}, indices {indices}")],
        workgroup_size: WORKGROUP_SIZE,
        elements_per_thread: Some(ELEMENTS_PER_THREAD),
        words: params::WGSL,
        consts: &[(
            "Not a position: the index value selects nothing.",
            "const NONE: u32 = 0xffffffffu;",
        )],
        buffers: &BUFFERS,
    }
    .write(&mut w);
    dtype::gen_load_from(&mut w, "load_index", &BUFFERS[1], indices);
    w.blank();
    dtype::gen_load_from(&mut w, "load_value", &BUFFERS[2], values);
    w.blank();
    if !dtype::is_packed(values) {
        dtype::gen_store_to(&mut w, "store_output", &BUFFERS[3], values);
        w.blank();
    }
    if indices.is_float() {
        gen_resolve_float(&mut w, indices);
    } else {
        dtype::gen_resolve_index(&mut w, "resolve", indices, "NONE");
    }
    w.blank();
    let raw = dtype::raw_type(values);
    w.comment("Output element o: the on value where its sequence's index selects its");
    w.comment("coordinate on the axis, else the off value.");
    w.open(format!(
        "fn element(o: u32, off: {raw}, on: {raw}) -> {raw}"
    ));
    w.line("let inner = max(param(P_INNER), 1u);");
    w.line("let depth = max(param(P_DEPTH), 1u);");
    w.line("let q = o / inner;");
    w.line("let sequence = (q / depth) * inner + o % inner;");
    w.line("let hot = resolve(load_index(sequence), param(P_DEPTH)) == q % depth;");
    w.line("return select(off, on, hot);");
    w.close();
    w.blank();
    crate::wgsl::gen_output_entry(
        &mut w,
        ENTRY,
        values,
        &BUFFERS[3],
        &["let off = load_value(0u);", "let on = load_value(1u);"],
        &|i| format!("element({i}, off, on)"),
    );
    w.finish_kernel()
}

/// `fn resolve(v: raw, n: u32) -> u32` for a floating-point index type: the
/// value truncated toward zero from its bits (NaN is 0), then the position
/// it selects in `[0, n)` (negative values count from the end), or `NONE`.
/// A magnitude of 2^32 or more (and an infinity) is beyond any `n`.
fn gen_resolve_float(w: &mut Writer, index: DataType) {
    w.comment(format!(
        "The position {index} index value v, truncated toward zero (NaN is 0), selects in a dimension of size n, or NONE."
    ));
    w.open(format!(
        "fn resolve(v: {}, n: u32) -> u32",
        dtype::raw_type(index)
    ));
    // (exponent field bits, fraction bits) of the word holding the sign,
    // and where it sits.
    let (exp_bits, frac_bits, sign_bit) = match index.size_bits() {
        64 => (11u32, 20u32, 31u32),
        32 => (8, 23, 31),
        _ => (5, 10, 15),
    };
    let bias = (1u32 << (exp_bits - 1)) - 1;
    let exp_mask = (1u32 << exp_bits) - 1;
    let frac_mask = (1u32 << frac_bits) - 1;
    if index.size_bits() == 64 {
        w.comment("v = (lo, hi): the sign, exponent and top 20 fraction bits are in hi.");
        w.line("let hi = v.y;");
        w.line("let lo = v.x;");
    } else {
        w.line("let hi = v;");
        w.line("let lo = 0u;");
    }
    w.line(format!("let negative = ((hi >> {sign_bit}u) & 1u) == 1u;"));
    w.line(format!("let e = (hi >> {frac_bits}u) & {exp_mask}u;"));
    w.line(format!("let f = hi & {frac_mask}u;"));
    w.block(format!("if (e == {exp_mask}u)"), |w| {
        w.comment("NaN is 0; an infinity selects nothing.");
        w.line("return select(NONE, select(NONE, 0u, n > 0u), f != 0u || lo != 0u);");
    });
    w.block(format!("if (e < {bias}u)"), |w| {
        w.comment("|v| < 1 (zeros and subnormals too): 0.");
        w.line("return select(NONE, 0u, n > 0u);");
    });
    w.line(format!("let p = e - {bias}u;"));
    w.block("if (p >= 32u)", |w| {
        w.line("return NONE;");
    });
    w.line(format!("let m = f | {}u;", 1u32 << frac_bits));
    w.line("var magnitude = 0u;");
    if index.size_bits() == 64 {
        w.comment("The 53-bit significand is m * 2^32 + lo; keep its top p + 1 bits.");
        w.open(format!("if (p <= {frac_bits}u)"));
        w.line(format!("magnitude = m >> ({frac_bits}u - p);"));
        w.reopen("else");
        w.line(format!(
            "magnitude = (m << (p - {frac_bits}u)) | (lo >> ({}u - p));",
            frac_bits + 32
        ));
        w.close();
    } else {
        w.open(format!("if (p <= {frac_bits}u)"));
        w.line(format!("magnitude = m >> ({frac_bits}u - p);"));
        w.reopen("else");
        w.line(format!("magnitude = m << (p - {frac_bits}u);"));
        w.close();
    }
    w.block("if (negative)", |w| {
        w.line("return select(NONE, n - magnitude, magnitude <= n);");
    });
    w.line("return select(NONE, magnitude, magnitude < n);");
    w.close();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequences_split_around_the_axis() {
        let g = OneHotGeometry::new(&[2, 3, 4], 1).unwrap();
        assert_eq!(
            (g.depth, g.inner, g.sequences, g.output_count),
            (3, 4, 8, 24)
        );
        // Position [1, 2, 3] = 1*12 + 2*4 + 3 = 23: sequence [1, 3], a = 2.
        assert_eq!(g.split(23), (7, 2));
        assert_eq!(g.split(5), (1, 1));
        assert!(OneHotGeometry::new(&[2, 3], 2).is_err());
    }

    #[test]
    fn values_resolve_like_onnx() {
        assert_eq!(resolve(0, 3), Some(0));
        assert_eq!(resolve(2, 3), Some(2));
        assert_eq!(resolve(3, 3), None);
        assert_eq!(resolve(-1, 3), Some(2));
        assert_eq!(resolve(-3, 3), Some(0));
        assert_eq!(resolve(-4, 3), None);
        let f = HostTensor::from_slice([6], &[1.9f32, -1.9, f32::NAN, -0.0, f32::INFINITY, -0.5])
            .unwrap();
        let got: Vec<_> = (0..6).map(|i| index_value(&f, i).unwrap()).collect();
        assert_eq!(got, [1, -1, 0, 0, i128::from(i64::MAX), 0]);
    }

    #[test]
    fn encodes_along_the_axis() {
        // ONNX's test_onehot_with_axis: indices [[1, 9], [2, 4]], depth 10, axis 1.
        let indices = HostTensor::from_slice([2, 2], &[1f32, 9., 2., 4.]).unwrap();
        let values = HostTensor::from_slice([2], &[1f32, 3.]).unwrap();
        let out = one_hot_cpu(
            &indices,
            &values,
            &TensorDesc::new(DataType::Float32, [2, 10, 2]),
            1,
        )
        .unwrap()
        .to_vec::<f32>()
        .unwrap();
        let hot: Vec<usize> = (0..40).filter(|&o| out[o] == 3.).collect();
        // [0, 1, 0], [0, 9, 1], [1, 2, 0], [1, 4, 1].
        assert_eq!(hot, [2, 19, 24, 29]);
        assert_eq!(out.iter().filter(|&&v| v == 1.).count(), 36);
        // Out of range (and -4 of 3) is an all-off row; negative counts from the end.
        let indices = HostTensor::from_slice([4], &[3i8, -4, -1, 0]).unwrap();
        let values = HostTensor::from_slice([2], &[false, true]).unwrap();
        let out = one_hot_cpu(
            &indices,
            &values,
            &TensorDesc::new(DataType::Bool, [4, 3]),
            1,
        )
        .unwrap();
        assert_eq!(out.bytes(), &[0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0][..]);
        // Mismatched indices are an error, not a panic.
        let short = HostTensor::from_slice([3], &[0i8, 1, 2]).unwrap();
        assert!(one_hot_cpu(&short, &values, &TensorDesc::new(DataType::Bool, [4, 3]), 1).is_err());
        let one = HostTensor::from_slice([1], &[true]).unwrap();
        assert!(one_hot_cpu(&indices, &one, &TensorDesc::new(DataType::Bool, [4, 3]), 1).is_err());
    }
}
