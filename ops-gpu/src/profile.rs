//! Profiling: plans timed with their buffers resident on the device, a plain
//! copy kernel as the bandwidth yardstick, and a minimal hand-written
//! dispatch to compare [`Context::run`]'s per-call overhead with.
//!
//! [`Context::execute`] uploads its inputs and reads its outputs back on
//! every call, which on a discrete GPU costs more than the kernels. A
//! [`Profiler`] instead uploads once ([`Profiler::prepare`]) and then times
//! only what a call does on the device ([`Prepared::run`]): starting the
//! outputs, scratch and status buffers as the plan says, and the passes.
//! Binding, recording and reading back are the runtime's one executor, the
//! same code [`Context::execute`] runs; only the timing is the profiler's.
//!
//! # Timing
//!
//! GPU time comes from timestamp queries when the adapter offers
//! `Features::TIMESTAMP_QUERY`. The [`Context`]'s own device is opened with
//! no optional features (device creation belongs to `context.rs`), so the
//! profiler opens a second device on the same adapter and requests the
//! timestamp features only when the adapter lists them: an adapter without
//! them still profiles, by wall time from submission to completion. Every
//! figure says which clock it came from ([`TimeSource`]).

use std::time::{Duration, Instant};

use ops_core::{
    split_workgroups, Access, BufferRef, DataType, GpuPlan, HostTensor, Kernel, OpError,
    OutputInit, Pass, TensorDesc,
};

use crate::cache::{compile, param_words, Variant, PARAMS_USAGE};
use crate::context::{error_text, Scopes};
use crate::exec::{map_all, padded, wait, Bound, Input, Mode};
use crate::{AdapterSummary, Context, ExecError};

/// Where a measured duration comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TimeSource {
    /// Timestamps written by the device before the first command of a run
    /// and after the last (`TIMESTAMP_QUERY_INSIDE_ENCODERS`): output,
    /// scratch and status initialisation plus every pass.
    GpuTimestamps,
    /// Timestamps at the beginning of the first compute pass and the end of
    /// the last (`TIMESTAMP_QUERY` only): the passes, not the buffer
    /// initialisation before them.
    GpuPassTimestamps,
    /// Host wall time from submission until the device reports completion.
    WallClock,
}

impl TimeSource {
    /// A short label for reports (`gpu-timestamps`, `gpu-pass-timestamps`,
    /// `wall-clock`).
    pub const fn label(self) -> &'static str {
        match self {
            TimeSource::GpuTimestamps => "gpu-timestamps",
            TimeSource::GpuPassTimestamps => "gpu-pass-timestamps",
            TimeSource::WallClock => "wall-clock",
        }
    }
}

/// One timed run of a [`Prepared`] plan.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sample {
    /// Device time between the two timestamps, when the profiler has them.
    pub gpu: Option<Duration>,
    /// Host time from submission until completion was reported.
    pub wall: Duration,
}

impl Sample {
    /// The device time when measured, else the wall time.
    pub fn best(&self) -> Duration {
        self.gpu.unwrap_or(self.wall)
    }
}

/// A device on the [`Context`]'s adapter, opened with timestamp queries when
/// the adapter offers them, that times plans with resident buffers.
///
/// It runs plans with the runtime's own executor on a [`Context`] of its
/// own (so its pipelines and buffers leave the caller's context alone):
/// what it times is exactly what [`Context::execute`] records.
pub struct Profiler {
    ctx: Context,
    source: TimeSource,
}

impl std::fmt::Debug for Profiler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Profiler")
            .field("adapter", self.ctx.adapter())
            .field("source", &self.source)
            .finish_non_exhaustive()
    }
}

