//! Tensors that stay on the device.

use std::fmt;
use std::future::Future;
use std::sync::Arc;

use ops_core::{HostTensor, OpError, TensorDesc};

use crate::context::{device_error, Scopes};
use crate::exec::read;
use crate::pool::{Buf, Storage};
use crate::wait::map_read;
use crate::Context;

/// A tensor in a buffer on a context's device: its [`TensorDesc`] and the
/// buffer holding its elements from byte 0, in the layout of
/// [`HostTensor::bytes`] (8- and 16-bit elements packed little-endian into
/// words, 64-bit ones as two words), zero-padded to a multiple of 16 bytes.
///
/// Made by [`Context::upload`], [`Context::zeros`] and
/// [`Context::wrap_buffer`], and by the operators a [`Recording`](crate::Recording)
/// runs. Cloning shares the buffer (a handle, like `wgpu::Buffer`). When the
/// last handle is dropped the buffer goes back to its context's pool
/// (a wrapped buffer stays the caller's). A tensor belongs to its context:
/// another context refuses it with [`OpError::WrongContext`].
#[derive(Clone)]
pub struct DeviceTensor {
    desc: TensorDesc,
    storage: Buf,
    context: u64,
}

impl fmt::Debug for DeviceTensor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DeviceTensor")
            .field("dtype", &self.desc.dtype)
            .field("sizes", &self.desc.sizes)
            .field("strides", &self.desc.strides)
            .field("context", &self.context)
            .finish_non_exhaustive()
    }
}

impl DeviceTensor {
    pub(crate) fn new(desc: TensorDesc, storage: Buf, context: u64) -> DeviceTensor {
        DeviceTensor {
            desc,
            storage,
            context,
        }
    }

    /// Its description.
    pub fn desc(&self) -> &TensorDesc {
        &self.desc
    }

    /// Its data type.
    pub fn dtype(&self) -> ops_core::DataType {
        self.desc.dtype
    }

    /// Its sizes.
    pub fn sizes(&self) -> &[u32] {
        &self.desc.sizes
    }

    /// The buffer holding it, from byte 0 (it may be larger than the
    /// tensor: pooled buffers come in size classes). For passes of the
    /// caller's own that read or write the tensor in place.
    pub fn buffer(&self) -> &wgpu::Buffer {
        &self.storage.buffer
    }

    /// True when both handles share one buffer.
    pub fn same_buffer(&self, other: &DeviceTensor) -> bool {
        Arc::ptr_eq(&self.storage, &other.storage) || self.storage.buffer == other.storage.buffer
    }

    pub(crate) fn storage(&self) -> &Buf {
        &self.storage
    }

    /// `Err(WrongContext)` unless the tensor belongs to `ctx`; `what` names it.
    pub(crate) fn check_context(
        &self,
        ctx: &Context,
        what: &dyn Fn() -> String,
    ) -> Result<(), OpError> {
        if self.context == ctx.id {
            Ok(())
        } else {
            Err(OpError::WrongContext(format!(
                "{} belongs to another context (device tensors are tied to the context that made them)",
                what()
            )))
        }
    }
}

impl Context {
    /// Checks a tensor's byte size against the device's buffer limit,
    /// padded.
    fn tensor_bytes(&self, desc: &TensorDesc) -> Result<u64, OpError> {
        desc.check_strides().map_err(OpError::InvalidArgument)?;
        self.buffer_size(
            &|| format!("a {} tensor of sizes {:?}", desc.dtype, desc.sizes),
            desc.byte_size(),
        )
    }

    /// A device tensor holding `tensor`'s elements (its layout and strides
    /// kept). The data is written through the queue: it is in place for
    /// every later submission on this context's queue, with no wait here.
    pub fn upload(&self, tensor: &HostTensor) -> Result<DeviceTensor, OpError> {
        self.check_lost()?;
        let size = self.tensor_bytes(tensor.desc())?;
        let buf = self.pooled_with("uploaded tensor", tensor.bytes(), size);
        Ok(DeviceTensor::new(tensor.desc().clone(), buf, self.id))
    }

