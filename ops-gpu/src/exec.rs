//! The executor: a plan bound to buffers on a context's device, recorded
//! into a command encoder, and read back.
//!
//! [`Bound`] is the one place a [`GpuPlan`] meets wgpu. [`Context::execute`]
//! binds a plan, records it once and reads it back in the same submission;
//! the [`Profiler`](crate::Profiler) binds a plan once and records it many
//! times (resetting its buffers each time) between timestamp queries, then
//! reads it back the same way.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::mpsc;
use std::sync::Arc;

use ops_core::{
    split_workgroups, Access, BufferRef, GpuPlan, HostTensor, OpError, OutputInit, TensorDesc,
};

use crate::cache::{param_word_count, param_words, Compiled, Variant, PARAMS_USAGE};
use crate::context::{device_error, Scopes};
use crate::pool::{Buf, Storage};
use crate::segment::{self, Segmented};
use crate::{Context, DeviceTensor, ExecError};

/// An input of a call: host data to upload, or a tensor on the device.
#[derive(Clone, Copy)]
pub(crate) enum Input<'t> {
    Host(&'t HostTensor),
    Device(&'t DeviceTensor),
}

impl Input<'_> {
    pub(crate) fn desc(&self) -> &TensorDesc {
        match self {
            Input::Host(t) => t.desc(),
            Input::Device(t) => t.desc(),
        }
    }

    /// The bytes its buffer holds (the description's, for a device tensor).
    fn byte_len(&self) -> u64 {
        match self {
            Input::Host(t) => t.bytes().len() as u64,
            Input::Device(t) => t.desc().byte_size().unwrap_or(u64::MAX),
        }
    }
}

/// Where a bound plan's buffers come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Fresh buffers (zero-filled by wgpu), inputs uploaded at creation;
    /// `reusable` keeps what a reset needs to record the plan again.
    Fresh { reusable: bool },
    /// Buffers from the context's pool (dirty: recording clears what the
    /// plan expects zeroed), written through the queue.
    Pooled,
}

/// `bytes` rounded up to whole 16-byte vectors, at least one: every buffer
/// can be bound as `array<vec4<u32>>` with its last elements readable (a
/// vector kernel reads a tensor whose byte size is not a multiple of 16,
/// such as rows of 255 FLOAT32 elements, up to its last vector).
pub(crate) fn padded(bytes: u64) -> Option<u64> {
    Some(bytes.checked_next_multiple_of(16)?.max(16))
}

fn invalid(msg: String) -> ExecError {
    ExecError::Op(OpError::InvalidArgument(msg))
}

/// Padded byte sizes of everything a plan binds, checked against
/// `max_buffer_size`.
struct Sizes {
    inputs: Vec<u64>,
    outputs: Vec<u64>,
    scratch: Vec<u64>,
    status: u64,
    /// The parameter buffer of each pass.
    params: Vec<u64>,
}

impl Sizes {
    /// The byte size of what `r` refers to in pass `p` (references were
    /// checked by `check_plan`).
    fn of(&self, r: BufferRef, p: usize) -> u64 {
        let at = |v: &[u64], i: usize| v.get(i).copied().unwrap_or(0);
        match r {
            BufferRef::Params => at(&self.params, p),
            BufferRef::Status => self.status,
            BufferRef::Input(i) => at(&self.inputs, i),
            BufferRef::Output(i) => at(&self.outputs, i),
            BufferRef::Scratch(i) => at(&self.scratch, i),
        }
    }
}

/// Which inputs some pass binds (and so must be uploaded).
struct Used {
    inputs: Vec<bool>,
}

