//! The compute pipeline cache: one pipeline per kernel key.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use ops_core::{Access, Kernel, OpError};

use crate::context::{device_error, Scopes};
use crate::{segment, CacheStats};

/// A compiled kernel.
pub(crate) struct Compiled {
    /// The kernel it was compiled from (to catch two kernels sharing a key).
    kernel: &'static Kernel,
    pub(crate) layout: wgpu::BindGroupLayout,
    pub(crate) pipeline: wgpu::ComputePipeline,
}

/// Which module of a kernel a pipeline runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Variant {
    /// The kernel's module: one binding per buffer.
    Plain,
    /// Its segmented variant ([`crate::segment`]).
    Segmented,
}

/// One slot per key and variant; the slot's lock is held while its pipeline
/// compiles, so concurrent first users wait for one compilation instead of
/// starting their own.
type Slot = Arc<Mutex<Option<Arc<Compiled>>>>;

#[derive(Default)]
pub(crate) struct PipelineCache {
    slots: Mutex<HashMap<(&'static str, Variant), Slot>>,
    compiled: AtomicU64,
    hits: AtomicU64,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

fn same_kernel(a: &Kernel, b: &Kernel) -> bool {
    std::ptr::eq(a, b)
        || (a.wgsl == b.wgsl
            && a.entry == b.entry
            && a.bindings == b.bindings
            && a.workgroup_size == b.workgroup_size)
}

impl PipelineCache {
    pub(crate) fn stats(&self) -> CacheStats {
        CacheStats {
            compiled: self.compiled.load(Ordering::Relaxed),
            hits: self.hits.load(Ordering::Relaxed),
        }
    }

    /// The pipeline of `kernel` (or of its segmented variant), compiled on
    /// first use.
    ///
    /// A failed compilation is not cached: the next use tries again.
    pub(crate) fn get(
        &self,
        device: &wgpu::Device,
        limits: &wgpu::Limits,
        kernel: &'static Kernel,
        variant: Variant,
    ) -> Result<Arc<Compiled>, OpError> {
        let slot = Arc::clone(lock(&self.slots).entry((kernel.key, variant)).or_default());
        let mut slot = lock(&slot);
        if let Some(c) = slot.as_ref() {
            if !same_kernel(c.kernel, kernel) {
                return Err(OpError::InvalidArgument(format!(
                    "two different kernels share the key `{}`",
                    kernel.key
                )));
            }
            self.hits.fetch_add(1, Ordering::Relaxed);
            return Ok(Arc::clone(c));
        }
        let c = Arc::new(compile(device, limits, kernel, variant)?);
        self.compiled.fetch_add(1, Ordering::Relaxed);
        *slot = Some(Arc::clone(&c));
        Ok(c)
    }
}

fn compile(
    device: &wgpu::Device,
    limits: &wgpu::Limits,
    kernel: &'static Kernel,
    variant: Variant,
) -> Result<Compiled, OpError> {
    let key = kernel.key;
    let (wgsl, bindings): (&'static str, Vec<Access>) = match variant {
        Variant::Plain => (kernel.wgsl, kernel.bindings.to_vec()),
        Variant::Segmented => {
            let s = segment::variant(kernel)?.ok_or_else(|| {
                OpError::InvalidArgument(format!("kernel `{key}` has no segmented variant"))
            })?;
            (s.wgsl, s.bindings(kernel))
        }
    };
    let label = match variant {
        Variant::Plain => Cow::Borrowed(key),
        Variant::Segmented => Cow::Owned(format!("{key} (segmented)")),
    };
    if kernel.workgroup_size > limits.max_compute_invocations_per_workgroup {
        return Err(OpError::TooLarge {
            what: format!("workgroup size {} of kernel `{key}`", kernel.workgroup_size),
            limit: format!(
                "max_compute_invocations_per_workgroup ({})",
                limits.max_compute_invocations_per_workgroup
            ),
        });
    }
    if bindings.len() > limits.max_storage_buffers_per_shader_stage as usize {
        return Err(OpError::TooLarge {
            what: format!("{} storage buffers of kernel `{label}`", bindings.len()),
            limit: format!(
                "max_storage_buffers_per_shader_stage ({})",
                limits.max_storage_buffers_per_shader_stage
            ),
        });
    }
    let entries: Vec<wgpu::BindGroupLayoutEntry> = bindings
        .iter()
        .enumerate()
        .map(|(i, access)| wgpu::BindGroupLayoutEntry {
            binding: i as u32,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer {
                ty: wgpu::BufferBindingType::Storage {
                    read_only: *access == Access::Read,
                },
                has_dynamic_offset: false,
                min_binding_size: None,
            },
            count: None,
        })
        .collect();

    let scopes = Scopes::push(device);
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some(&label),
        source: wgpu::ShaderSource::Wgsl(Cow::Borrowed(wgsl)),
    });
    let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: Some(&label),
        entries: &entries,
    });
    let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
        label: Some(&label),
        bind_group_layouts: &[Some(&layout)],
        immediate_size: 0,
    });
    let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some(&label),
        layout: Some(&pipeline_layout),
        module: &module,
        entry_point: Some(kernel.entry),
        compilation_options: Default::default(),
        cache: None,
    });
    if let Some(e) = scopes.pop() {
        return Err(device_error(
            &format!("compiling kernel `{label}` (entry `{}`)", kernel.entry),
            &e,
        ));
    }
    Ok(Compiled {
        kernel,
        layout,
        pipeline,
    })
}
