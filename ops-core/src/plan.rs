//! GPU plans: what generated code hands the GPU runtime.
//!
//! A plan is data, not wgpu calls: the kernels (WGSL generated from a spec,
//! on first use), the buffers each pass binds, the parameter words and the
//! workgroup count. `ops-gpu` executes any plan; generated code never touches
//! wgpu.

use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::OnceLock;

/// How a kernel binds one buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Access {
    /// `var<storage, read>`.
    Read,
    /// `var<storage, read_write>`.
    ReadWrite,
    /// `var<uniform>`: a pass's parameter words ([`BufferRef::Params`]),
    /// at most [`PARAM_WORDS`], as `array<vec4<u32>, PARAM_WORDS / 4>`.
    ///
    /// Why not storage: a CPU adapter (Mesa's lavapipe) reads a storage
    /// word with one load only at the top level of a kernel, and inside a
    /// branch, a loop or after an early return loops over the SIMD lanes
    /// for it; a uniform word with the same index in every thread is one
    /// load anywhere (see `BENCHMARKS.md`, Tuning decisions).
    Uniform,
}

/// Loop iterations llvmpipe (lavapipe) lets one invocation run, every
/// loop of the shader counted together (nested ones and the helpers'
/// included): past it, every loop ends early, its guard against hangs,
/// and the results are wrong. A planner whose threads loop over many
/// values keeps the product of values and loop iterations per value
/// within it ([`crate::scalar::Scalar::gpu_loop_steps`]).
pub const LOOP_BUDGET: u64 = 65_535;

/// Most iterations a planner lets one loop of one thread run. llvmpipe
/// (lavapipe) ends a long shader loop early, its guard against hangs, and
/// fewer iterations when the loop's body branches; this limit stays well
/// below where that was seen (see `BENCHMARKS.md`, Tuning decisions). Plans
/// that would loop longer take another kernel (a scatter walk, two passes;
/// a reduction, chunks), on every adapter.
pub const MAX_THREAD_STEPS: u64 = 16_384;

/// Parameter words a pass's [`Access::Uniform`] binding holds: the runtime
/// binds that many (384 bytes), the words beyond the pass's zero. The most
/// a kernel takes is an element-wise kernel's 88: the strides of seven
/// inputs over eight dimensions, and eight attributes.
pub const PARAM_WORDS: usize = 96;

/// The variant of a kernel for tensors larger than one storage binding:
/// every tensor binding of the kernel becomes several consecutive bindings
/// (segments) of its buffer, reached through routing functions.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct Segmented {
    /// The variant's WGSL (same entry point and workgroup size).
    pub wgsl: &'static str,
    /// For each binding of the kernel, in order, how many consecutive
    /// bindings of the variant it becomes (1 for parameters and status
    /// words), each with the binding's access.
    pub segments: &'static [u32],
}

/// A kernel's WGSL as a generator produces it: the module and, for
/// generated kernels, its segmented variant (segments per binding and
/// text).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelText {
    /// The module.
    pub wgsl: String,
    /// The segmented variant: segments per binding, and its module.
    pub segmented: Option<(Vec<u32>, String)>,
}

/// Where a kernel's text comes from.
enum Source {
    /// Written into the binary (hand-written kernels, tests).
    Text {
        wgsl: &'static str,
        segmented: Option<Segmented>,
    },
    /// Generated on first use and kept: the spec compiler emits the call to
    /// the family's generator with the spec's configuration, not the text,
    /// so a catalog's binary holds no WGSL.
    Generated {
        generate: fn() -> KernelText,
        text: OnceLock<KernelText>,
    },
}

/// One WGSL kernel: its key, entry point, bindings, workgroup size and
/// text. Pipelines are cached by key.
pub struct Kernel {
    /// Unique key: operator, pattern variant and data types
    /// (`ArgMin/reduce_rows/FLOAT16/UINT64`). Pipelines are cached by it.
    pub key: &'static str,
    /// The entry point's name.
    pub entry: &'static str,
    /// Binding `i` of group 0 is `bindings[i]`.
    pub bindings: &'static [Access],
    /// Threads per workgroup (the kernel's `WORKGROUP_SIZE`).
    pub workgroup_size: u32,
    source: Source,
}

