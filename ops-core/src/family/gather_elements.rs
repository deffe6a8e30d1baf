//! The `gather_elements` family: each output element reads the input
//! element at its own coordinates, with the coordinate on the axis replaced
//! by the index value at the same position (DirectML GATHER_ELEMENTS, ONNX
//! GatherElements, `torch.gather`).
//!
//! ```text
//! output[i, j, k] = input[indices[i, j, k], j, k]   // axis 0
//! output[i, j, k] = input[i, indices[i, j, k], k]   // axis 1
//! ```
//!
//! A spec states it as
//!
//! ```text
//! compute gather_elements { input: X  indices: I  output: Y  axis: <integer expression> }
//! ```
//!
//! The indices and the output share one shape, of the input's rank; off the
//! axis each indices size is at most the input's (DirectML asks for equal
//! sizes, ONNX only for sizes that address the input). Index values of
//! signed types may be negative, counting from the end of the axis: an axis
//! of size `n` admits `[-n, n - 1]`, and `[0, n - 1]` for unsigned types.
//! Any other value is an [`OpError::IndexOutOfRange`] for the lowest
//! offending element, from [`gather_elements_cpu`] or from the GPU plan's
//! index check phrased by [`gather_elements_index_error`]; nothing is read
//! out of bounds. Elements move as raw bits.
//!
//! # GPU algorithm
//!
//! One pass of one kernel per data type and index type: one work item per
//! output element (32- and 64-bit data) or per output `u32` word of 4 or 2
//! elements (8- and 16-bit data: the thread assembles the word in a
//! register and stores it once, so no store needs atomics),
//! [`ELEMENTS_PER_THREAD`] items a thread. A work item walks the output
//! position's coordinates from the last dimension to the first (divided out
//! with the plan's divisors), adding each times the input's stride and, on
//! the axis, the resolved index value instead. [`GatherElementsGeometry`]
//! merges neighbouring dimensions off the axis whose indices and input sizes
//! agree, so the usual call (equal sizes, DirectML's rule) walks at most
//! three: before the axis, the axis, after it. A work item that meets an
//! out-of-range value reports its position to the status word (`atomicMin`)
//! and stores nothing.
//!
//! The kernel's bindings are [`BINDINGS`]; its parameter words [`params`].

use super::{accesses, buffers, Binding, Call, Constraint, Family, KernelDecl, Param, Role, Value};
use crate::family::coordinates;
use crate::scalar::Precision;
use crate::wgsl::dtype;
use crate::wgsl::each_item;
use crate::wgsl::segments::Buffer;
use crate::wgsl::writer::Writer;
use crate::{
    element_count, row_major_strides, Access, DataType, DeviceClass, GpuPlan, HostTensor,
    IndexBounds, KernelText, OpError, OutOfRange, OutputInit, Pass, TensorDesc,
};

/// Threads per workgroup of the kernels.
pub const WORKGROUP_SIZE: u32 = 256;

/// Work items a thread takes, `WORKGROUP_SIZE` apart.
#[doc(hidden)]
pub const ELEMENTS_PER_THREAD: u64 = 4;

/// Most dimensions the kernels walk (after merging).
pub const MAX_DIMS: usize = 8;

/// The parameters of `compute gather_elements`, in order.
const PARAMS: &[Param] = &[
    Param::input("input"),
    Param::input("indices"),
    Param::output("output"),
    Param::count("axis"),
];
const INPUT: usize = 0;
const INDICES: usize = 1;
const OUTPUT: usize = 2;
const AXIS: usize = 3;