impl Profiler {
    /// Opens a profiling device on the adapter `ctx` runs on (same name and
    /// backend), requesting `TIMESTAMP_QUERY` (and
    /// `TIMESTAMP_QUERY_INSIDE_ENCODERS`) only when the adapter offers it.
    /// Plans bind as on `ctx`: the same largest binding
    /// ([`Context::max_binding_size`]) and so the same segmented variants.
    pub fn new(ctx: &Context) -> Result<Profiler, OpError> {
        let want = ctx.adapter().clone();
        let desc = wgpu::InstanceDescriptor::new_without_display_handle_from_env();
        let backends = desc.backends;
        let instance = wgpu::Instance::new(desc);
        let adapters = pollster::block_on(instance.enumerate_adapters(backends));
        let adapter = adapters
            .into_iter()
            .find(|a| {
                let info = a.get_info();
                info.name == want.name && info.backend.to_string() == want.backend
            })
            .ok_or_else(|| {
                OpError::NoAdapter(format!(
                    "the profiler found no adapter named `{}` on {}",
                    want.name, want.backend
                ))
            })?;
        let offered = adapter.features();
        let mut features = wgpu::Features::empty();
        let source = if offered.contains(wgpu::Features::TIMESTAMP_QUERY) {
            features |= wgpu::Features::TIMESTAMP_QUERY;
            if offered.contains(wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS) {
                features |= wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS;
                TimeSource::GpuTimestamps
            } else {
                TimeSource::GpuPassTimestamps
            }
        } else {
            TimeSource::WallClock
        };
        let info = adapter.get_info();
        let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            label: Some("ops-gpu profiler"),
            required_features: features,
            required_limits: adapter.limits(),
            ..Default::default()
        }))
        .map_err(|e| device_error("opening the profiling device failed", e))?;
        let ctx = Context::from_parts(Some((instance, adapter)), device, queue, &info)
            .with_device_class(ctx.device_class())
            .with_max_binding_size(ctx.max_binding_size());
        Ok(Profiler { ctx, source })
    }

    /// Where this profiler's durations come from.
    pub fn time_source(&self) -> TimeSource {
        self.source
    }

    /// The adapter it runs on.
    pub fn adapter(&self) -> &AdapterSummary {
        self.ctx.adapter()
    }

    /// Uploads `inputs` and creates everything `plan` binds, so that
    /// [`Prepared::run`] only records and submits the work of one call.
    ///
    /// `outputs` describes the plan's outputs (as for [`Context::execute`]);
    /// the checks and limits are [`Context::execute`]'s, segmented variants
    /// included.
    pub fn prepare(
        &self,
        plan: &GpuPlan,
        inputs: &[&HostTensor],
        outputs: &[TensorDesc],
    ) -> Result<Prepared<'_>, OpError> {
        let inputs: Vec<Input<'_>> = inputs.iter().map(|t| Input::Host(t)).collect();
        let bound = Bound::new(
            &self.ctx,
            plan,
            &inputs,
            outputs,
            &[],
            Mode::Fresh { reusable: true },
        )
        .map_err(op_error)?;
        let queries = match self.source {
            TimeSource::WallClock => None,
            _ => Some(Queries::new(&self.ctx.device)),
        };
        Ok(Prepared {
            profiler: self,
            bound,
            passes: plan.passes.len(),
            outputs: outputs.to_vec(),
            queries,
        })
    }
}

fn device_error(what: &str, e: impl std::fmt::Display) -> OpError {
    OpError::Device(format!("{what}: {e}"))
}

/// An [`ExecError`] of a profiled plan as an [`OpError`]: the profiler has
/// no operator to phrase a failed index check with.
fn op_error(e: ExecError) -> OpError {
    match e {
        ExecError::Index { check, position } => {
            OpError::Device(format!("index check {check} failed at element {position}"))
        }
        ExecError::Op(e) => e,
    }
}

/// Two timestamp queries, their resolve buffer and its read-back copy.
struct Queries {
    set: wgpu::QuerySet,
    resolve: wgpu::Buffer,
    read: wgpu::Buffer,
}

impl Queries {
    fn new(device: &wgpu::Device) -> Queries {
        let size = 2 * wgpu::QUERY_SIZE as u64;
        Queries {
            set: device.create_query_set(&wgpu::QuerySetDescriptor {
                label: Some("ops-gpu profiler timestamps"),
                ty: wgpu::QueryType::Timestamp,
                count: 2,
            }),
            resolve: device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("timestamp resolve"),
                size,
                usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: false,
            }),
            read: device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("timestamp read-back"),
                size,
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            }),
        }
    }
}

/// A plan with its buffers resident on the profiler's device.
pub struct Prepared<'p> {
    profiler: &'p Profiler,
    bound: Bound,
    passes: usize,
    outputs: Vec<TensorDesc>,
    queries: Option<Queries>,
}

impl std::fmt::Debug for Prepared<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Prepared")
            .field("passes", &self.passes)
            .field("outputs", &self.outputs)
            .finish_non_exhaustive()
    }
}