/// Checks the plan's structure against the call's tensors.
fn check_plan(
    ctx: &Context,
    plan: &GpuPlan,
    inputs: &[Input<'_>],
    outputs: &[TensorDesc],
) -> Result<(Used, Vec<(u32, u32)>), ExecError> {
    if outputs.len() != plan.outputs.len() {
        return Err(invalid(format!(
            "the plan initialises {} outputs but {} output descriptions were given",
            plan.outputs.len(),
            outputs.len()
        )));
    }
    let mut used = Used {
        inputs: vec![false; inputs.len()],
    };
    let mut outputs_bound = vec![false; outputs.len()];
    let mut scratch_bound = vec![false; plan.scratch_bytes.len()];
    for (o, init) in plan.outputs.iter().enumerate() {
        if let OutputInit::CopyOfInput(i) = *init {
            let Some(input) = inputs.get(i) else {
                return Err(invalid(format!(
                    "output {o} starts as a copy of input {i}, but only {} inputs were given",
                    inputs.len()
                )));
            };
            let have = input.byte_len();
            if outputs[o].byte_size() != Some(have) {
                return Err(invalid(format!(
                    "output {o} ({} {:?}) starts as a copy of input {i} ({} {:?}), but their byte sizes differ",
                    outputs[o].dtype,
                    outputs[o].sizes,
                    input.desc().dtype,
                    input.desc().sizes
                )));
            }
        }
    }
    let max_dim = ctx.limits.max_compute_workgroups_per_dimension;
    let mut grids = Vec::with_capacity(plan.passes.len());
    for (p, pass) in plan.passes.iter().enumerate() {
        let key = pass.kernel.key;
        if pass.buffers.len() != pass.kernel.bindings.len() {
            return Err(invalid(format!(
                "pass {p} (`{key}`) binds {} buffers, but its kernel declares {} bindings",
                pass.buffers.len(),
                pass.kernel.bindings.len()
            )));
        }
        for (b, r) in pass.buffers.iter().enumerate() {
            let (flags, i, what) = match *r {
                BufferRef::Input(i) => (&mut used.inputs, i, "input"),
                BufferRef::Output(i) => (&mut outputs_bound, i, "output"),
                BufferRef::Scratch(i) => (&mut scratch_bound, i, "scratch buffer"),
                BufferRef::Params | BufferRef::Status => continue,
            };
            match flags.get_mut(i) {
                Some(f) => *f = true,
                None => {
                    return Err(invalid(format!(
                    "pass {p} (`{key}`) binding {b} refers to {what} {i}, but there are only {}",
                    flags.len()
                )))
                }
            }
        }
        let grid = split_workgroups(pass.workgroups, max_dim).ok_or_else(|| OpError::TooLarge {
            what: format!("{} workgroups of pass {p} (`{key}`)", pass.workgroups),
            limit: format!("max_compute_workgroups_per_dimension ({max_dim}) in each of x and y"),
        })?;
        grids.push(grid);
    }
    Ok((used, grids))
}

impl Context {
    /// Pads `bytes` and checks it against `max_buffer_size`.
    pub(crate) fn buffer_size(
        &self,
        what: &dyn Fn() -> String,
        bytes: Option<u64>,
    ) -> Result<u64, OpError> {
        let max_buffer = self.limits.max_buffer_size;
        let size = bytes.and_then(padded).ok_or_else(|| OpError::TooLarge {
            what: what(),
            limit: "byte size overflows u64".into(),
        })?;
        if size > max_buffer {
            return Err(OpError::TooLarge {
                what: format!("{} ({size} bytes)", what()),
                limit: format!("max_buffer_size ({max_buffer} bytes)"),
            });
        }
        Ok(size)
    }

    fn sizes(
        &self,
        plan: &GpuPlan,
        inputs: &[Input<'_>],
        outputs: &[TensorDesc],
    ) -> Result<Sizes, OpError> {
        let inputs = inputs
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let d = t.desc();
                self.buffer_size(
                    &|| format!("input {i} ({} {:?})", d.dtype, d.sizes),
                    Some(t.byte_len()),
                )
            })
            .collect::<Result<_, _>>()?;
        let outputs = outputs
            .iter()
            .enumerate()
            .map(|(i, d)| {
                let size = self.buffer_size(
                    &|| format!("output {i} ({} {:?})", d.dtype, d.sizes),
                    d.byte_size(),
                )?;
                usize::try_from(size).map_err(|_| OpError::TooLarge {
                    what: format!("output {i} ({} {:?})", d.dtype, d.sizes),
                    limit: "host address space".into(),
                })?;
                Ok(size)
            })
            .collect::<Result<_, OpError>>()?;
        let scratch = plan
            .scratch_bytes
            .iter()
            .enumerate()
            .map(|(i, &b)| self.buffer_size(&|| format!("scratch buffer {i}"), Some(b)))
            .collect::<Result<_, _>>()?;
        let status_words = plan.index_checks.len().max(1) as u64;
        let status = self.buffer_size(&|| "status buffer".into(), status_words.checked_mul(4))?;
        let params = plan
            .passes
            .iter()
            .enumerate()
            .map(|(p, pass)| {
                let words = param_word_count(pass, p)? as u64;
                self.buffer_size(
                    &|| format!("parameters of pass {p} (`{}`)", pass.kernel.key),
                    words.checked_mul(4),
                )
            })
            .collect::<Result<_, _>>()?;
        Ok(Sizes {
            inputs,
            outputs,
            scratch,
            status,
            params,
        })
    }

    /// For each pass, the segmented variant it runs with, `None` for the
    /// kernel itself: the variant runs when some buffer the pass binds is
    /// larger than one binding may be.
    ///
    /// Fails with [`OpError::TooLarge`], naming the buffer and
    /// `max_storage_buffer_binding_size`, when the kernel has no variant or
    /// the buffer exceeds its segments.
    fn layouts(
        &self,
        plan: &GpuPlan,
        inputs: &[Input<'_>],
        outputs: &[TensorDesc],
        sizes: &Sizes,
    ) -> Result<Vec<Option<Segmented>>, OpError> {
        let max = self.max_binding;
        let limit = format!("max_storage_buffer_binding_size ({max} bytes)");
        let mut layouts = Vec::with_capacity(plan.passes.len());
        for (p, pass) in plan.passes.iter().enumerate() {
            let key = pass.kernel.key;
            let describe = |r: BufferRef| {
                let what = describe(r, p, key, inputs, outputs);
                format!("{what} ({} bytes)", sizes.of(r, p))
            };
            let Some(&large) = pass.buffers.iter().find(|&&r| sizes.of(r, p) > max) else {
                layouts.push(None);
                continue;
            };
            let variant = segment::variant(pass.kernel)?.ok_or_else(|| OpError::TooLarge {
                what: describe(large),
                limit: format!("{limit}: kernel `{key}` has no segmented variant"),
            })?;
            for (&r, &n) in pass.buffers.iter().zip(variant.counts) {
                let room = if n > 1 {
                    self.segment.saturating_mul(u64::from(n))
                } else {
                    max
                };
                if sizes.of(r, p) > room {
                    let limit = if n > 1 {
                        format!(
                            "{limit} in {n} segments of {} bytes (kernel `{key}`)",
                            self.segment
                        )
                    } else {
                        limit.clone()
                    };
                    return Err(OpError::TooLarge {
                        what: describe(r),
                        limit,
                    });
                }
            }
            layouts.push(Some(variant));
        }
        Ok(layouts)
    }

    /// A buffer holding `bytes` (zero-padded to `size`).
    pub(crate) fn filled_buffer(
        &self,
        label: &str,
        bytes: &[u8],
        size: u64,
        usage: wgpu::BufferUsages,
    ) -> Result<wgpu::Buffer, OpError> {
        let buffer = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            size,
            usage,
            mapped_at_creation: true,
        });
        if !bytes.is_empty() {
            let mut view = buffer
                .get_mapped_range_mut(..)
                .map_err(|e| OpError::Device(format!("mapping {label} for upload failed: {e}")))?;
            if view.len() < bytes.len() {
                return Err(OpError::Device(format!(
                    "{label}: mapped {} bytes for {} bytes of data",
                    view.len(),
                    bytes.len()
                )));
            }
            view.slice(..bytes.len()).copy_from_slice(bytes);
        }
        buffer.unmap();
        Ok(buffer)
    }

    /// A pooled buffer of at least `size` bytes (a multiple of 16) whose
    /// first `size` bytes will hold `bytes`, zero-padded, once the queue
    /// next submits.
    pub(crate) fn pooled_with(&self, label: &str, bytes: &[u8], size: u64) -> Buf {
        let buf = self
            .pool
            .take(&self.device, size, self.limits.max_buffer_size, label);
        let whole = bytes.len() / 4 * 4;
        if whole > 0 {
            self.queue.write_buffer(&buf.buffer, 0, &bytes[..whole]);
        }
        // The last partial word and the padding, as zero-filled words.
        let mut tail = bytes[whole..].to_vec();
        tail.resize((size - whole as u64) as usize, 0);
        if !tail.is_empty() {
            self.queue.write_buffer(&buf.buffer, whole as u64, &tail);
        }
        buf
    }

    pub(crate) fn empty_buffer(
        &self,
        label: &str,
        size: u64,
        usage: wgpu::BufferUsages,
    ) -> wgpu::Buffer {
        self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            size,
            usage,
            mapped_at_creation: false,
        })
    }
}