/// The bindings of every kernel, in order.
pub const BINDINGS: [Binding; 5] = [
    Binding {
        buffer: Buffer::params(),
        role: Role::Params,
    },
    Binding {
        buffer: Buffer::read("input", true),
        role: Role::Input(INPUT),
    },
    Binding {
        buffer: Buffer::read("indices", true),
        role: Role::Input(INDICES),
    },
    Binding {
        buffer: Buffer::read_write("output", false, true),
        role: Role::Output(OUTPUT),
    },
    // Word 0 receives, by `atomicMin`, the position of the lowest
    // out-of-range index element a thread met.
    Binding {
        buffer: Buffer::read_write("status", true, false),
        role: Role::Status,
    },
];
const ACCESS: [Access; 5] = accesses(&BINDINGS);
const BUFFERS: [Buffer<'static>; 5] = buffers(&BINDINGS);

/// The entry point's name.
const ENTRY: &str = "main";

/// The kernels' variant (the middle of their keys).
const VARIANT: &str = "gather_elements";

super::param_words! {
    /// The parameter words of the kernel (the uniform `params` block).
    pub mod params [40] {
        /// Output element count.
        OUTPUT_COUNT = 0,
        /// Work items (output elements, or output words of 8- and 16-bit data).
        WORK_COUNT = 1,
        /// Dimensions walked, at most [`MAX_DIMS`](super::MAX_DIMS).
        DIMS = 2,
        /// The axis among the walked dimensions.
        AXIS = 3,
        /// The input's size on the axis.
        AXIS_LEN = 4,
        /// First walked size (the indices' and output's; unused slots 1).
        SIZES = 8,
        /// First walked input stride, in elements.
        STRIDES = 16,
        /// First walked size's [`Divisor`](crate::family::divisor::Divisor)
        /// multiplier.
        SIZE_MAGIC = 24,
        /// First walked size's divisor shifts.
        SIZE_SHIFTS = 32,
    }
}

/// The family, as [`super::FAMILIES`] registers it.
pub struct GatherElements;

impl Family for GatherElements {
    fn name(&self) -> &'static str {
        "gather_elements"
    }

    fn params(&self) -> &'static [Param] {
        PARAMS
    }

    fn constraints(&self, _config: &[Value]) -> &'static [Constraint] {
        &[
            Constraint::Integer(INDICES),
            Constraint::SameTypes(INPUT, OUTPUT, "moves the elements of"),
        ]
    }

    fn kernels(
        &self,
        config: &[Value],
        pairs: &dyn Fn(usize, usize) -> Vec<(DataType, DataType)>,
    ) -> Vec<KernelDecl> {
        let pairs = pairs(config[INPUT].tensor(), config[INDICES].tensor());
        KernelDecl::for_pairs(
            pairs,
            |_, index| index.is_int(),
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
        let (data, index) = (k.types[0], k.types[1]);
        module(data, index, key, origin)
    }

    fn run_cpu(
        &self,
        call: &Call<'_>,
        inputs: &[&HostTensor],
        _precision: Precision,
    ) -> Result<Vec<HostTensor>, OpError> {
        let axis = call.count(AXIS)?;
        let out = gather_elements_cpu(
            call.host(inputs, INPUT)?,
            call.host(inputs, INDICES)?,
            call.desc(OUTPUT),
            axis,
            call.name(INDICES),
        )?;
        Ok(vec![out])
    }

    fn gpu_plan(&self, call: &Call<'_>, _class: DeviceClass) -> Result<GpuPlan, OpError> {
        gather_elements_plan(call)
    }

    fn index_error(
        &self,
        call: &Call<'_>,
        inputs: &[&HostTensor],
        _check: usize,
        position: u64,
    ) -> OpError {
        let indices = match (call.count(AXIS), call.host(inputs, INDICES)) {
            (Ok(axis), Ok(indices)) => (axis, indices),
            (Err(e), _) | (_, Err(e)) => return e,
        };
        gather_elements_index_error(
            call.desc(INPUT),
            indices.1,
            indices.0,
            call.name(INDICES),
            position,
        )
    }

    fn index_bounds(&self, call: &Call<'_>) -> Vec<IndexBounds> {
        let input = call.desc(INPUT);
        match call.count(AXIS) {
            Ok(axis) if axis < input.sizes.len() => vec![IndexBounds {
                tensor: call.input(INDICES),
                addresses: call.slot(INPUT),
                sizes: vec![input.sizes[axis]],
                out_of_range: OutOfRange::Error,
            }],
            _ => Vec::new(),
        }
    }
}

