//! Profiling: plans timed with their buffers resident on the device, a plain
//! copy kernel as the bandwidth yardstick, and a minimal hand-written
//! dispatch to compare [`Context::run`]'s per-call overhead with.
//!
//! [`Context::execute`] uploads its inputs and reads its outputs back on
//! every call, which on a discrete GPU costs more than the kernels. A
//! [`Profiler`] instead uploads once ([`Profiler::prepare`]) and then times
//! only what a call does on the device ([`Prepared::run`]): starting the
//! outputs, scratch and status buffers as the plan says, and the passes.
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

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ops_core::{
    split_workgroups, Access, BufferRef, DataType, GpuPlan, HostTensor, Kernel, OpError,
    OutputInit, Pass, TensorDesc,
};

use crate::cache::{layout_entries, param_words, PARAMS_USAGE};
use crate::context::{error_text, Scopes};
use crate::{AdapterSummary, Context};

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

/// A compiled kernel of the profiler's device.
struct Pipeline {
    layout: wgpu::BindGroupLayout,
    pipeline: wgpu::ComputePipeline,
}

/// A device on the [`Context`]'s adapter, opened with timestamp queries when
/// the adapter offers them, that times plans with resident buffers.
pub struct Profiler {
    device: wgpu::Device,
    queue: wgpu::Queue,
    limits: wgpu::Limits,
    source: TimeSource,
    summary: AdapterSummary,
    pipelines: Mutex<HashMap<&'static str, Arc<Pipeline>>>,
    // Kept alive for the life of the device.
    _adapter: wgpu::Adapter,
    _instance: wgpu::Instance,
}

impl std::fmt::Debug for Profiler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Profiler")
            .field("adapter", &self.summary)
            .field("source", &self.source)
            .finish_non_exhaustive()
    }
}

fn device_error(what: &str, e: impl std::fmt::Display) -> OpError {
    OpError::Device(format!("{what}: {e}"))
}