impl Prepared<'_> {
    /// Runs the plan once, as [`Context::execute`] would on the device:
    /// outputs start as the plan says (zeroed, a copy of an input, or left as
    /// they are when the passes overwrite them), scratch
    /// buffers zeroed, status words all ones, then every pass.
    pub fn run(&self) -> Result<Sample, OpError> {
        let p = self.profiler;
        let device = &p.ctx.device;
        let scopes = Scopes::push(device);
        let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("ops-gpu profiled run"),
        });
        let inside = p.source == TimeSource::GpuTimestamps;
        if let (Some(q), true) = (&self.queries, inside) {
            encoder.write_timestamp(&q.set, 0);
        }
        let pass_stamps = match (&self.queries, inside) {
            (Some(q), false) => Some(&q.set),
            _ => None,
        };
        self.bound.record(&mut encoder, true, pass_stamps);
        let have_stamps = inside || self.passes > 0;
        if let Some(q) = &self.queries {
            if inside {
                encoder.write_timestamp(&q.set, 1);
            }
            if have_stamps {
                encoder.resolve_query_set(&q.set, 0..2, &q.resolve, 0);
                encoder.copy_buffer_to_buffer(&q.resolve, 0, &q.read, 0, q.read.size());
            }
        }
        let commands = encoder.finish();
        let start = Instant::now();
        let index = p.ctx.queue.submit([commands]);
        let stamps: Vec<wgpu::Buffer> = match &self.queries {
            Some(q) if have_stamps => vec![q.read.clone()],
            _ => Vec::new(),
        };
        let pending = map_all(index, stamps);
        let waited = wait(device, &|| p.ctx.check_lost(), &pending);
        let wall = start.elapsed();
        if let Some(e) = scopes.pop() {
            return Err(OpError::Device(format!(
                "a profiled run failed: {}",
                error_text(&e)
            )));
        }
        waited?;
        let gpu = match &self.queries {
            Some(_) if have_stamps => {
                let bytes = pending.read(0, 16)?;
                let t0 = u64::from_le_bytes(bytes[0..8].try_into().unwrap_or_default());
                let t1 = u64::from_le_bytes(bytes[8..16].try_into().unwrap_or_default());
                let period = f64::from(p.ctx.queue.get_timestamp_period());
                let ns = t1.saturating_sub(t0) as f64 * period;
                Some(Duration::from_nanos(ns.round() as u64))
            }
            _ => None,
        };
        Ok(Sample { gpu, wall })
    }

    /// The outputs of the last [`run`](Prepared::run), read back; an
    /// [`OpError::Device`] when a status word reports a failed index check.
    pub fn read_outputs(&self) -> Result<Vec<HostTensor>, OpError> {
        let ctx = &self.profiler.ctx;
        let encoder = ctx
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("ops-gpu profiler read-back"),
            });
        self.bound.read_back(ctx, encoder).map_err(op_error)
    }
}

/// Threads per workgroup of [`COPY_KERNEL`].
pub const COPY_WORKGROUP_SIZE: u32 = 256;

/// A plain copy: `dst[i] = src[i]` over `vec4<u32>` (16 bytes a thread), for
/// `params[0]` vectors. Bindings: params, src (read), dst (read_write).
pub static COPY_KERNEL: Kernel = Kernel::new(
    "ops-gpu/profile/copy_vec4",
    r#"// A plain copy kernel: the device's bandwidth yardstick.
const WORKGROUP_SIZE: u32 = 256u;

@group(0) @binding(0) var<storage, read> params: array<u32>;
@group(0) @binding(1) var<storage, read> src: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read_write> dst: array<vec4<u32>>;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = (wg.x + wg.y * nwg.x) * WORKGROUP_SIZE + lid;
    if (i < params[0]) {
        dst[i] = src[i];
    }
}
"#,
    "main",
    &[Access::Read, Access::Read, Access::ReadWrite],
    COPY_WORKGROUP_SIZE,
);