impl Kernel {
    /// A kernel of fixed text, without a segmented variant.
    pub const fn new(
        key: &'static str,
        wgsl: &'static str,
        entry: &'static str,
        bindings: &'static [Access],
        workgroup_size: u32,
    ) -> Kernel {
        Kernel {
            key,
            entry,
            bindings,
            workgroup_size,
            source: Source::Text {
                wgsl,
                segmented: None,
            },
        }
    }

    /// A kernel of fixed text with its segmented variant.
    pub const fn with_variant(
        key: &'static str,
        wgsl: &'static str,
        entry: &'static str,
        bindings: &'static [Access],
        workgroup_size: u32,
        segmented: Segmented,
    ) -> Kernel {
        Kernel {
            key,
            entry,
            bindings,
            workgroup_size,
            source: Source::Text {
                wgsl,
                segmented: Some(segmented),
            },
        }
    }

    /// A kernel whose text `generate` produces on first use (and the
    /// kernel keeps).
    pub const fn generated(
        key: &'static str,
        entry: &'static str,
        bindings: &'static [Access],
        workgroup_size: u32,
        generate: fn() -> KernelText,
    ) -> Kernel {
        Kernel {
            key,
            entry,
            bindings,
            workgroup_size,
            source: Source::Generated {
                generate,
                text: OnceLock::new(),
            },
        }
    }

    fn text(&self) -> Option<&KernelText> {
        match &self.source {
            Source::Text { .. } => None,
            Source::Generated { generate, text } => Some(text.get_or_init(generate)),
        }
    }

    /// The WGSL module (generated on first use for generated kernels).
    pub fn wgsl(&self) -> &str {
        match &self.source {
            Source::Text { wgsl, .. } => wgsl,
            Source::Generated { .. } => self.text().map_or("", |t| t.wgsl.as_str()),
        }
    }

    /// The segmented variant, run when a buffer exceeds the binding limit
    /// (every generated kernel has one): segments per binding and module.
    pub fn segmented(&self) -> Option<(&[u32], &str)> {
        match &self.source {
            Source::Text { segmented, .. } => segmented.as_ref().map(|s| (s.segments, s.wgsl)),
            Source::Generated { .. } => self
                .text()
                .and_then(|t| t.segmented.as_ref())
                .map(|(n, w)| (n.as_slice(), w.as_str())),
        }
    }

    /// Whether the text is generated on first use.
    pub fn is_generated(&self) -> bool {
        matches!(self.source, Source::Generated { .. })
    }
}

impl fmt::Debug for Kernel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Kernel")
            .field("key", &self.key)
            .field("entry", &self.entry)
            .field("bindings", &self.bindings)
            .field("workgroup_size", &self.workgroup_size)
            .finish_non_exhaustive()
    }
}

/// Kernels are equal when their keys, entry points, bindings and workgroup
/// sizes are: a key names one text (the pipeline cache refuses two texts
/// under one key).
impl PartialEq for Kernel {
    fn eq(&self, other: &Kernel) -> bool {
        self.key == other.key
            && self.entry == other.entry
            && self.bindings == other.bindings
            && self.workgroup_size == other.workgroup_size
    }
}

impl Eq for Kernel {}

impl Hash for Kernel {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.key.hash(state);
        self.entry.hash(state);
    }
}

/// A buffer a pass binds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BufferRef {
    /// The pass's parameter words: a uniform block of [`PARAM_WORDS`]
    /// words ([`Access::Uniform`]), or a read-only `array<u32>` for a
    /// kernel that binds it as storage.
    Params,
    /// Input tensor `i` of the operator (spec order), as u32 words.
    Input(usize),
    /// Output tensor `i` of the operator (spec order), as u32 words.
    Output(usize),
    /// Scratch buffer `i` of the plan, zero-filled before the first pass.
    Scratch(usize),
    /// The status words (`array<atomic<u32>>`), each set to `u32::MAX` before
    /// the first pass; word `k` is the lowest offending element position found
    /// by index check `k`.
    Status,
}