impl Profiler {
    /// Opens a profiling device on the adapter `ctx` runs on (same name and
    /// backend), requesting `TIMESTAMP_QUERY` (and
    /// `TIMESTAMP_QUERY_INSIDE_ENCODERS`) only when the adapter offers it.
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
        let limits = adapter.limits();
        let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            label: Some("ops-gpu profiler"),
            required_features: features,
            required_limits: limits.clone(),
            ..Default::default()
        }))
        .map_err(|e| device_error("opening the profiling device failed", e))?;
        device.on_uncaptured_error(Arc::new(|e: wgpu::Error| {
            eprintln!("ops-gpu profiler: uncaptured wgpu error: {e}");
        }));
        let limits = device.limits();
        Ok(Profiler {
            device,
            queue,
            limits,
            source,
            summary: want,
            pipelines: Mutex::new(HashMap::new()),
            _adapter: adapter,
            _instance: instance,
        })
    }

    /// Where this profiler's durations come from.
    pub fn time_source(&self) -> TimeSource {
        self.source
    }

    /// The adapter it runs on.
    pub fn adapter(&self) -> &AdapterSummary {
        &self.summary
    }

    fn pipeline(&self, kernel: &'static Kernel) -> Result<Arc<Pipeline>, OpError> {
        let mut pipelines = self.pipelines.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(p) = pipelines.get(kernel.key) {
            return Ok(Arc::clone(p));
        }
        let p = Arc::new(compile(&self.device, kernel)?);
        pipelines.insert(kernel.key, Arc::clone(&p));
        Ok(p)
    }

    /// Uploads `inputs` and creates everything `plan` binds, so that
    /// [`Prepared::run`] only records and submits the work of one call.
    ///
    /// `outputs` describes the plan's outputs (as for [`Context::execute`]).
    pub fn prepare(
        &self,
        plan: &GpuPlan,
        inputs: &[&HostTensor],
        outputs: &[TensorDesc],
    ) -> Result<Prepared<'_>, OpError> {
        use wgpu::BufferUsages as U;
        if outputs.len() != plan.outputs.len() {
            return Err(OpError::InvalidArgument(format!(
                "the plan initialises {} outputs but {} output descriptions were given",
                plan.outputs.len(),
                outputs.len()
            )));
        }
        // The profiler binds every buffer whole: no segmented variants.
        let max = self.limits.max_storage_buffer_binding_size;
        let sizes = inputs
            .iter()
            .map(|t| t.bytes().len() as u64)
            .chain(outputs.iter().map(|d| d.byte_size().unwrap_or(u64::MAX)))
            .chain(plan.scratch_bytes.iter().copied());
        for size in sizes {
            if size > max {
                return Err(OpError::TooLarge {
                    what: format!("a profiled buffer of {size} bytes"),
                    limit: format!(
                        "max_storage_buffer_binding_size ({max} bytes): the profiler binds buffers whole"
                    ),
                });
            }
        }
        let scopes = Scopes::push(&self.device);
        let storage = U::STORAGE | U::COPY_SRC | U::COPY_DST;
        let input_bufs: Vec<wgpu::Buffer> = inputs
            .iter()
            .enumerate()
            .map(|(i, t)| self.filled(&format!("input {i}"), t.bytes(), storage))
            .collect();
        let mut output_sizes = Vec::with_capacity(outputs.len());
        for (i, d) in outputs.iter().enumerate() {
            let bytes = d.byte_size().ok_or_else(|| OpError::TooLarge {
                what: format!("output {i}"),
                limit: "byte size overflows u64".into(),
            })?;
            output_sizes.push(padded(bytes));
        }
        let output_bufs: Vec<wgpu::Buffer> = output_sizes
            .iter()
            .enumerate()
            .map(|(i, &s)| self.empty(&format!("output {i}"), s, storage))
            .collect();
        let scratch_bufs: Vec<wgpu::Buffer> = plan
            .scratch_bytes
            .iter()
            .enumerate()
            .map(|(i, &b)| self.empty(&format!("scratch {i}"), padded(b), storage))
            .collect();
        let status_words = vec![u32::MAX; plan.index_checks.len().max(1)];
        let status_init = self.filled(
            "status init",
            bytemuck::cast_slice(&status_words),
            U::COPY_SRC,
        );
        let status = self.empty(
            "status",
            status_words.len() as u64 * 4,
            U::STORAGE | U::COPY_SRC | U::COPY_DST,
        );
        let mut passes = Vec::with_capacity(plan.passes.len());
        for (p, pass) in plan.passes.iter().enumerate() {
            passes.push(self.prepare_pass(
                p,
                pass,
                &input_bufs,
                &output_bufs,
                &scratch_bufs,
                &status,
            )?);
        }
        for (o, init) in plan.outputs.iter().enumerate() {
            if let OutputInit::CopyOfInput(i) = *init {
                let have = input_bufs.get(i).map(|b| b.size());
                if have != Some(output_sizes[o]) {
                    return Err(OpError::InvalidArgument(format!(
                        "output {o} starts as a copy of input {i}, whose byte size differs"
                    )));
                }
            }
        }
        let queries = match self.source {
            TimeSource::WallClock => None,
            _ => Some(Queries::new(&self.device)),
        };
        if let Some(e) = scopes.pop() {
            return Err(OpError::Device(format!(
                "preparing a plan for profiling failed: {}",
                error_text(&e)
            )));
        }
        Ok(Prepared {
            profiler: self,
            inputs: input_bufs,
            outputs: output_bufs,
            output_descs: outputs.to_vec(),
            output_init: plan.outputs.clone(),
            scratch: scratch_bufs,
            status,
            status_init,
            passes,
            queries,
        })
    }

    fn prepare_pass(
        &self,
        p: usize,
        pass: &Pass,
        inputs: &[wgpu::Buffer],
        outputs: &[wgpu::Buffer],
        scratch: &[wgpu::Buffer],
        status: &wgpu::Buffer,
    ) -> Result<PreparedPass, OpError> {
        let key = pass.kernel.key;
        if pass.buffers.len() != pass.kernel.bindings.len() {
            return Err(OpError::InvalidArgument(format!(
                "pass {p} (`{key}`) binds {} buffers, but its kernel declares {}",
                pass.buffers.len(),
                pass.kernel.bindings.len()
            )));
        }
        let pipeline = self.pipeline(pass.kernel)?;
        let words = param_words(pass, p)?;
        let params = self.filled(
            &format!("params of pass {p}"),
            bytemuck::cast_slice(&words),
            PARAMS_USAGE,
        );
        let missing = |what: &str, i: usize| {
            OpError::InvalidArgument(format!("pass {p} (`{key}`) binds missing {what} {i}"))
        };
        let mut entries = Vec::with_capacity(pass.buffers.len());
        for (b, r) in pass.buffers.iter().enumerate() {
            let buffer = match *r {
                BufferRef::Params => &params,
                BufferRef::Status => status,
                BufferRef::Input(i) => inputs.get(i).ok_or_else(|| missing("input", i))?,
                BufferRef::Output(i) => outputs.get(i).ok_or_else(|| missing("output", i))?,
                BufferRef::Scratch(i) => scratch.get(i).ok_or_else(|| missing("scratch", i))?,
            };
            entries.push(wgpu::BindGroupEntry {
                binding: b as u32,
                resource: buffer.as_entire_binding(),
            });
        }
        let bind_group = self.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some(key),
            layout: &pipeline.layout,
            entries: &entries,
        });
        let grid = split_workgroups(
            pass.workgroups,
            self.limits.max_compute_workgroups_per_dimension,
        )
        .ok_or_else(|| OpError::TooLarge {
            what: format!("{} workgroups of pass {p} (`{key}`)", pass.workgroups),
            limit: "max_compute_workgroups_per_dimension".into(),
        })?;
        Ok(PreparedPass {
            pipeline,
            bind_group,
            grid,
            _params: params,
        })
    }

    fn filled(&self, label: &str, bytes: &[u8], usage: wgpu::BufferUsages) -> wgpu::Buffer {
        let size = padded(bytes.len() as u64);
        let buffer = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            size,
            usage,
            mapped_at_creation: true,
        });
        if !bytes.is_empty() {
            if let Ok(mut view) = buffer.get_mapped_range_mut(..) {
                view.slice(..bytes.len()).copy_from_slice(bytes);
            }
        }
        buffer.unmap();
        buffer
    }

    fn empty(&self, label: &str, size: u64, usage: wgpu::BufferUsages) -> wgpu::Buffer {
        self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            size,
            usage,
            mapped_at_creation: false,
        })
    }
}

