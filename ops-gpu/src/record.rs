//! Many operator calls in one submission.

use std::fmt;
use std::sync::Arc;

use ops_core::{HostTensor, OpError, Operator, TensorDesc};

use crate::context::{device_error, Scopes};
use crate::exec::{failed_check, read, Bound, Input, Mode};
use crate::wait::map_read;
use crate::{Context, DeviceTensor, ExecError};

/// Where a recording's commands go.
enum Target<'e> {
    /// An encoder of the recording's own, submitted by
    /// [`Recording::submit`].
    Own(wgpu::CommandEncoder),
    /// The caller's encoder: the caller submits it.
    Caller(&'e mut wgpu::CommandEncoder),
}

/// One recorded operator call: what its deferred index check needs.
struct Call<'r> {
    op: &'r dyn Operator,
    inputs: Vec<DeviceTensor>,
    bound: Bound,
}

/// A sequence of operator calls on device tensors recorded into one
/// command encoder: one submission, no read-back between them.
///
/// Made by [`Context::record`] (an encoder of its own, submitted by
/// [`submit`](Recording::submit)) or [`Context::record_into`] (the
/// caller's encoder, between the caller's own passes; the caller submits
/// it and hands the submission to [`Encoded::submitted`]).
///
/// [`run`](Recording::run) checks a call as [`Context::run`] does and
/// records its passes; its outputs are device tensors at once, to feed the
/// next call. [`read`](Recording::read) adds a read-back. Index checks are
/// not read per call: every call's status words are gathered into one
/// buffer and read once when the work is finished
/// ([`Submission::wait`]); the first failing call (in recording order) is
/// reported as [`Context::run`] reports it, naming the operator, tensor,
/// element, value and bounds. The tensors written by a recording that
/// reports an error hold unspecified values.
///
/// `'r` is how long the context and the operators are borrowed (the
/// [`Submission`] keeps them, to phrase an index error), `'e` how long the
/// caller's encoder is.
pub struct Recording<'r, 'e> {
    ctx: &'r Context,
    target: Target<'e>,
    calls: Vec<Call<'r>>,
    reads: Vec<(TensorDesc, wgpu::Buffer)>,
}

impl fmt::Debug for Recording<'_, '_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Recording")
            .field("calls", &self.calls.len())
            .field("reads", &self.reads.len())
            .finish_non_exhaustive()
    }
}

impl Context {
    /// A recording into an encoder of its own.
    pub fn record(&self) -> Recording<'_, 'static> {
        let encoder = self
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("ops-gpu recording"),
            });
        Recording {
            ctx: self,
            target: Target::Own(encoder),
            calls: Vec::new(),
            reads: Vec::new(),
        }
    }

    /// A recording into `encoder`, an encoder of the caller's on this
    /// context's device: the calls' passes go into it where the caller is,
    /// between passes of its own. [`Recording::finish`] ends it; the caller
    /// submits the encoder, then waits through [`Encoded::submitted`].
    pub fn record_into<'r, 'e>(
        &'r self,
        encoder: &'e mut wgpu::CommandEncoder,
    ) -> Recording<'r, 'e> {
        Recording {
            ctx: self,
            target: Target::Caller(encoder),
            calls: Vec::new(),
            reads: Vec::new(),
        }
    }

    /// Runs `op` on device tensors in a submission of its own and waits
    /// for it: [`Context::record`], [`Recording::run`],
    /// [`Recording::submit`], [`Submission::wait`].
    pub fn run_on_device(
        &self,
        op: &dyn Operator,
        inputs: &[&DeviceTensor],
    ) -> Result<Vec<DeviceTensor>, OpError> {
        let mut rec = self.record();
        let outputs = rec.run(op, inputs)?;
        rec.submit()?.wait()?;
        Ok(outputs)
    }
}