/// One compute dispatch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pass {
    /// The kernel to run.
    pub kernel: &'static Kernel,
    /// What binding `i` refers to, for each binding of the kernel.
    pub buffers: Vec<BufferRef>,
    /// Parameter words, bound as [`BufferRef::Params`].
    pub params: Vec<u32>,
    /// Total workgroups; the runtime spreads them over x and y (at most
    /// 65,535 each) and the kernel linearises `x + y * num_workgroups.x`.
    pub workgroups: u64,
}

/// The kind of adapter a plan is shaped for.
///
/// A plan's passes compute the same result on every adapter; the class only
/// changes how the work is split between threads, because the two kinds
/// reward different shapes. A software adapter (Mesa's lavapipe: a few CPU
/// cores) runs long per-thread loops best, executes every branch of a
/// kernel, and pays for every barrier (the scatter's vector walk meets one
/// every 64 rows, to keep a workgroup's SIMD batches on the same rows); a
/// hardware GPU needs tens of thousands of threads with loads in flight and
/// combines a workgroup's results cheaply in workgroup memory.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum DeviceClass {
    /// A CPU-backed adapter (`wgpu::DeviceType::Cpu`): few threads, long
    /// loops, few barriers.
    #[default]
    Software,
    /// A hardware GPU: enough threads to fill it, workgroup trees.
    Hardware,
}

impl DeviceClass {
    /// Every class.
    pub const ALL: [DeviceClass; 2] = [DeviceClass::Software, DeviceClass::Hardware];

    /// The class's name: `software` or `hardware` (as `OPS_PLANS` and
    /// `ops bench --plans` spell it).
    pub const fn name(self) -> &'static str {
        match self {
            DeviceClass::Software => "software",
            DeviceClass::Hardware => "hardware",
        }
    }

    /// The class of an adapter that is (`software`) or is not CPU-backed.
    pub const fn of(software: bool) -> DeviceClass {
        if software {
            DeviceClass::Software
        } else {
            DeviceClass::Hardware
        }
    }
}

/// How an output buffer starts before the first pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutputInit {
    /// Every word zero.
    Zero,
    /// A copy of input `i` (same byte size).
    CopyOfInput(usize),
    /// Whatever the buffer holds: the passes write every element, so no
    /// initialisation is needed. A runtime that allocates fresh buffers
    /// (wgpu zero-fills them) sees [`Zero`](OutputInit::Zero); one that reuses
    /// a buffer, like a profiler timing repeated runs, skips the clear.
    Overwritten,
}

/// Everything the GPU runtime needs to run one operator call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GpuPlan {
    /// How each output starts, in spec order.
    pub outputs: Vec<OutputInit>,
    /// Byte sizes of the scratch buffers.
    pub scratch_bytes: Vec<u64>,
    /// Passes, run in order.
    pub passes: Vec<Pass>,
    /// Index checks: status word `k` reports on input tensor `index_checks[k]`.
    pub index_checks: Vec<usize>,
}

/// Spreads `workgroups` over a 2-D grid of at most `max_per_dim` per dimension.
///
/// Returns `None` when even a square grid cannot hold them.
pub fn split_workgroups(workgroups: u64, max_per_dim: u32) -> Option<(u32, u32)> {
    if workgroups == 0 {
        return Some((0, 0));
    }
    let max = u64::from(max_per_dim);
    if workgroups <= max {
        return Some((workgroups as u32, 1));
    }
    let y = workgroups.div_ceil(max);
    (y <= max).then_some((max_per_dim, y as u32))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split() {
        assert_eq!(split_workgroups(10, 65535), Some((10, 1)));
        assert_eq!(split_workgroups(65536, 65535), Some((65535, 2)));
        assert_eq!(split_workgroups(u64::MAX, 65535), None);
    }
}