/// What `r` refers to in pass `p`, for messages.
fn describe(
    r: BufferRef,
    p: usize,
    key: &str,
    inputs: &[Input<'_>],
    outputs: &[TensorDesc],
) -> String {
    match r {
        BufferRef::Params => format!("parameters of pass {p} (`{key}`)"),
        BufferRef::Status => "status buffer".into(),
        BufferRef::Input(i) => match inputs.get(i) {
            Some(t) => format!("input {i} ({} {:?})", t.desc().dtype, t.desc().sizes),
            None => format!("input {i}"),
        },
        BufferRef::Output(i) => match outputs.get(i) {
            Some(d) => format!("output {i} ({} {:?})", d.dtype, d.sizes),
            None => format!("output {i}"),
        },
        BufferRef::Scratch(i) => format!("scratch buffer {i}"),
    }
}

/// A compiled pass with its bind group.
struct BoundPass {
    pipeline: Arc<Compiled>,
    bind_group: wgpu::BindGroup,
    grid: (u32, u32),
    _params: Buf,
}

/// A plan bound to buffers on a context's device: its inputs uploaded (or
/// given on the device), its outputs, scratch, status and parameter buffers
/// created or taken from the pool, its pipelines compiled (the segmented
/// variant where a buffer exceeds one binding) and its bind groups made.
///
/// [`record`](Bound::record) adds the plan's work to an encoder;
/// [`read_back`](Bound::read_back) submits an encoder with copies of the
/// outputs and status words, waits, and returns the outputs or the failed
/// index check.
pub(crate) struct Bound {
    init: Vec<OutputInit>,
    descs: Vec<TensorDesc>,
    kernels: Vec<&'static str>,
    pub(crate) index_checks: usize,
    sizes: Sizes,
    inputs: Vec<Option<Buf>>,
    pub(crate) outputs: Vec<Buf>,
    scratch: Vec<Buf>,
    pub(crate) status: Buf,
    /// The status words' starting value, copied in by a reset; only a plan
    /// bound to be recorded more than once has one.
    status_init: Option<wgpu::Buffer>,
    /// Pooled buffers: recording clears what the plan expects zeroed.
    dirty: bool,
    passes: Vec<BoundPass>,
    // What segments past the end of a segmented buffer bind.
    _dummies: Option<[wgpu::Buffer; 2]>,
}

impl Bound {
    /// Checks `plan` against the call's tensors and the device's limits
    /// (before allocating anything), then creates and binds everything it
    /// uses. `given` holds, per output, a buffer the caller provides (empty:
    /// none given); the rest comes as `mode` says.
    pub(crate) fn new(
        ctx: &Context,
        plan: &GpuPlan,
        inputs: &[Input<'_>],
        outputs: &[TensorDesc],
        given: &[Option<Buf>],
        mode: Mode,
    ) -> Result<Bound, ExecError> {
        ctx.check_lost()?;
        let (used, grids) = check_plan(ctx, plan, inputs, outputs)?;
        let sizes = ctx.sizes(plan, inputs, outputs)?;
        let layouts = ctx.layouts(plan, inputs, outputs, &sizes)?;
        let pipelines = plan
            .passes
            .iter()
            .zip(&layouts)
            .map(|(p, l)| {
                let variant = match l {
                    Some(_) => Variant::Segmented,
                    None => Variant::Plain,
                };
                ctx.cache.get(&ctx.device, &ctx.limits, p.kernel, variant)
            })
            .collect::<Result<Vec<_>, _>>()?;
        let kernels: Vec<&'static str> = plan.passes.iter().map(|p| p.kernel.key).collect();
        let scopes = Scopes::push(&ctx.device);
        let bound = Bound::create(
            ctx,
            plan,
            Sources {
                inputs,
                outputs,
                given,
                mode,
            },
            used,
            sizes,
            layouts,
            pipelines,
            grids,
            kernels,
        );
        if let Some(e) = scopes.pop() {
            ctx.check_lost()?;
            let kernels: Vec<&str> = plan.passes.iter().map(|p| p.kernel.key).collect();
            return Err(device_error(&format!("preparing kernels {kernels:?}"), &e).into());
        }
        Ok(bound?)
    }

    #[allow(clippy::too_many_arguments)]
    fn create(
        ctx: &Context,
        plan: &GpuPlan,
        src: Sources<'_, '_>,
        used: Used,
        sizes: Sizes,
        layouts: Vec<Option<Segmented>>,
        pipelines: Vec<Arc<Compiled>>,
        grids: Vec<(u32, u32)>,
        kernels: Vec<&'static str>,
    ) -> Result<Bound, OpError> {
        use wgpu::BufferUsages as U;
        let pooled = src.mode == Mode::Pooled;
        let reusable = src.mode == Mode::Fresh { reusable: true };
        // A buffer holding `bytes`, zero-padded to `size`.
        let filled = |label: &str, bytes: &[u8], size: u64, usage: U| -> Result<Buf, OpError> {
            if pooled {
                Ok(ctx.pooled_with(label, bytes, size))
            } else {
                Ok(Storage::unpooled(
                    ctx.filled_buffer(label, bytes, size, usage)?,
                ))
            }
        };
        // A buffer of `size` bytes: zero-filled when fresh, dirty when pooled.
        let blank = |label: &str, size: u64, usage: U| -> Buf {
            if pooled {
                ctx.pool
                    .take(&ctx.device, size, ctx.limits.max_buffer_size, label)
            } else {
                Storage::unpooled(ctx.empty_buffer(label, size, usage))
            }
        };
        let copied: Vec<usize> = plan
            .outputs
            .iter()
            .filter_map(|o| match *o {
                OutputInit::CopyOfInput(i) => Some(i),
                OutputInit::Zero | OutputInit::Overwritten => None,
            })
            .collect();
        let input_bufs: Vec<Option<Buf>> = src
            .inputs
            .iter()
            .enumerate()
            .map(|(i, t)| {
                if !(used.inputs[i] || copied.contains(&i)) {
                    return Ok(None);
                }
                match t {
                    Input::Device(t) => Ok(Some(Arc::clone(t.storage()))),
                    Input::Host(t) => filled(
                        &format!("input {i}"),
                        t.bytes(),
                        sizes.inputs[i],
                        U::STORAGE | U::COPY_SRC,
                    )
                    .map(Some),
                }
            })
            .collect::<Result<_, _>>()?;
        let output_bufs: Vec<Buf> = sizes
            .outputs
            .iter()
            .enumerate()
            .map(|(i, &s)| match src.given.get(i) {
                Some(Some(b)) => Arc::clone(b),
                _ => blank(
                    &format!("output {i}"),
                    s,
                    U::STORAGE | U::COPY_SRC | U::COPY_DST,
                ),
            })
            .collect();
        let scratch_bufs: Vec<Buf> = sizes
            .scratch
            .iter()
            .enumerate()
            .map(|(i, &s)| blank(&format!("scratch {i}"), s, U::STORAGE | U::COPY_DST))
            .collect();
        let status_words = vec![u32::MAX; (sizes.status / 4) as usize];
        let status_bytes: &[u8] = bytemuck::cast_slice(&status_words);
        let status = filled(
            "status",
            status_bytes,
            sizes.status,
            U::STORAGE | U::COPY_SRC | U::COPY_DST,
        )?;
        let status_init = if reusable {
            Some(ctx.filled_buffer("status init", status_bytes, sizes.status, U::COPY_SRC)?)
        } else {
            None
        };

        // What segments past the end of a segmented buffer bind, by access (a
        // buffer may not be bound both read-only and writable in one dispatch);
        // 16 bytes, the least an `array<vec4<u32>>` binding takes.
        let dummies = layouts.iter().any(Option::is_some).then(|| {
            [
                ctx.empty_buffer("unused segment (read)", 16, U::STORAGE),
                ctx.empty_buffer("unused segment (read_write)", 16, U::STORAGE),
            ]
        });

        let mut passes = Vec::with_capacity(plan.passes.len());
        for (p, (pass, pipeline)) in plan.passes.iter().zip(pipelines).enumerate() {
            let key = pass.kernel.key;
            let params = param_words(pass, p)?;
            let params_buf = filled(
                &format!("params of pass {p} ({key})"),
                bytemuck::cast_slice(&params),
                sizes.params[p],
                PARAMS_USAGE,
            )?;
            let layout = layouts[p].as_ref();
            let mut entries = Vec::with_capacity(pass.buffers.len());
            for (b, &r) in pass.buffers.iter().enumerate() {
                let buffer = match r {
                    BufferRef::Params => &params_buf.buffer,
                    BufferRef::Status => &status.buffer,
                    BufferRef::Input(i) => {
                        &input_bufs[i]
                            .as_ref()
                            .ok_or_else(|| OpError::Device(format!("input {i} was not uploaded")))?
                            .buffer
                    }
                    BufferRef::Output(i) => &output_bufs[i].buffer,
                    BufferRef::Scratch(i) => &scratch_bufs[i].buffer,
                };
                // Pooled buffers may be larger than what they hold: every
                // binding is sized to its tensor.
                let total = sizes.of(r, p);
                let segments = layout.map_or(1, |l| l.counts[b]);
                if segments == 1 {
                    entries.push(wgpu::BindGroupEntry {
                        binding: entries.len() as u32,
                        resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                            buffer,
                            offset: 0,
                            size: std::num::NonZeroU64::new(total),
                        }),
                    });
                    continue;
                }
                // Segment k: bytes [k * S, (k + 1) * S), the last one shorter;
                // `layouts` checked that the buffer ends within the segments.
                for k in 0..u64::from(segments) {
                    let offset = k * ctx.segment;
                    let resource = match (offset < total, &dummies) {
                        (true, _) => wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                            buffer,
                            offset,
                            size: std::num::NonZeroU64::new(ctx.segment.min(total - offset)),
                        }),
                        (false, Some([read, read_write])) => match pass.kernel.bindings[b] {
                            // Parameter blocks are never segmented.
                            Access::Read | Access::Uniform => read.as_entire_binding(),
                            Access::ReadWrite => read_write.as_entire_binding(),
                        },
                        (false, None) => {
                            return Err(OpError::Device("no buffer for an unused segment".into()))
                        }
                    };
                    entries.push(wgpu::BindGroupEntry {
                        binding: entries.len() as u32,
                        resource,
                    });
                }
            }
            let bind_group = ctx.device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some(key),
                layout: &pipeline.layout,
                entries: &entries,
            });
            passes.push(BoundPass {
                pipeline,
                bind_group,
                grid: grids[p],
                _params: params_buf,
            });
        }
        Ok(Bound {
            init: plan.outputs.clone(),
            descs: src.outputs.to_vec(),
            kernels,
            index_checks: plan.index_checks.len(),
            sizes,
            inputs: input_bufs,
            outputs: output_bufs,
            scratch: scratch_bufs,
            status,
            status_init,
            dirty: pooled || src.given.iter().any(Option::is_some),
            passes,
            _dummies: dummies,
        })
    }

    /// The byte size of the status words that the plan's index checks use.
    pub(crate) fn status_bytes(&self) -> u64 {
        self.index_checks as u64 * 4
    }

    /// Records one run of the plan into `encoder`.
    ///
    /// With `reset`, or when the buffers came from the pool, first sets what
    /// the plan expects: outputs that start zeroed are cleared, the padding
    /// past every other output's last word cleared, scratch buffers zeroed;
    /// a reset also sets the status words to all ones (freshly bound buffers
    /// start that way, so the first run needs no reset). Outputs that start
    /// as a copy of an input are copied on every run. `stamps` gets a
    /// timestamp at the beginning of the first pass (query 0) and at the
    /// end of the last (query 1).
    pub(crate) fn record(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        reset: bool,
        stamps: Option<&wgpu::QuerySet>,
    ) {
        if reset || self.dirty {
            for (o, init) in self.init.iter().enumerate() {
                let size = self.sizes.outputs[o];
                if *init == OutputInit::Zero {
                    encoder.clear_buffer(&self.outputs[o].buffer, 0, Some(size));
                } else if self.dirty {
                    // The words past the tensor's last one: kernels leave
                    // them, readers of the tensor may load them.
                    let used = self.descs[o]
                        .byte_size()
                        .unwrap_or(0)
                        .next_multiple_of(4)
                        .min(size);
                    if used < size {
                        encoder.clear_buffer(&self.outputs[o].buffer, used, Some(size - used));
                    }
                }
            }
            for (s, &size) in self.scratch.iter().zip(&self.sizes.scratch) {
                encoder.clear_buffer(&s.buffer, 0, Some(size));
            }
            if let Some(init) = &self.status_init {
                encoder.copy_buffer_to_buffer(init, 0, &self.status.buffer, 0, self.sizes.status);
            }
        }
        for (o, init) in self.init.iter().enumerate() {
            if let OutputInit::CopyOfInput(i) = *init {
                if let Some(Some(src)) = self.inputs.get(i) {
                    encoder.copy_buffer_to_buffer(
                        &src.buffer,
                        0,
                        &self.outputs[o].buffer,
                        0,
                        self.sizes.outputs[o],
                    );
                }
            }
        }
        let last = self.passes.len().saturating_sub(1);
        for (p, pass) in self.passes.iter().enumerate() {
            let timestamp_writes = match stamps {
                Some(set) if p == 0 || p == last => Some(wgpu::ComputePassTimestampWrites {
                    query_set: set,
                    beginning_of_pass_write_index: (p == 0).then_some(0),
                    end_of_pass_write_index: (p == last).then_some(1),
                }),
                _ => None,
            };
            let (x, y) = pass.grid;
            let empty = x == 0 || y == 0;
            if empty && timestamp_writes.is_none() {
                continue;
            }
            let key = self.kernels[p];
            let mut cpass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some(key),
                timestamp_writes,
            });
            if !empty {
                cpass.set_pipeline(&pass.pipeline.pipeline);
                cpass.set_bind_group(0, &pass.bind_group, &[]);
                cpass.dispatch_workgroups(x, y, 1);
            }
        }
    }

    /// Adds copies of the outputs and status words to `encoder`, submits it,
    /// waits, and returns the outputs, or [`ExecError::Index`] for the
    /// lowest failed index check. Any failure once the device is lost is
    /// [`OpError::DeviceLost`].
    pub(crate) fn read_back(
        &self,
        ctx: &Context,
        encoder: wgpu::CommandEncoder,
    ) -> Result<Vec<HostTensor>, ExecError> {
        self.read_back_on_device(ctx, encoder)
            .map_err(|e| match ctx.check_lost() {
                Err(lost) => lost.into(),
                Ok(()) => e,
            })
    }

    fn read_back_on_device(
        &self,
        ctx: &Context,
        mut encoder: wgpu::CommandEncoder,
    ) -> Result<Vec<HostTensor>, ExecError> {
        use wgpu::BufferUsages as U;
        let scopes = Scopes::push(&ctx.device);
        let mut staging = Vec::with_capacity(self.outputs.len() + 1);
        for (i, desc) in self.descs.iter().enumerate() {
            let size = desc.byte_size().unwrap_or(0).next_multiple_of(4);
            let s = ctx.empty_buffer(
                &format!("read-back of output {i}"),
                size.max(4),
                U::MAP_READ | U::COPY_DST,
            );
            if size > 0 {
                encoder.copy_buffer_to_buffer(&self.outputs[i].buffer, 0, &s, 0, size);
            }
            staging.push(s);
        }
        let s = ctx.empty_buffer(
            "read-back of status",
            self.sizes.status,
            U::MAP_READ | U::COPY_DST,
        );
        encoder.copy_buffer_to_buffer(&self.status.buffer, 0, &s, 0, self.sizes.status);
        staging.push(s);
        let index = ctx.queue.submit([encoder.finish()]);
        let mapped = crate::wait::map_read(ctx, Some(index), staging.clone());
        if let Some(e) = scopes.pop() {
            ctx.check_lost()?;
            return Err(device_error(&format!("running kernels {:?}", self.kernels), &e).into());
        }
        pollster::block_on(mapped)?;

        let (status_buf, out_bufs) = staging
            .split_last()
            .ok_or_else(|| OpError::Device("no status read-back buffer".into()))?;
        let status_bytes = read(status_buf, self.sizes.status as usize)?;
        if let Some((check, position)) = failed_check(&status_bytes, self.index_checks) {
            return Err(ExecError::Index { check, position });
        }
        let mut results = Vec::with_capacity(self.descs.len());
        for (desc, buf) in self.descs.iter().zip(out_bufs) {
            // Sizes were checked to fit in u64 and usize.
            let len = desc.byte_size().unwrap_or(0) as usize;
            let bytes = read(buf, len)?;
            results.push(HostTensor::from_bytes(desc.clone(), bytes)?);
        }
        Ok(results)
    }
}