impl<'r> Recording<'r, '_> {
    /// Records `op` on `inputs` and returns its outputs, device tensors from
    /// the context's pool (their values exist once the work runs).
    ///
    /// Checks the call as [`Context::run`] does (the tensors' count and
    /// descriptions; [`OpError::WrongContext`] for a tensor of another
    /// context); a host-read input (`host tensor` in the operator's spec)
    /// needs the right description, and the values the descriptor was
    /// built with are the ones used. A refused call records nothing.
    pub fn run(
        &mut self,
        op: &'r dyn Operator,
        inputs: &[&DeviceTensor],
    ) -> Result<Vec<DeviceTensor>, OpError> {
        self.call(op, inputs, &[])
    }

    /// [`run`](Recording::run) writing its outputs into `outputs`, tensors
    /// the caller provides (of the operator's output descriptions, none of
    /// them one of the call's inputs nor another output).
    pub fn run_into(
        &mut self,
        op: &'r dyn Operator,
        inputs: &[&DeviceTensor],
        outputs: &[&DeviceTensor],
    ) -> Result<(), OpError> {
        self.call(op, inputs, outputs).map(drop)
    }

    fn call(
        &mut self,
        op: &'r dyn Operator,
        inputs: &[&DeviceTensor],
        given: &[&DeviceTensor],
    ) -> Result<Vec<DeviceTensor>, OpError> {
        let ctx = self.ctx;
        ctx.check_lost()?;
        let info = op.info();
        let name = |names: &[&str], i: usize| names.get(i).copied().unwrap_or("?").to_string();
        for (i, t) in inputs.iter().enumerate() {
            t.check_context(ctx, &|| {
                format!("input `{}` of `{}`", name(info.inputs, i), info.name)
            })?;
        }
        let descs: Vec<&TensorDesc> = inputs.iter().map(|t| t.desc()).collect();
        ops_core::check_call_descs(op, &descs)?;
        let outputs = op.output_descs();
        if !given.is_empty() {
            if given.len() != outputs.len() {
                return Err(OpError::InvalidArgument(format!(
                    "`{}` writes {} outputs; {} tensors were given for them",
                    info.name,
                    outputs.len(),
                    given.len()
                )));
            }
            for (o, (want, t)) in outputs.iter().zip(given).enumerate() {
                let out = name(info.outputs, o);
                t.check_context(ctx, &|| format!("output `{out}` of `{}`", info.name))?;
                if want != t.desc() {
                    return Err(OpError::InvalidArgument(format!(
                        "output `{out}` of `{}` is {} {:?} (packed); the tensor given for it is {} {:?}{}",
                        info.name,
                        want.dtype,
                        want.sizes,
                        t.desc().dtype,
                        t.desc().sizes,
                        if t.desc().strides.is_some() { " with strides" } else { "" }
                    )));
                }
                if let Some(i) = inputs.iter().position(|x| x.same_buffer(t)) {
                    return Err(OpError::InvalidArgument(format!(
                        "output `{out}` of `{}` is given the buffer of its input `{}`: a call cannot write a tensor it reads",
                        info.name,
                        name(info.inputs, i)
                    )));
                }
                if given[..o].iter().any(|x| x.same_buffer(t)) {
                    return Err(OpError::InvalidArgument(format!(
                        "output `{out}` of `{}` is given a buffer that another of its outputs is given",
                        info.name
                    )));
                }
            }
        }
        let plan = op.gpu_plan_for(ctx.device_class())?;
        let sources: Vec<Input<'_>> = inputs.iter().map(|t| Input::Device(t)).collect();
        let given_bufs: Vec<Option<crate::pool::Buf>> = given
            .iter()
            .map(|t| Some(Arc::clone(t.storage())))
            .collect();
        let bound =
            Bound::new(ctx, &plan, &sources, &outputs, &given_bufs, Mode::Pooled).map_err(|e| {
                match e {
                    ExecError::Op(e) => e,
                    ExecError::Index { check, position } => OpError::Device(format!(
                        "index check {check} failed at element {position} before running"
                    )),
                }
            })?;
        let encoder = match &mut self.target {
            Target::Own(e) => e,
            Target::Caller(e) => &mut **e,
        };
        bound.record(encoder, false, None);
        let results = if given.is_empty() {
            outputs
                .into_iter()
                .zip(&bound.outputs)
                .map(|(d, b)| DeviceTensor::new(d, Arc::clone(b), ctx.id))
                .collect()
        } else {
            Vec::new()
        };
        self.calls.push(Call {
            op,
            inputs: inputs.iter().map(|&t| t.clone()).collect(),
            bound,
        });
        Ok(results)
    }

    /// Adds a read-back of `tensor` as it is at this point of the
    /// recording; [`Submission::wait`] returns the tensors read, in the
    /// order of these calls. Returns its position among them.
    pub fn read(&mut self, tensor: &DeviceTensor) -> Result<usize, OpError> {
        tensor.check_context(self.ctx, &|| "the tensor read".into())?;
        let encoder = match &mut self.target {
            Target::Own(e) => e,
            Target::Caller(e) => &mut **e,
        };
        let staging = self.ctx.copy_out(encoder, tensor);
        self.reads.push((tensor.desc().clone(), staging));
        Ok(self.reads.len() - 1)
    }

    /// The operator calls recorded so far.
    pub fn calls(&self) -> usize {
        self.calls.len()
    }

    /// Adds the copy of every call's status words into one read-back
    /// buffer (`None` when no call checks indices).
    fn gather_status(&mut self) -> Option<wgpu::Buffer> {
        use wgpu::BufferUsages as U;
        let total: u64 = self.calls.iter().map(|c| c.bound.status_bytes()).sum();
        if total == 0 {
            return None;
        }
        let staging = self.ctx.empty_buffer(
            "read-back of status words",
            total,
            U::MAP_READ | U::COPY_DST,
        );
        let encoder = match &mut self.target {
            Target::Own(e) => e,
            Target::Caller(e) => &mut **e,
        };
        let mut offset = 0;
        for c in &self.calls {
            let n = c.bound.status_bytes();
            if n > 0 {
                encoder.copy_buffer_to_buffer(&c.bound.status.buffer, 0, &staging, offset, n);
                offset += n;
            }
        }
        Some(staging)
    }

    /// Submits the recording's own encoder: one submission for every call
    /// and read-back. Fails for a recording into the caller's encoder
    /// (use [`finish`](Recording::finish)).
    pub fn submit(mut self) -> Result<Submission<'r>, OpError> {
        let status = self.gather_status();
        let ctx = self.ctx;
        let Target::Own(encoder) = self.target else {
            return Err(OpError::InvalidArgument(
                "a recording into the caller's encoder is ended by `finish`, and submitted by the caller".into(),
            ));
        };
        let scopes = Scopes::push(&ctx.device);
        let index = ctx.queue.submit([encoder.finish()]);
        if let Some(e) = scopes.pop() {
            ctx.check_lost()?;
            let ops: Vec<&str> = self.calls.iter().map(|c| c.op.info().name).collect();
            return Err(device_error(&format!("submitting operators {ops:?}"), &e));
        }
        Ok(Submission {
            ctx,
            index: Some(index),
            calls: self.calls,
            reads: self.reads,
            status,
        })
    }

    /// Ends a recording into the caller's encoder: adds the gathering of
    /// the status words. The caller submits the encoder and passes the
    /// submission to [`Encoded::submitted`].
    pub fn finish(mut self) -> Result<Encoded<'r>, OpError> {
        if matches!(self.target, Target::Own(_)) {
            return Err(OpError::InvalidArgument(
                "a recording into its own encoder is ended by `submit`".into(),
            ));
        }
        let status = self.gather_status();
        Ok(Encoded {
            submission: Submission {
                ctx: self.ctx,
                index: None,
                calls: self.calls,
                reads: self.reads,
                status,
            },
        })
    }
}