/// A plain copy one `u32` word a thread, `params[0]` words: the granularity
/// the generated kernels load and store at, for comparison with
/// [`COPY_KERNEL`]. Bindings as [`COPY_KERNEL`]'s.
pub static COPY_WORDS_KERNEL: Kernel = Kernel::new(
    "ops-gpu/profile/copy_u32",
    r#"// A plain copy kernel, one u32 word a thread.
const WORKGROUP_SIZE: u32 = 256u;

@group(0) @binding(0) var<storage, read> params: array<u32>;
@group(0) @binding(1) var<storage, read> src: array<u32>;
@group(0) @binding(2) var<storage, read_write> dst: array<u32>;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = (wg.x + wg.y * nwg.x) * WORKGROUP_SIZE + lid;
    if (i < params[0]) {
        dst[i] = src[i];
    }
}
"#,
    "main",
    &[Access::Read, Access::Read, Access::ReadWrite],
    COPY_WORKGROUP_SIZE,
);

/// The plan of [`COPY_KERNEL`] copying `bytes` (a non-zero multiple of 16)
/// from input 0 to output 0, with the tensors it copies between: a UINT32
/// input and output description of `bytes / 4` elements. The output is
/// [`OutputInit::Overwritten`]: a run times the kernel alone.
pub fn copy_plan(bytes: u64) -> Result<(GpuPlan, TensorDesc), OpError> {
    copy_plan_of(&COPY_KERNEL, 16, bytes)
}

/// [`copy_plan`] with [`COPY_WORDS_KERNEL`], one word a thread.
pub fn copy_words_plan(bytes: u64) -> Result<(GpuPlan, TensorDesc), OpError> {
    copy_plan_of(&COPY_WORDS_KERNEL, 4, bytes)
}

fn copy_plan_of(
    kernel: &'static Kernel,
    unit: u64,
    bytes: u64,
) -> Result<(GpuPlan, TensorDesc), OpError> {
    if bytes == 0 || !bytes.is_multiple_of(16) {
        return Err(OpError::InvalidArgument(format!(
            "the copy kernels copy whole 16-byte vectors, not {bytes} bytes"
        )));
    }
    let units = u32::try_from(bytes / unit).map_err(|_| OpError::TooLarge {
        what: format!("a copy of {bytes} bytes"),
        limit: "u32 addressing of the copy kernels".into(),
    })?;
    let words = u32::try_from(bytes / 4).map_err(|_| OpError::TooLarge {
        what: format!("a copy of {bytes} bytes"),
        limit: "u32 sizes".into(),
    })?;
    let plan = GpuPlan {
        // The kernel writes every word: nothing but the copy is timed.
        outputs: vec![OutputInit::Overwritten],
        scratch_bytes: Vec::new(),
        passes: vec![Pass {
            kernel,
            buffers: vec![BufferRef::Params, BufferRef::Input(0), BufferRef::Output(0)],
            params: vec![units],
            workgroups: u64::from(units).div_ceil(u64::from(COPY_WORKGROUP_SIZE)),
        }],
        index_checks: Vec::new(),
    };
    Ok((plan, TensorDesc::new(DataType::Uint32, [words])))
}

/// A hand-written dispatch of a one-pass plan on a [`Context`]'s device
/// with everything created up front: the pipeline, the bind group, the
/// input, output, parameter, status and read-back buffers.
///
/// [`call`](MinimalDispatch::call) does only what any caller of a GPU must
/// for fresh inputs: write the input, dispatch, copy the output to the
/// read-back buffer, wait and read it. It is the floor
/// [`Context::run`]'s per-call overhead is measured against; its pipeline is
/// its own, so it leaves [`Context::cache_stats`] alone.
pub struct MinimalDispatch {
    device: wgpu::Device,
    queue: wgpu::Queue,
    pipeline: wgpu::ComputePipeline,
    bind_group: wgpu::BindGroup,
    input: wgpu::Buffer,
    output: wgpu::Buffer,
    staging: wgpu::Buffer,
    output_len: usize,
    grid: (u32, u32),
    _params: wgpu::Buffer,
    _status: wgpu::Buffer,
}

impl std::fmt::Debug for MinimalDispatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MinimalDispatch")
            .field("output_len", &self.output_len)
            .field("grid", &self.grid)
            .finish_non_exhaustive()
    }
}