/// How a gather of elements walks its tensors.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GatherElementsGeometry {
    /// The walked dimensions' sizes (the indices' and output's, merged).
    pub sizes: Vec<u32>,
    /// The input's stride of each walked dimension, in elements.
    pub strides: Vec<u64>,
    /// The axis among the walked dimensions.
    pub axis: usize,
    /// The input's size on the axis.
    pub axis_len: u32,
    /// Input element count.
    pub input_count: u64,
    /// Output (and index) element count.
    pub output_count: u64,
}

fn too_large(what: &str, limit: &str) -> OpError {
    OpError::TooLarge {
        what: what.into(),
        limit: limit.into(),
    }
}

impl GatherElementsGeometry {
    /// The geometry of gathering from an input of `input` sizes along `axis`
    /// with indices of `indices` sizes.
    ///
    /// Fails with [`OpError::InvalidArgument`] when the ranks differ, the
    /// axis is not a dimension, or an indices size off the axis exceeds the
    /// input's; with [`OpError::TooLarge`] when a count overflows `u64`.
    pub fn new(
        input: &[u32],
        indices: &[u32],
        axis: usize,
    ) -> Result<GatherElementsGeometry, OpError> {
        if input.len() != indices.len() {
            return Err(OpError::InvalidArgument(format!(
                "the indices (sizes {indices:?}) must have the input's rank (sizes {input:?})"
            )));
        }
        if axis >= input.len() {
            return Err(OpError::InvalidArgument(format!(
                "the axis {axis} must be a dimension of the input (sizes {input:?})"
            )));
        }
        if let Some(d) = (0..input.len()).find(|&d| d != axis && indices[d] > input[d]) {
            return Err(OpError::InvalidArgument(format!(
                "off the axis, the indices' sizes {indices:?} must not exceed the input's {input:?} (dimension {d})"
            )));
        }
        let input_count = element_count(input)
            .ok_or_else(|| too_large("input", "element count overflows u64"))?;
        let output_count = element_count(indices)
            .ok_or_else(|| too_large("indices", "element count overflows u64"))?;
        let input_strides = row_major_strides(input);
        // Merge a dimension into the one before it when both are off the
        // axis and the indices cover the input in the later one.
        let mut sizes: Vec<u32> = Vec::new();
        let mut strides: Vec<u64> = Vec::new();
        let mut walked_axis = 0;
        let mut mergeable = false;
        for d in 0..input.len() {
            let off_axis = d != axis;
            let covers = indices[d] == input[d];
            let last = sizes.len().wrapping_sub(1);
            if off_axis && covers && mergeable {
                // Sizes beside a zero may multiply past u32: with no
                // element to walk, the walked sizes are never read.
                sizes[last] = sizes[last].saturating_mul(indices[d]);
                strides[last] = input_strides[d];
            } else {
                if !off_axis {
                    walked_axis = sizes.len();
                }
                sizes.push(indices[d]);
                strides.push(input_strides[d]);
            }
            // The next dimension, when covered, may merge into this one
            // when this one is off the axis: position `c * size + c'` then
            // has the input offset `c * stride + c' * stride'`, as
            // `stride = size * stride'`.
            mergeable = off_axis;
        }
        Ok(GatherElementsGeometry {
            sizes,
            strides,
            axis: walked_axis,
            axis_len: input[axis],
            input_count,
            output_count,
        })
    }

    /// The work items of the kernel for data type `data`: output elements,
    /// or output words for 8- and 16-bit data.
    pub fn work_items(&self, data: DataType) -> u64 {
        crate::family::word_items(self.output_count, data)
    }

    /// The range `[low, high]` index values of type `index` may take.
    pub fn index_range(&self, index: DataType) -> (i128, i128) {
        let n = i128::from(self.axis_len);
        (if index.is_signed_int() { -n } else { 0 }, n - 1)
    }