/// The runtime's padding of a buffer of `bytes` ([`crate::exec::padded`]);
/// sizes past `u64` (which no buffer the profiler creates reaches) saturate,
/// and wgpu refuses the buffer.
fn padded(bytes: u64) -> u64 {
    crate::exec::padded(bytes).unwrap_or(u64::MAX)
}

fn compile(device: &wgpu::Device, kernel: &'static Kernel) -> Result<Pipeline, OpError> {
    let key = kernel.key;
    let entries = layout_entries(kernel.bindings);
    let scopes = Scopes::push(device);
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some(key),
        source: wgpu::ShaderSource::Wgsl(Cow::Borrowed(kernel.wgsl())),
    });
    let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: Some(key),
        entries: &entries,
    });
    let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
        label: Some(key),
        bind_group_layouts: &[Some(&layout)],
        immediate_size: 0,
    });
    let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some(key),
        layout: Some(&pipeline_layout),
        module: &module,
        entry_point: Some(kernel.entry),
        compilation_options: Default::default(),
        cache: None,
    });
    if let Some(e) = scopes.pop() {
        return Err(OpError::Device(format!(
            "compiling kernel `{key}` failed: {}",
            error_text(&e)
        )));
    }
    Ok(Pipeline { layout, pipeline })
}

struct PreparedPass {
    pipeline: Arc<Pipeline>,
    bind_group: wgpu::BindGroup,
    grid: (u32, u32),
    _params: wgpu::Buffer,
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
    inputs: Vec<wgpu::Buffer>,
    outputs: Vec<wgpu::Buffer>,
    output_descs: Vec<TensorDesc>,
    output_init: Vec<OutputInit>,
    scratch: Vec<wgpu::Buffer>,
    status: wgpu::Buffer,
    status_init: wgpu::Buffer,
    passes: Vec<PreparedPass>,
    queries: Option<Queries>,
}