    /// A device tensor of `desc` holding zeros, for outputs the caller
    /// provides ([`Recording::run_into`](crate::Recording::run_into)).
    pub fn zeros(&self, desc: TensorDesc) -> Result<DeviceTensor, OpError> {
        self.check_lost()?;
        let size = self.tensor_bytes(&desc)?;
        let scopes = Scopes::push(&self.device);
        let buf = self
            .pool
            .take(&self.device, size, self.limits.max_buffer_size, "zeros");
        let mut encoder = self
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("ops-gpu zeros"),
            });
        encoder.clear_buffer(&buf.buffer, 0, Some(size));
        self.queue.submit([encoder.finish()]);
        if let Some(e) = scopes.pop() {
            self.check_lost()?;
            return Err(device_error("creating a zeroed tensor", &e));
        }
        Ok(DeviceTensor::new(desc, buf, self.id))
    }

    /// A device tensor of `desc` in `buffer`, a buffer of the caller's on
    /// this context's device, from byte 0. The buffer needs the usages
    /// `STORAGE | COPY_SRC | COPY_DST` and at least the tensor's byte size
    /// rounded up to 16 (its bytes past the tensor's end are padding, read
    /// as the rest of a tensor's last 16 bytes); it stays the caller's and
    /// is never pooled. wgpu offers no way to ask a buffer for its device,
    /// and does not refuse another device's buffer on every backend: that
    /// it is this context's device's is the caller's to keep.
    pub fn wrap_buffer(
        &self,
        buffer: wgpu::Buffer,
        desc: TensorDesc,
    ) -> Result<DeviceTensor, OpError> {
        use wgpu::BufferUsages as U;
        self.check_lost()?;
        let size = self.tensor_bytes(&desc)?;
        let need = U::STORAGE | U::COPY_SRC | U::COPY_DST;
        if !buffer.usage().contains(need) {
            return Err(OpError::InvalidArgument(format!(
                "a wrapped buffer needs the usages {need:?}; it has {:?}",
                buffer.usage()
            )));
        }
        if buffer.size() < size {
            return Err(OpError::InvalidArgument(format!(
                "a {} tensor of sizes {:?} needs a buffer of at least {size} bytes; it has {}",
                desc.dtype,
                desc.sizes,
                buffer.size()
            )));
        }
        Ok(DeviceTensor::new(desc, Storage::unpooled(buffer), self.id))
    }

    /// `tensor`'s elements, read back to the host: one submission and a
    /// wait ([`download_async`](Context::download_async) under `pollster`).
    pub fn download(&self, tensor: &DeviceTensor) -> Result<HostTensor, OpError> {
        pollster::block_on(self.download_async(tensor))
    }

    /// [`download`](Context::download) without blocking: the future
    /// completes when the copy is read (any executor can drive it; the
    /// context's poller thread waits on the device).
    pub fn download_async(
        &self,
        tensor: &DeviceTensor,
    ) -> impl Future<Output = Result<HostTensor, OpError>> + Send + 'static {
        let started = self.start_download(tensor);
        async move {
            let (desc, staging, mapped) = started?;
            mapped.await?;
            let len = desc.byte_size().unwrap_or(0) as usize;
            HostTensor::from_bytes(desc, read(&staging, len)?)
        }
    }

    fn start_download(
        &self,
        tensor: &DeviceTensor,
    ) -> Result<(TensorDesc, wgpu::Buffer, crate::wait::MapRead), OpError> {
        self.check_lost()?;
        tensor.check_context(self, &|| "the downloaded tensor".into())?;
        let scopes = Scopes::push(&self.device);
        let mut encoder = self
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("ops-gpu download"),
            });
        let staging = self.copy_out(&mut encoder, tensor);
        let index = self.queue.submit([encoder.finish()]);
        if let Some(e) = scopes.pop() {
            self.check_lost()?;
            return Err(device_error("downloading a tensor", &e));
        }
        let mapped = map_read(self, Some(index), vec![staging.clone()]);
        Ok((tensor.desc().clone(), staging, mapped))
    }

    /// A read-back buffer with a copy of `tensor`'s bytes (rounded up to
    /// whole words) recorded into `encoder`.
    pub(crate) fn copy_out(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        tensor: &DeviceTensor,
    ) -> wgpu::Buffer {
        use wgpu::BufferUsages as U;
        let size = tensor.desc().byte_size().unwrap_or(0).next_multiple_of(4);
        let staging = self.empty_buffer(
            "read-back of a tensor",
            size.max(4),
            U::MAP_READ | U::COPY_DST,
        );
        if size > 0 {
            encoder.copy_buffer_to_buffer(tensor.buffer(), 0, &staging, 0, size);
        }
        staging
    }
}