    /// The input offset of output position `o` whose index value, already
    /// normalised to `[0, axis_len)`, is `i`.
    pub fn source(&self, o: u64, i: u64) -> u64 {
        let mut rest = o;
        let mut offset = 0;
        for d in (0..self.sizes.len()).rev() {
            let size = u64::from(self.sizes[d]).max(1);
            let c = if d == self.axis { i } else { rest % size };
            rest /= size;
            offset += c * self.strides[d];
        }
        offset
    }
}

/// Checks the data types and the output description.
fn check_call(
    g: &GatherElementsGeometry,
    data: DataType,
    index: DataType,
    indices: &[u32],
    output: &TensorDesc,
) -> Result<(), OpError> {
    if output.dtype != data {
        return Err(OpError::InvalidArgument(format!(
            "the output data type {} must be the input data type {data}",
            output.dtype
        )));
    }
    if !index.is_int() {
        return Err(OpError::InvalidArgument(format!(
            "the indices data type {index} must be an integer type"
        )));
    }
    if output.sizes != indices {
        return Err(OpError::InvalidArgument(format!(
            "the output sizes {:?} must be the indices' {indices:?}",
            output.sizes
        )));
    }
    if g.output_count > u64::from(u32::MAX) || g.input_count > u64::from(u32::MAX) {
        return Err(too_large(
            &format!(
                "a gather of {} elements from {}",
                g.output_count, g.input_count
            ),
            "u32 element addressing (as on the GPU)",
        ));
    }
    Ok(())
}

/// The CPU reference of the pattern.
///
/// Gathers from `input` along `axis` at the values of `indices` into a
/// tensor described by `output` (the input's data type, the indices'
/// sizes). Elements move as raw bytes. Every index value is checked in
/// row-major order; the first out of range gives
/// [`OpError::IndexOutOfRange`] naming `indices_name`, the value's
/// coordinates and the allowed range.
pub fn gather_elements_cpu(
    input: &HostTensor,
    indices: &HostTensor,
    output: &TensorDesc,
    axis: usize,
    indices_name: &str,
) -> Result<HostTensor, OpError> {
    let g = GatherElementsGeometry::new(input.sizes(), indices.sizes(), axis)?;
    check_call(&g, input.dtype(), indices.dtype(), indices.sizes(), output)?;
    let (low, high) = g.index_range(indices.dtype());
    let width = input.dtype().size_bytes();
    let mut bytes = Vec::with_capacity(g.output_count as usize * width);
    for o in 0..g.output_count {
        let v = indices.get_int(o as usize).ok_or_else(|| {
            OpError::InvalidArgument(format!("`{indices_name}` has no index element {o}"))
        })?;
        if v < low || v > high {
            return Err(OpError::IndexOutOfRange {
                tensor: indices_name.to_string(),
                position: coordinates(indices.sizes(), o),
                value: v,
                low,
                high,
            });
        }
        let i = if v < 0 { v + i128::from(g.axis_len) } else { v } as u64;
        let start = g.source(o, i) as usize * width;
        let element = input.bytes().get(start..start + width).ok_or_else(|| {
            OpError::InvalidArgument(format!(
                "element {o} of `{indices_name}` reads byte {start} of an input of {} bytes",
                input.bytes().len()
            ))
        })?;
        bytes.extend_from_slice(element);
    }
    HostTensor::from_bytes(output.clone(), bytes)
}

/// Phrases the GPU's index check failure at element `position` of
/// `indices` as the [`OpError::IndexOutOfRange`] [`gather_elements_cpu`]
/// gives for the same tensors; an [`OpError::Device`] when the value there
/// is in range (the GPU reported a valid index).
pub fn gather_elements_index_error(
    input: &TensorDesc,
    indices: &HostTensor,
    axis: usize,
    indices_name: &str,
    position: u64,
) -> OpError {
    let g = match GatherElementsGeometry::new(&input.sizes, indices.sizes(), axis) {
        Ok(g) => g,
        Err(e) => return e,
    };
    let Some(v) = usize::try_from(position)
        .ok()
        .and_then(|p| indices.get_int(p))
    else {
        return OpError::InvalidArgument(format!(
            "the GPU reported index element {position} of `{indices_name}` ({} {:?}), which has no such integer element",
            indices.dtype(),
            indices.sizes()
        ));
    };
    let (low, high) = g.index_range(indices.dtype());
    let coords = coordinates(indices.sizes(), position);
    if v < low || v > high {
        OpError::IndexOutOfRange {
            tensor: indices_name.to_string(),
            position: coords,
            value: v,
            low,
            high,
        }
    } else {
        OpError::Device(format!(
            "the GPU reported index {v} of `{indices_name}` at element {coords:?} as out of range, but it lies in [{low}, {high}]"
        ))
    }
}