impl std::fmt::Debug for Prepared<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Prepared")
            .field("passes", &self.passes.len())
            .field("outputs", &self.output_descs)
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
        let scopes = Scopes::push(&p.device);
        let mut encoder = p
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("ops-gpu profiled run"),
            });
        let inside = p.source == TimeSource::GpuTimestamps;
        if let (Some(q), true) = (&self.queries, inside) {
            encoder.write_timestamp(&q.set, 0);
        }
        for (o, init) in self.output_init.iter().enumerate() {
            match *init {
                OutputInit::Zero => encoder.clear_buffer(&self.outputs[o], 0, None),
                OutputInit::Overwritten => {}
                OutputInit::CopyOfInput(i) => encoder.copy_buffer_to_buffer(
                    &self.inputs[i],
                    0,
                    &self.outputs[o],
                    0,
                    self.outputs[o].size(),
                ),
            }
        }
        for s in &self.scratch {
            encoder.clear_buffer(s, 0, None);
        }
        encoder.copy_buffer_to_buffer(&self.status_init, 0, &self.status, 0, self.status.size());
        let last = self.passes.len().saturating_sub(1);
        for (i, pass) in self.passes.iter().enumerate() {
            let timestamp_writes = match (&self.queries, inside) {
                (Some(q), false) if i == 0 || i == last => Some(wgpu::ComputePassTimestampWrites {
                    query_set: &q.set,
                    beginning_of_pass_write_index: (i == 0).then_some(0),
                    end_of_pass_write_index: (i == last).then_some(1),
                }),
                _ => None,
            };
            let mut cpass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("ops-gpu profiled pass"),
                timestamp_writes,
            });
            if pass.grid.0 > 0 && pass.grid.1 > 0 {
                cpass.set_pipeline(&pass.pipeline.pipeline);
                cpass.set_bind_group(0, &pass.bind_group, &[]);
                cpass.dispatch_workgroups(pass.grid.0, pass.grid.1, 1);
            }
        }
        if let Some(q) = &self.queries {
            if inside {
                encoder.write_timestamp(&q.set, 1);
            }
            let have_stamps = inside || !self.passes.is_empty();
            if have_stamps {
                encoder.resolve_query_set(&q.set, 0..2, &q.resolve, 0);
                encoder.copy_buffer_to_buffer(&q.resolve, 0, &q.read, 0, q.read.size());
            }
        }
        let commands = encoder.finish();
        let start = Instant::now();
        let index = p.queue.submit([commands]);
        wait_for(&p.device, &index)?;
        let wall = start.elapsed();
        if let Some(e) = scopes.pop() {
            return Err(OpError::Device(format!(
                "a profiled run failed: {}",
                error_text(&e)
            )));
        }
        let gpu = match &self.queries {
            Some(q) if inside || !self.passes.is_empty() => {
                let bytes = map_read(&p.device, &q.read, 16)?;
                let t0 = u64::from_le_bytes(bytes[0..8].try_into().unwrap_or_default());
                let t1 = u64::from_le_bytes(bytes[8..16].try_into().unwrap_or_default());
                let period = f64::from(p.queue.get_timestamp_period());
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
        let p = self.profiler;
        let status = read_buffer(p, &self.status)?;
        if let Some((check, w)) = status
            .chunks_exact(4)
            .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
            .enumerate()
            .find(|&(_, w)| w != u32::MAX)
        {
            return Err(OpError::Device(format!(
                "index check {check} failed at element {w}"
            )));
        }
        self.outputs
            .iter()
            .zip(&self.output_descs)
            .map(|(buf, desc)| {
                let mut bytes = read_buffer(p, buf)?;
                bytes.truncate(desc.byte_size().unwrap_or(0) as usize);
                HostTensor::from_bytes(desc.clone(), bytes)
            })
            .collect()
    }
}

/// Copies `buffer` to a mappable one and reads it.
fn read_buffer(p: &Profiler, buffer: &wgpu::Buffer) -> Result<Vec<u8>, OpError> {
    let staging = p.empty(
        "profiler read-back",
        buffer.size(),
        wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
    );
    let mut encoder = p
        .device
        .create_command_encoder(&wgpu::CommandEncoderDescriptor::default());
    encoder.copy_buffer_to_buffer(buffer, 0, &staging, 0, buffer.size());
    let index = p.queue.submit([encoder.finish()]);
    wait_for(&p.device, &index)?;
    map_read(&p.device, &staging, buffer.size() as usize)
}

/// Blocks until submission `index` is done.
fn wait_for(device: &wgpu::Device, index: &wgpu::SubmissionIndex) -> Result<(), OpError> {
    device
        .poll(wgpu::PollType::Wait {
            submission_index: Some(index.clone()),
            timeout: None,
        })
        .map(|_| ())
        .map_err(|e| device_error("waiting for the device failed", e))
}

/// Maps `buffer` (whose copies were already submitted), reads `len` bytes
/// and unmaps it. Another thread polling the same device may deliver the
/// callback, so the wait re-polls until it arrives.
fn map_read(device: &wgpu::Device, buffer: &wgpu::Buffer, len: usize) -> Result<Vec<u8>, OpError> {
    let (tx, rx) = mpsc::channel();
    buffer.map_async(wgpu::MapMode::Read, .., move |r| {
        let _ = tx.send(r);
    });
    let deadline = Instant::now() + Duration::from_secs(600);
    let mapped = loop {
        device
            .poll(wgpu::PollType::Poll)
            .map_err(|e| device_error("polling the device failed", e))?;
        match rx.recv_timeout(Duration::from_micros(50)) {
            Ok(r) => break r,
            Err(mpsc::RecvTimeoutError::Timeout) if Instant::now() < deadline => continue,
            Err(_) => {
                return Err(OpError::Device(
                    "a read-back buffer was never mapped".into(),
                ))
            }
        }
    };
    mapped.map_err(|e| device_error("mapping a read-back buffer failed", e))?;
    let bytes = {
        let view = buffer
            .get_mapped_range(..)
            .map_err(|e| device_error("reading a mapped buffer failed", e))?;
        view.get(..len)
            .ok_or_else(|| OpError::Device(format!("read-back holds fewer than {len} bytes")))?
            .to_vec()
    };
    buffer.unmap();
    Ok(bytes)
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
        let pipeline = compile(&device, pass.kernel)?;
        let make = |label: &str, size: u64, usage: wgpu::BufferUsages| {
            device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size: padded(size),
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
        wait_for(&self.device, &index)?;
        map_read(&self.device, &self.staging, self.output_len)
    }
}
