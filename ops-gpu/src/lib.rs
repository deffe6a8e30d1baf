//! The wgpu runtime of the `ops` framework.
//!
//! Generated operators describe their GPU work as a [`GpuPlan`]: static WGSL
//! kernels, the passes that dispatch them, how the output buffers start and
//! the index checks the kernels report through the status buffer. This crate
//! executes any such plan on a wgpu device, and keeps tensors there:
//!
//! * [`Context::new`] picks an adapter (a hardware one when present, else a
//!   software one such as Mesa's lavapipe; `OPS_ADAPTER=software|hardware`
//!   forces one) and opens a device with the adapter's own limits;
//!   [`Context::from_device`] runs on a `wgpu::Device` and `wgpu::Queue`
//!   the caller already has.
//! * [`DeviceTensor`]s stay on the device: [`Context::upload`] and
//!   [`Context::download`] (or [`Context::download_async`]) move data, and
//!   a [`Recording`] runs any number of operators on device tensors in one
//!   submission, into an encoder of its own ([`Context::record`]) or of
//!   the caller's ([`Context::record_into`]), with no read-back between
//!   them. Index checks are gathered and read once, when the
//!   [`Submission`] is finished ([`Submission::finish`] is `async`;
//!   [`Submission::wait`] blocks on it).
//! * Buffers come from a pool per context, by size class, and return to it
//!   when their last user is done ([`Context::pool_stats`]).
//! * [`Context::run`] is the simple path on host tensors: upload, one
//!   submission, read-back; [`Context::execute`] does the same for a bare
//!   plan.
//! * Compute pipelines are compiled once per [`Kernel::key`](ops_core::Kernel)
//!   and cached for the life of the context ([`Context::cache_stats`]), also
//!   when several threads first need one at once.
//! * A buffer larger than one storage binding
//!   ([`Context::max_binding_size`]: `max_storage_buffer_binding_size`, 128
//!   MiB on lavapipe, whose buffers may reach 2 GiB) is bound in segments by
//!   the kernel's *segmented variant*, a second module that every generated
//!   kernel carries ([`Kernel::segmented`](ops_core::Kernel::segmented); up
//!   to four segments per tensor). Dispatches beyond 65,535 workgroups are spread
//!   over a 2-D grid.
//! * [`shared`] is a process-wide context for tests and the CLI.
//!
//! Every tensor lives on the GPU as an array of `u32` words: 8- and 16-bit
//! elements packed little-endian into words, 64-bit values as two words.
//! Every buffer's byte size is padded up to a multiple of 16 (and at least 16),
//! so that any tensor can be bound as `array<vec4<u32>>`.
//!
//! Nothing a caller can pass in makes the runtime panic: malformed plans,
//! mismatched tensors, tensors of another context ([`OpError::WrongContext`]),
//! invalid WGSL, oversized buffers and wgpu validation or
//! out-of-memory errors all come back as [`OpError`]s from the call that hit
//! them — [`OpError::TooLarge`] naming the limit (checked before anything is
//! allocated), [`OpError::OutOfMemory`] when the device refuses an
//! allocation (the context stays usable), [`OpError::DeviceLost`] from then
//! on once the device is lost ([`Context::device_lost`]).

#![warn(missing_docs)]

mod cache;
mod context;
mod exec;
mod pool;
mod profile;
mod record;
mod segment;
mod tensor;
mod wait;

use std::sync::OnceLock;

use ops_core::{GpuPlan, HostTensor, OpError, Operator, TensorDesc};

pub use context::{Context, DEFAULT_POOL_LIMIT};
pub use pool::PoolStats;
pub use profile::{
    copy_plan, copy_words_plan, MinimalDispatch, Prepared, Profiler, Sample, TimeSource,
    COPY_KERNEL, COPY_WORDS_KERNEL, COPY_WORKGROUP_SIZE,
};
pub use record::{Encoded, Recording, Submission};
pub use tensor::DeviceTensor;
/// The wgpu this crate is built on, for callers that bring their own device.
pub use wgpu;

/// What [`Context::new`] says when no usable GPU adapter was found.
pub const NO_ADAPTER_HELP: &str = "no GPU adapter was found: wgpu could not find a hardware \
GPU nor a software (CPU) adapter to run compute shaders on. To run without a GPU, install \
Mesa's software Vulkan driver lavapipe (`apt-get install mesa-vulkan-drivers` on \
Debian/Ubuntu, `dnf install mesa-vulkan-drivers` on Fedora) so that \
/usr/share/vulkan/icd.d/lvp_icd.*.json exists; set OPS_ADAPTER=software to force it, and \
WGPU_BACKEND=vulkan to limit wgpu to Vulkan.";