/// The first of `checks` status words (little-endian, in `bytes`) that
/// reports a failure, with the failing position it holds.
pub(crate) fn failed_check(bytes: &[u8], checks: usize) -> Option<(usize, u64)> {
    bytes
        .chunks_exact(4)
        .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
        .take(checks)
        .enumerate()
        .find(|&(_, w)| w != u32::MAX)
        .map(|(check, w)| (check, u64::from(w)))
}

/// What a bound plan's tensors come from.
struct Sources<'a, 't> {
    inputs: &'a [Input<'t>],
    outputs: &'a [TensorDesc],
    given: &'a [Option<Buf>],
    mode: Mode,
}

/// Read-back buffers being mapped after submission `index`.
pub(crate) struct Pending {
    index: wgpu::SubmissionIndex,
    staging: Vec<wgpu::Buffer>,
    mapped: mpsc::Receiver<(usize, Result<(), wgpu::BufferAsyncError>)>,
}

/// Starts mapping `staging` (whose copies were submitted as `index`).
pub(crate) fn map_all(index: wgpu::SubmissionIndex, staging: Vec<wgpu::Buffer>) -> Pending {
    let (tx, mapped) = mpsc::channel();
    for (i, s) in staging.iter().enumerate() {
        let tx = tx.clone();
        s.map_async(wgpu::MapMode::Read, .., move |r| {
            let _ = tx.send((i, r));
        });
    }
    Pending {
        index,
        staging,
        mapped,
    }
}