/// The parameter words of a gather of `data` elements (layout in
/// [`params`]); [`OpError::TooLarge`] when a size or stride exceeds `u32`.
pub fn gather_elements_params(
    g: &GatherElementsGeometry,
    data: DataType,
) -> Result<Vec<u32>, OpError> {
    let word = |v: u64, what: &str| {
        u32::try_from(v)
            .map_err(|_| too_large(what, "u32 addressing of the gather_elements kernels"))
    };
    if g.sizes.len() > MAX_DIMS {
        return Err(too_large(
            &format!("{} dimensions", g.sizes.len()),
            &format!("{MAX_DIMS} dimensions"),
        ));
    }
    let mut p = vec![0u32; params::LEN];
    p[params::OUTPUT_COUNT] = word(g.output_count, "output element count")?;
    p[params::WORK_COUNT] = word(g.work_items(data), "work item count")?;
    p[params::DIMS] = g.sizes.len() as u32;
    p[params::AXIS] = g.axis as u32;
    p[params::AXIS_LEN] = g.axis_len;
    for d in 0..MAX_DIMS {
        p[params::SIZES + d] = g.sizes.get(d).copied().unwrap_or(1);
        p[params::STRIDES + d] = word(g.strides.get(d).copied().unwrap_or(0), "input stride")?;
        let size = crate::family::divisor::Divisor::new(p[params::SIZES + d]);
        p[params::SIZE_MAGIC + d] = size.magic;
        p[params::SIZE_SHIFTS + d] = size.shifts;
    }
    Ok(p)
}

/// The GPU plan: one pass of the kernel of the call's data and index types
/// (none: [`OpError::Unsupported`]) binding [`BINDINGS`], and one index
/// check on the indices. The output ([`OutputInit::Overwritten`]) is stored
/// whole; an empty one has no pass.
fn gather_elements_plan(call: &Call<'_>) -> Result<GpuPlan, OpError> {
    let (input, indices, output) = (call.desc(INPUT), call.desc(INDICES), call.desc(OUTPUT));
    let g = GatherElementsGeometry::new(&input.sizes, &indices.sizes, call.count(AXIS)?)?;
    check_call(&g, input.dtype, indices.dtype, &indices.sizes, output)?;
    let kernel = call
        .kernel(VARIANT, &[input.dtype, indices.dtype])
        .ok_or_else(|| {
            OpError::Unsupported(format!(
                "no gather_elements kernel for {} data with {} indices",
                input.dtype, indices.dtype
            ))
        })?;
    for (desc, count) in [(input, g.input_count), (output, g.output_count)] {
        let words = count
            .saturating_mul(desc.dtype.size_bytes() as u64)
            .div_ceil(4);
        if words > u64::from(u32::MAX) {
            return Err(too_large(
                &format!("a {} tensor of {count} elements", desc.dtype),
                "u32 addressing of the gather_elements kernels",
            ));
        }
    }
    let mut plan = GpuPlan {
        outputs: vec![OutputInit::Overwritten; call.output(OUTPUT) + 1],
        scratch_bytes: Vec::new(),
        passes: Vec::new(),
        index_checks: vec![call.input(INDICES)],
    };
    let work = g.work_items(input.dtype);
    if work == 0 {
        return Ok(plan);
    }
    plan.passes.push(Pass {
        kernel,
        buffers: call.buffers(&BINDINGS),
        params: gather_elements_params(&g, input.dtype)?,
        workgroups: work.div_ceil(ELEMENTS_PER_THREAD * u64::from(WORKGROUP_SIZE)),
    });
    Ok(plan)
}