/// Facts about the adapter a [`Context`] runs on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AdapterSummary {
    /// The adapter's name (`llvmpipe (LLVM 15.0.7, 256 bits)`).
    pub name: String,
    /// The wgpu backend (`vulkan`, `metal`, `dx12`, `gl`).
    pub backend: String,
    /// The device type, as wgpu names it (`DiscreteGpu`, `IntegratedGpu`, `Cpu`, ...).
    pub device_type: String,
    /// True for a software adapter (wgpu's `DeviceType::Cpu`), such as lavapipe.
    pub software: bool,
}

/// Why [`Context::execute`] failed.
#[non_exhaustive]
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ExecError {
    /// Index check `check` of the plan found an out-of-range index; `position`
    /// is the lowest offending element position of the checked tensor. The
    /// outputs were computed but are not returned.
    #[error("index check {check} failed at element {position}")]
    Index {
        /// The index check (an index into [`GpuPlan::index_checks`]).
        check: usize,
        /// The lowest offending element position (row-major, in elements).
        position: u64,
    },
    /// Any other failure.
    #[error(transparent)]
    Op(#[from] OpError),
}

/// Pipeline cache counters of a [`Context`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct CacheStats {
    /// Pipelines compiled successfully: one per kernel key. A failed
    /// compilation is not counted nor cached; the next use retries it.
    pub compiled: u64,
    /// Pipeline look-ups served from the cache.
    pub hits: u64,
}

impl Context {
    /// Runs `op` on the GPU.
    ///
    /// Checks the call as the CPU reference does ([`ops_core::check_call`]:
    /// the inputs' count, data types, sizes and host-read values, and the
    /// outputs' element counts; the same error as the CPU's otherwise),
    /// executes the
    /// operator's [`GpuPlan`] for this context's
    /// [`device_class`](Context::device_class) with
    /// [`Operator::output_descs`], and phrases
    /// a failed index check through [`Operator::index_error`].
    pub fn run(
        &self,
        op: &dyn Operator,
        inputs: &[&HostTensor],
    ) -> Result<Vec<HostTensor>, OpError> {
        self.run_with(op, inputs, None)
    }

    /// [`run`](Context::run) with `plan` instead of the one the operator
    /// picks for this context's class: one of
    /// [`Operator::gpu_plan_variants`], which tests and `ops fuzz
    /// --variants all` run in turn.
    pub fn run_plan(
        &self,
        op: &dyn Operator,
        inputs: &[&HostTensor],
        plan: &GpuPlan,
    ) -> Result<Vec<HostTensor>, OpError> {
        self.run_with(op, inputs, Some(plan))
    }

    fn run_with(
        &self,
        op: &dyn Operator,
        inputs: &[&HostTensor],
        plan: Option<&GpuPlan>,
    ) -> Result<Vec<HostTensor>, OpError> {
        ops_core::check_call(op, inputs)?;
        let picked;
        let plan = match plan {
            Some(plan) => plan,
            None => {
                picked = op.gpu_plan_for(self.device_class())?;
                &picked
            }
        };
        let outputs = op.output_descs();
        match self.execute(plan, inputs, &outputs) {
            Ok(out) => Ok(out),
            Err(ExecError::Index { check, position }) => {
                Err(op.index_error(inputs, check, position))
            }
            Err(ExecError::Op(e)) => Err(e),
        }
    }

    /// Executes `plan` with `inputs`, returning one tensor per entry of
    /// `outputs` (which must match `plan.outputs` in count).
    ///
    /// See the crate documentation for the buffer layout. A failed index
    /// check gives [`ExecError::Index`] for the lowest failing check.
    pub fn execute(
        &self,
        plan: &GpuPlan,
        inputs: &[&HostTensor],
        outputs: &[TensorDesc],
    ) -> Result<Vec<HostTensor>, ExecError> {
        exec::execute(self, plan, inputs, outputs)
    }
}

/// The process-wide context, created on first use (for tests and the CLI).
///
/// Creation is attempted once; a failure (no adapter) is returned to every
/// caller.
pub fn shared() -> Result<&'static Context, OpError> {
    static SHARED: OnceLock<Result<Context, OpError>> = OnceLock::new();
    SHARED
        .get_or_init(Context::new)
        .as_ref()
        .map_err(Clone::clone)
}