/// Waits for the submission and its mappings; `lost` says whether the
/// device is lost.
///
/// Another thread polling the same device may be the one that runs our
/// mapping callbacks, so after our submission is done we keep waiting on the
/// channel (re-polling now and then) instead of giving up when a poll returns
/// before the callbacks were delivered.
pub(crate) fn wait(
    device: &wgpu::Device,
    lost: &dyn Fn() -> Result<(), OpError>,
    pending: &Pending,
) -> Result<(), OpError> {
    let mut done = vec![false; pending.staging.len()];
    let mut remaining = pending.staging.len();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(600);
    let mut first = true;
    while remaining > 0 {
        let poll_type = if first {
            wgpu::PollType::Wait {
                submission_index: Some(pending.index.clone()),
                timeout: None,
            }
        } else {
            wgpu::PollType::Poll
        };
        first = false;
        let polled = catch_unwind(AssertUnwindSafe(|| device.poll(poll_type)));
        lost()?;
        match polled {
            Ok(Ok(_)) => {}
            Ok(Err(e)) => return Err(OpError::Device(format!("waiting for the GPU failed: {e}"))),
            Err(_) => {
                return Err(OpError::Device(
                    "waiting for the GPU failed (wgpu panicked)".into(),
                ))
            }
        }
        let mut next = pending
            .mapped
            .recv_timeout(std::time::Duration::from_millis(5));
        while let Ok((i, r)) = next {
            r.map_err(|e| OpError::Device(format!("mapping a read-back buffer failed: {e}")))?;
            if !std::mem::replace(&mut done[i], true) {
                remaining -= 1;
            }
            next = pending
                .mapped
                .try_recv()
                .map_err(|_| mpsc::RecvTimeoutError::Timeout);
        }
        if std::time::Instant::now() > deadline {
            return Err(OpError::Device(
                "the GPU finished but the read-back buffers were never mapped".into(),
            ));
        }
    }
    Ok(())
}