fn module(data: DataType, index: DataType, key: &str, origin: &str) -> crate::KernelText {
    let mut w = Writer::new();
    super::Prologue {
        origin,
        key,
        what: &[format!("gather_elements: data {data}, indices {index}")],
        workgroup_size: WORKGROUP_SIZE,
        elements_per_thread: Some(ELEMENTS_PER_THREAD),
        words: params::WGSL,
        consts: &[(
            "Not an offset: an out-of-range index value.",
            "const BAD: u32 = 0xffffffffu;",
        )],
        buffers: &BUFFERS,
    }
    .write(&mut w);
    w.lines(crate::family::divisor::WGSL);
    w.blank();
    dtype::gen_load_from(&mut w, "load_input", &BUFFERS[1], data);
    w.blank();
    dtype::gen_load_from(&mut w, "load_index", &BUFFERS[2], index);
    w.blank();
    if !dtype::is_packed(data) {
        dtype::gen_store_to(&mut w, "store_output", &BUFFERS[3], data);
        w.blank();
    }
    dtype::gen_resolve_index(&mut w, "resolve", index, "BAD");
    w.blank();
    gen_source(&mut w);
    w.blank();
    w.line("@compute @workgroup_size(WORKGROUP_SIZE)");
    w.open(format!(
        "fn {ENTRY}(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) num_workgroups: vec3<u32>, @builtin(local_invocation_index) lid: u32)"
    ));
    w.line("let group = wg.x + wg.y * num_workgroups.x;");
    w.line("let walk = Walk(param(P_DIMS), param(P_AXIS), param(P_AXIS_LEN));");
    w.line("let work = param(P_WORK_COUNT);");
    w.line("let outputs = param(P_OUTPUT_COUNT);");
    w.comment("ELEMENTS_PER_THREAD work items a thread, WORKGROUP_SIZE apart.");
    w.line("let first = group * ELEMENTS_PER_THREAD * WORKGROUP_SIZE + lid;");
    each_item(&mut w, |w| {
        if dtype::is_packed(data) {
            gen_packed_item(w, data);
        } else {
            w.line("let s = source_of(item, walk);");
            w.block("if (s != BAD)", |w| {
                w.line("store_output(item, load_input(s));");
            });
        }
    });
    w.close();
    w.finish_kernel()
}

/// `struct Walk` and `fn source_of(o: u32, g: Walk) -> u32`: the input
/// offset output element `o` reads, or `BAD` after reporting `o`.
fn gen_source(w: &mut Writer) {
    w.comment("The walk's parameter words read once at the kernel's top.");
    w.block("struct Walk", |w| {
        w.line("dims: u32,");
        w.line("axis: u32,");
        w.line("len: u32,");
    });
    w.blank();
    w.comment("The input offset output element o reads: its coordinates (last dimension");
    w.comment("first, divided out with the plan's divisors) times the input's strides,");
    w.comment("the axis coordinate replaced by its index value; BAD after reporting o");
    w.comment("when that value is out of range.");
    w.open("fn source_of(o: u32, g: Walk) -> u32");
    w.line("let i = resolve(load_index(o), g.len);");
    w.block("if (i == BAD)", |w| {
        w.line("atomicMin(&status[0], o);");
        w.line("return BAD;");
    });
    w.line("var rest = o;");
    w.line("var offset = 0u;");
    w.block("for (var k = 0u; k < g.dims; k = k + 1u)", |w| {
        w.line("let d = g.dims - 1u - k;");
        w.line("let q = divide(rest, param(P_SIZE_MAGIC + d), param(P_SIZE_SHIFTS + d));");
        w.line("let c = select(rest - q * param(P_SIZES + d), i, d == g.axis);");
        w.line("rest = q;");
        w.line("offset = offset + c * param(P_STRIDES + d);");
    });
    w.line("return offset;");
    w.close();
}

