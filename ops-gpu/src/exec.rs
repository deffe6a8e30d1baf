//! Executing a plan: buffers, passes, read-back.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::mpsc;
use std::sync::Arc;

use ops_core::{split_workgroups, BufferRef, GpuPlan, HostTensor, OpError, OutputInit, TensorDesc};

use crate::cache::Compiled;
use crate::context::{error_text, Scopes};
use crate::{Context, ExecError};

/// `bytes` rounded up to whole words, at least one word.
fn padded(bytes: u64) -> Option<u64> {
    Some(bytes.checked_next_multiple_of(4)?.max(4))
}

fn invalid(msg: String) -> ExecError {
    ExecError::Op(OpError::InvalidArgument(msg))
}

/// Byte sizes of everything a plan binds, checked against the limits.
struct Sizes {
    inputs: Vec<u64>,
    outputs: Vec<u64>,
    scratch: Vec<u64>,
    status: u64,
}

/// Which buffers some pass binds (and so must fit a storage binding).
struct Used {
    inputs: Vec<bool>,
    outputs: Vec<bool>,
    scratch: Vec<bool>,
}

/// Checks the plan's structure against the call's tensors.
fn check_plan(
    ctx: &Context,
    plan: &GpuPlan,
    inputs: &[&HostTensor],
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
        outputs: vec![false; outputs.len()],
        scratch: vec![false; plan.scratch_bytes.len()],
    };
    for (o, init) in plan.outputs.iter().enumerate() {
        if let OutputInit::CopyOfInput(i) = *init {
            let Some(input) = inputs.get(i) else {
                return Err(invalid(format!(
                    "output {o} starts as a copy of input {i}, but only {} inputs were given",
                    inputs.len()
                )));
            };
            let have = input.bytes().len() as u64;
            if outputs[o].byte_size() != Some(have) {
                return Err(invalid(format!(
                    "output {o} ({} {:?}) starts as a copy of input {i} ({} {:?}), but their byte sizes differ",
                    outputs[o].dtype,
                    outputs[o].sizes,
                    input.dtype(),
                    input.sizes()
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
                BufferRef::Output(i) => (&mut used.outputs, i, "output"),
                BufferRef::Scratch(i) => (&mut used.scratch, i, "scratch buffer"),
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
    /// Pads `bytes` and checks it against the buffer limits.
    fn buffer_size(
        &self,
        what: &dyn Fn() -> String,
        bytes: Option<u64>,
        bound: bool,
    ) -> Result<u64, OpError> {
        let max_buffer = self.limits.max_buffer_size;
        let max_binding = self.limits.max_storage_buffer_binding_size;
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
        if bound && size > max_binding {
            return Err(OpError::TooLarge {
                what: format!("{} ({size} bytes)", what()),
                limit: format!("max_storage_buffer_binding_size ({max_binding} bytes)"),
            });
        }
        Ok(size)
    }

    fn sizes(
        &self,
        plan: &GpuPlan,
        inputs: &[&HostTensor],
        outputs: &[TensorDesc],
        used: &Used,
    ) -> Result<Sizes, OpError> {
        let inputs = inputs
            .iter()
            .enumerate()
            .map(|(i, t)| {
                self.buffer_size(
                    &|| format!("input {i} ({} {:?})", t.dtype(), t.sizes()),
                    Some(t.bytes().len() as u64),
                    used.inputs[i],
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
                    used.outputs[i],
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
            .map(|(i, &b)| {
                self.buffer_size(&|| format!("scratch buffer {i}"), Some(b), used.scratch[i])
            })
            .collect::<Result<_, _>>()?;
        let status_words = plan.index_checks.len().max(1) as u64;
        let status = self.buffer_size(
            &|| "status buffer".into(),
            status_words.checked_mul(4),
            true,
        )?;
        for (p, pass) in plan.passes.iter().enumerate() {
            self.buffer_size(
                &|| format!("parameters of pass {p} (`{}`)", pass.kernel.key),
                (pass.params.len() as u64).checked_mul(4),
                true,
            )?;
        }
        Ok(Sizes {
            inputs,
            outputs,
            scratch,
            status,
        })
    }

    /// A buffer holding `bytes` (zero-padded to `size`).
    fn upload(
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

    fn empty_buffer(&self, label: &str, size: u64, usage: wgpu::BufferUsages) -> wgpu::Buffer {
        self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            size,
            usage,
            mapped_at_creation: false,
        })
    }
}

/// Read-back buffers waiting to be mapped.
struct Pending {
    index: wgpu::SubmissionIndex,
    /// One per output, then the status buffer.
    staging: Vec<wgpu::Buffer>,
    mapped: mpsc::Receiver<(usize, Result<(), wgpu::BufferAsyncError>)>,
}

/// Creates the buffers, records and submits the passes, and starts mapping
/// the read-back buffers. Runs inside error scopes.
fn submit(
    ctx: &Context,
    plan: &GpuPlan,
    inputs: &[&HostTensor],
    used: &Used,
    sizes: &Sizes,
    pipelines: &[Arc<Compiled>],
    grids: &[(u32, u32)],
) -> Result<Pending, OpError> {
    use wgpu::BufferUsages as U;

    let copied: Vec<usize> = plan
        .outputs
        .iter()
        .filter_map(|o| match *o {
            OutputInit::CopyOfInput(i) => Some(i),
            OutputInit::Zero => None,
        })
        .collect();
    let input_bufs: Vec<Option<wgpu::Buffer>> = inputs
        .iter()
        .enumerate()
        .map(|(i, t)| {
            if used.inputs[i] || copied.contains(&i) {
                ctx.upload(
                    &format!("input {i}"),
                    t.bytes(),
                    sizes.inputs[i],
                    U::STORAGE | U::COPY_SRC,
                )
                .map(Some)
            } else {
                Ok(None)
            }
        })
        .collect::<Result<_, _>>()?;
    // New buffers are zero-filled by wgpu.
    let output_bufs: Vec<wgpu::Buffer> = sizes
        .outputs
        .iter()
        .enumerate()
        .map(|(i, &s)| {
            ctx.empty_buffer(
                &format!("output {i}"),
                s,
                U::STORAGE | U::COPY_SRC | U::COPY_DST,
            )
        })
        .collect();
    let scratch_bufs: Vec<wgpu::Buffer> = sizes
        .scratch
        .iter()
        .enumerate()
        .map(|(i, &s)| ctx.empty_buffer(&format!("scratch {i}"), s, U::STORAGE))
        .collect();
    let status_words = vec![u32::MAX; (sizes.status / 4) as usize];
    let status_buf = ctx.upload(
        "status",
        bytemuck::cast_slice(&status_words),
        sizes.status,
        U::STORAGE | U::COPY_SRC,
    )?;

    let mut encoder = ctx
        .device
        .create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("ops-gpu plan"),
        });
    for (o, init) in plan.outputs.iter().enumerate() {
        if let OutputInit::CopyOfInput(i) = *init {
            if let Some(Some(src)) = input_bufs.get(i) {
                encoder.copy_buffer_to_buffer(src, 0, &output_bufs[o], 0, sizes.outputs[o]);
            }
        }
    }
    for (p, pass) in plan.passes.iter().enumerate() {
        let (x, y) = grids[p];
        if x == 0 || y == 0 {
            continue;
        }
        let key = pass.kernel.key;
        let params: &[u32] = if pass.params.is_empty() {
            &[0]
        } else {
            &pass.params
        };
        let params_buf = ctx.upload(
            &format!("params of pass {p} ({key})"),
            bytemuck::cast_slice(params),
            params.len() as u64 * 4,
            U::STORAGE,
        )?;
        let mut entries = Vec::with_capacity(pass.buffers.len());
        for (b, r) in pass.buffers.iter().enumerate() {
            let buffer = match *r {
                BufferRef::Params => &params_buf,
                BufferRef::Status => &status_buf,
                BufferRef::Input(i) => input_bufs[i]
                    .as_ref()
                    .ok_or_else(|| OpError::Device(format!("input {i} was not uploaded")))?,
                BufferRef::Output(i) => &output_bufs[i],
                BufferRef::Scratch(i) => &scratch_bufs[i],
            };
            entries.push(wgpu::BindGroupEntry {
                binding: b as u32,
                resource: buffer.as_entire_binding(),
            });
        }
        let compiled = &pipelines[p];
        let bind_group = ctx.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some(key),
            layout: &compiled.layout,
            entries: &entries,
        });
        let mut cpass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some(key),
            timestamp_writes: None,
        });
        cpass.set_pipeline(&compiled.pipeline);
        cpass.set_bind_group(0, &bind_group, &[]);
        cpass.dispatch_workgroups(x, y, 1);
    }

    let mut staging = Vec::with_capacity(output_bufs.len() + 1);
    for (i, (buf, &size)) in output_bufs.iter().zip(&sizes.outputs).enumerate() {
        let s = ctx.empty_buffer(
            &format!("read-back of output {i}"),
            size,
            U::MAP_READ | U::COPY_DST,
        );
        encoder.copy_buffer_to_buffer(buf, 0, &s, 0, size);
        staging.push(s);
    }
    let s = ctx.empty_buffer(
        "read-back of status",
        sizes.status,
        U::MAP_READ | U::COPY_DST,
    );
    encoder.copy_buffer_to_buffer(&status_buf, 0, &s, 0, sizes.status);
    staging.push(s);

    let index = ctx.queue.submit([encoder.finish()]);
    let (tx, mapped) = mpsc::channel();
    for (i, s) in staging.iter().enumerate() {
        let tx = tx.clone();
        s.map_async(wgpu::MapMode::Read, .., move |r| {
            let _ = tx.send((i, r));
        });
    }
    Ok(Pending {
        index,
        staging,
        mapped,
    })
}

/// Waits for the submission and its mappings.
///
/// Another thread polling the same device may be the one that runs our
/// mapping callbacks, so after our submission is done we keep waiting on the
/// channel (re-polling now and then) instead of giving up when a poll returns
/// before the callbacks were delivered.
fn wait(ctx: &Context, pending: &Pending) -> Result<(), OpError> {
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
        let polled = catch_unwind(AssertUnwindSafe(|| ctx.device.poll(poll_type)));
        ctx.check_lost()?;
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

/// The mapped bytes of `buffer`, truncated to `len`.
fn read(buffer: &wgpu::Buffer, len: usize) -> Result<Vec<u8>, OpError> {
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

pub(crate) fn execute(
    ctx: &Context,
    plan: &GpuPlan,
    inputs: &[&HostTensor],
    outputs: &[TensorDesc],
) -> Result<Vec<HostTensor>, ExecError> {
    ctx.check_lost()?;
    let (used, grids) = check_plan(ctx, plan, inputs, outputs)?;
    let sizes = ctx.sizes(plan, inputs, outputs, &used)?;
    let pipelines = plan
        .passes
        .iter()
        .map(|p| ctx.cache.get(&ctx.device, &ctx.limits, p.kernel))
        .collect::<Result<Vec<_>, _>>()?;

    let scopes = Scopes::push(&ctx.device);
    let submitted = submit(ctx, plan, inputs, &used, &sizes, &pipelines, &grids);
    if let Some(e) = scopes.pop() {
        let kernels: Vec<&str> = plan.passes.iter().map(|p| p.kernel.key).collect();
        return Err(OpError::Device(format!(
            "running kernels {kernels:?} failed: {}",
            error_text(&e)
        ))
        .into());
    }
    let pending = submitted?;
    wait(ctx, &pending)?;

    let (status_buf, out_bufs) = pending
        .staging
        .split_last()
        .ok_or_else(|| OpError::Device("no status read-back buffer".into()))?;
    let status_bytes = read(status_buf, sizes.status as usize)?;
    let status: Vec<u32> = status_bytes
        .chunks_exact(4)
        .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
        .collect();
    if let Some((check, &position)) = status
        .iter()
        .take(plan.index_checks.len())
        .enumerate()
        .find(|(_, &w)| w != u32::MAX)
    {
        return Err(ExecError::Index {
            check,
            position: u64::from(position),
        });
    }
    let mut results = Vec::with_capacity(outputs.len());
    for (desc, buf) in outputs.iter().zip(out_bufs) {
        // Sizes were checked to fit in u64 and usize.
        let len = desc.byte_size().unwrap_or(0) as usize;
        let bytes = read(buf, len)?;
        results.push(HostTensor::from_bytes(desc.clone(), bytes)?);
    }
    Ok(results)
}