impl MinimalDispatch {
    /// Prepares `plan`, which must have exactly one pass binding only
    /// `Params`, `Input(0)`, `Output(0)` and `Status`, for inputs of
    /// `input_bytes` bytes and an output described by `output`.
    pub fn new(
        ctx: &Context,
        plan: &GpuPlan,
        input_bytes: u64,
        output: &TensorDesc,
    ) -> Result<MinimalDispatch, OpError> {
        use wgpu::BufferUsages as U;
        let [pass] = plan.passes.as_slice() else {
            return Err(OpError::InvalidArgument(format!(
                "a minimal dispatch runs one pass, the plan has {}",
                plan.passes.len()
            )));
        };
        let device = ctx.device.clone();
        let output_len = output.byte_size().unwrap_or(0) as usize;
        let scopes = Scopes::push(&device);
        let pipeline = compile(&device, &ctx.limits, pass.kernel, Variant::Plain)?;
        let make = |label: &str, size: u64, usage: wgpu::BufferUsages| {
            device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size: padded(size).unwrap_or(u64::MAX),
                usage,
                mapped_at_creation: false,
            })
        };
        let words = param_words(pass, 0)?;
        let params = make("params", words.len() as u64 * 4, PARAMS_USAGE | U::COPY_DST);
        ctx.queue
            .write_buffer(&params, 0, bytemuck::cast_slice(&words));
        let status = make("status", 4, U::STORAGE | U::COPY_DST);
        ctx.queue
            .write_buffer(&status, 0, bytemuck::bytes_of(&u32::MAX));
        let input = make("input", input_bytes, U::STORAGE | U::COPY_DST);
        let out = make("output", output_len as u64, U::STORAGE | U::COPY_SRC);
        let staging = make("read-back", output_len as u64, U::MAP_READ | U::COPY_DST);
        let mut entries = Vec::new();
        for (b, r) in pass.buffers.iter().enumerate() {
            let buffer = match *r {
                BufferRef::Params => &params,
                BufferRef::Status => &status,
                BufferRef::Input(0) => &input,
                BufferRef::Output(0) => &out,
                other => {
                    return Err(OpError::InvalidArgument(format!(
                        "a minimal dispatch cannot bind {other:?}"
                    )))
                }
            };
            entries.push(wgpu::BindGroupEntry {
                binding: b as u32,
                resource: buffer.as_entire_binding(),
            });
        }
        let bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("minimal dispatch"),
            layout: &pipeline.layout,
            entries: &entries,
        });
        let grid = split_workgroups(
            pass.workgroups,
            ctx.limits.max_compute_workgroups_per_dimension,
        )
        .ok_or_else(|| OpError::TooLarge {
            what: format!("{} workgroups", pass.workgroups),
            limit: "max_compute_workgroups_per_dimension".into(),
        })?;
        if let Some(e) = scopes.pop() {
            return Err(OpError::Device(format!(
                "preparing a minimal dispatch failed: {}",
                error_text(&e)
            )));
        }
        Ok(MinimalDispatch {
            device,
            queue: ctx.queue.clone(),
            pipeline: pipeline.pipeline,
            bind_group,
            input,
            output: out,
            staging,
            output_len,
            grid,
            _params: params,
            _status: status,
        })
    }

    /// One call: writes `input` (the input tensor's bytes), dispatches, and
    /// returns the output tensor's bytes.
    pub fn call(&self, input: &[u8]) -> Result<Vec<u8>, OpError> {
        if input.len() as u64 > self.input.size() {
            return Err(OpError::InvalidArgument(format!(
                "{} input bytes do not fit the prepared {}",
                input.len(),
                self.input.size()
            )));
        }
        if input.len().is_multiple_of(4) {
            self.queue.write_buffer(&self.input, 0, input);
        } else {
            let mut padded_input = input.to_vec();
            padded_input.resize(input.len().next_multiple_of(4), 0);
            self.queue.write_buffer(&self.input, 0, &padded_input);
        }
        let mut encoder = self
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor::default());
        {
            let mut cpass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor::default());
            cpass.set_pipeline(&self.pipeline);
            cpass.set_bind_group(0, &self.bind_group, &[]);
            cpass.dispatch_workgroups(self.grid.0, self.grid.1, 1);
        }
        encoder.copy_buffer_to_buffer(&self.output, 0, &self.staging, 0, self.staging.size());
        let index = self.queue.submit([encoder.finish()]);
        let pending = map_all(index, vec![self.staging.clone()]);
        wait(&self.device, &|| Ok(()), &pending)?;
        pending.read(0, self.output_len)
    }
}