/// One output word of 8- or 16-bit data: its lanes' elements gathered and
/// stored at once.
fn gen_packed_item(w: &mut Writer, data: DataType) {
    let width = data.size_bits();
    let lanes = 32 / width;
    w.comment(format!(
        "One output word: {lanes} elements of {width} bits, stored at once."
    ));
    w.line(format!("let o0 = item * {lanes}u;"));
    w.line(format!("let lanes = min({lanes}u, outputs - o0);"));
    w.line("var word = 0u;");
    w.line("var ok = true;");
    w.block("for (var e = 0u; e < lanes; e = e + 1u)", |w| {
        w.line("let s = source_of(o0 + e, walk);");
        w.block("if (s == BAD)", |w| {
            w.line("ok = false;");
            w.line("break;");
        });
        w.line(format!("word = word | (load_input(s) << (e * {width}u));"));
    });
    w.comment("After an out-of-range index value the word is not stored.");
    w.block("if (ok)", |w| {
        w.line(BUFFERS[3].set("item", "word"));
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    const NAME: &str = "indices";

    #[test]
    fn equal_sizes_walk_three_dimensions_at_most() {
        let g = GatherElementsGeometry::new(&[2, 3, 4, 5], &[2, 3, 7, 5], 2).unwrap();
        assert_eq!(g.sizes, [6, 7, 5]);
        assert_eq!(g.strides, [20, 5, 1]);
        assert_eq!((g.axis, g.axis_len), (1, 4));
        // ONNX's smaller indices off the axis keep their dimensions apart.
        let g = GatherElementsGeometry::new(&[2, 3, 4], &[2, 2, 4], 0).unwrap();
        assert_eq!(g.sizes, [2, 8]);
        assert_eq!(g.strides, [12, 1]);
        assert!(GatherElementsGeometry::new(&[2, 3], &[2, 4], 0).is_err());
        assert!(GatherElementsGeometry::new(&[2, 3], &[2], 0).is_err());
        assert!(GatherElementsGeometry::new(&[2, 3], &[2, 3], 2).is_err());
    }

    #[test]
    fn gathers_along_the_axis() {
        // DirectML's example: axis 0 of [[1,2,3],[4,5,6],[7,8,9]].
        let input =
            HostTensor::from_slice([3, 3], &[1f32, 2., 3., 4., 5., 6., 7., 8., 9.]).unwrap();
        let indices = HostTensor::from_slice([2, 3], &[1u32, 2, 0, 2, 0, 0]).unwrap();
        let out = gather_elements_cpu(
            &input,
            &indices,
            &TensorDesc::new(DataType::Float32, [2, 3]),
            0,
            NAME,
        )
        .unwrap();
        assert_eq!(out.to_vec::<f32>().unwrap(), [4., 8., 3., 7., 2., 3.]);
        // Axis 1, negative indices, smaller indices off the axis.
        let input = HostTensor::from_slice([3, 2], &[1i8, 2, 3, 4, 5, 6]).unwrap();
        let indices = HostTensor::from_slice([2, 2], &[-1i64, 0, 1, -2]).unwrap();
        let out = gather_elements_cpu(
            &input,
            &indices,
            &TensorDesc::new(DataType::Int8, [2, 2]),
            1,
            NAME,
        )
        .unwrap();
        assert_eq!(out.to_vec::<i8>().unwrap(), [2, 1, 4, 3]);
        // Out of range: the lowest bad element, with its coordinates.
        let bad = HostTensor::from_slice([2, 2], &[0i64, 2, -3, 5]).unwrap();
        let e = gather_elements_cpu(
            &input,
            &bad,
            &TensorDesc::new(DataType::Int8, [2, 2]),
            1,
            NAME,
        )
        .unwrap_err();
        assert_eq!(
            e,
            OpError::IndexOutOfRange {
                tensor: NAME.into(),
                position: vec![0, 1],
                value: 2,
                low: -2,
                high: 1,
            }
        );
        assert_eq!(
            gather_elements_index_error(input.desc(), &bad, 1, NAME, 1),
            e
        );
        assert!(matches!(
            gather_elements_index_error(input.desc(), &bad, 1, NAME, 0),
            OpError::Device(_)
        ));
    }
}