/// A recording ended in the caller's encoder, waiting for the caller to
/// submit it. Keep it until then: it holds the calls' buffers.
#[must_use = "the calls' results are checked and read through `submitted`"]
pub struct Encoded<'r> {
    submission: Submission<'r>,
}

impl fmt::Debug for Encoded<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Encoded")
            .field("calls", &self.submission.calls.len())
            .finish_non_exhaustive()
    }
}

impl<'r> Encoded<'r> {
    /// The submission of the caller's encoder, `index` as
    /// `Queue::submit` returned it.
    pub fn submitted(mut self, index: wgpu::SubmissionIndex) -> Submission<'r> {
        self.submission.index = Some(index);
        self.submission
    }
}

/// Recorded work submitted to the queue: [`wait`](Submission::wait) or
/// [`finish`](Submission::finish) reads the status words of every call
/// (one read-back) and the tensors the recording asked for.
///
/// It holds every call's buffers (and so their place in the pool) until it
/// is finished or dropped.
#[must_use = "index errors are only found by `wait` or `finish`"]
pub struct Submission<'r> {
    ctx: &'r Context,
    index: Option<wgpu::SubmissionIndex>,
    calls: Vec<Call<'r>>,
    reads: Vec<(TensorDesc, wgpu::Buffer)>,
    status: Option<wgpu::Buffer>,
}

impl fmt::Debug for Submission<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Submission")
            .field("calls", &self.calls.len())
            .field("reads", &self.reads.len())
            .finish_non_exhaustive()
    }
}

impl Submission<'_> {
    /// Waits for the work ([`finish`](Submission::finish) under
    /// `pollster`).
    pub fn wait(self) -> Result<Vec<HostTensor>, OpError> {
        pollster::block_on(self.finish())
    }

    /// Finishes without blocking: maps the status words and the read-back
    /// buffers (`map_async`; the context's poller thread waits on the
    /// device), then reports the first failed index check in recording
    /// order, or returns the tensors read, in the order
    /// [`Recording::read`] was called.
    pub async fn finish(self) -> Result<Vec<HostTensor>, OpError> {
        let ctx = self.ctx;
        let mut staging: Vec<wgpu::Buffer> = self.reads.iter().map(|(_, b)| b.clone()).collect();
        staging.extend(self.status.iter().cloned());
        map_read(ctx, self.index.clone(), staging)
            .await
            .map_err(|e| match ctx.check_lost() {
                Err(lost) => lost,
                Ok(()) => e,
            })?;
        if let Some(status) = &self.status {
            let total = self
                .calls
                .iter()
                .map(|c| c.bound.status_bytes())
                .sum::<u64>();
            let words = read(status, total as usize)?;
            let mut offset = 0usize;
            for call in &self.calls {
                let n = call.bound.status_bytes() as usize;
                let failed = failed_check(&words[offset..offset + n], call.bound.index_checks);
                offset += n;
                if let Some((check, position)) = failed {
                    // Phrased from the call's inputs as they are now.
                    let mut host = Vec::with_capacity(call.inputs.len());
                    for t in &call.inputs {
                        host.push(ctx.download_async(t).await?);
                    }
                    let refs: Vec<&HostTensor> = host.iter().collect();
                    return Err(call.op.index_error(&refs, check, position));
                }
            }
        }
        self.reads
            .iter()
            .map(|(desc, buf)| {
                let len = desc.byte_size().unwrap_or(0) as usize;
                HostTensor::from_bytes(desc.clone(), read(buf, len)?)
            })
            .collect()
    }
}