impl Pending {
    /// The mapped bytes of read-back buffer `i`, truncated to `len`.
    pub(crate) fn read(&self, i: usize, len: usize) -> Result<Vec<u8>, OpError> {
        let buffer = self
            .staging
            .get(i)
            .ok_or_else(|| OpError::Device(format!("no read-back buffer {i}")))?;
        read(buffer, len)
    }
}

/// The mapped bytes of `buffer`, truncated to `len`.
pub(crate) fn read(buffer: &wgpu::Buffer, len: usize) -> Result<Vec<u8>, OpError> {
    let bytes = {
        let view = buffer
            .get_mapped_range(..)
            .map_err(|e| OpError::Device(format!("reading back a buffer failed: {e}")))?;
        view.get(..len)
            .ok_or_else(|| {
                OpError::Device(format!(
                    "read-back buffer holds {} bytes, wanted {len}",
                    view.len()
                ))
            })?
            .to_vec()
    };
    buffer.unmap();
    Ok(bytes)
}

/// Executes `plan`: binds it to pooled buffers (its inputs uploaded),
/// records it once and reads it back, in one submission.
pub(crate) fn execute(
    ctx: &Context,
    plan: &GpuPlan,
    inputs: &[&HostTensor],
    outputs: &[TensorDesc],
) -> Result<Vec<HostTensor>, ExecError> {
    let inputs: Vec<Input<'_>> = inputs.iter().map(|t| Input::Host(t)).collect();
    let bound =
        Bound::new(ctx, plan, &inputs, outputs, &[], Mode::Pooled).map_err(|e| {
            match ctx.check_lost() {
                Err(lost) => lost.into(),
                Ok(()) => e,
            }
        })?;
    let mut encoder = ctx
        .device
        .create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("ops-gpu plan"),
        });
    bound.record(&mut encoder, false, None);
    bound.read_back(ctx, encoder)
}
