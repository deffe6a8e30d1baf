//! The compute pipeline cache: one pipeline per kernel key.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use ops_core::{Access, BufferRef, Kernel, OpError, Pass, PARAM_WORDS};

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

/// The bind group layout entries of a kernel's `bindings`: storage
/// buffers, and the uniform block of parameter words.
pub(crate) fn layout_entries(bindings: &[Access]) -> Vec<wgpu::BindGroupLayoutEntry> {
    bindings
        .iter()
        .enumerate()
        .map(|(i, access)| wgpu::BindGroupLayoutEntry {
            binding: i as u32,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer {
                ty: match access {
                    Access::Uniform => wgpu::BufferBindingType::Uniform,
                    Access::Read | Access::ReadWrite => wgpu::BufferBindingType::Storage {
                        read_only: *access == Access::Read,
                    },
                },
                has_dynamic_offset: false,
                min_binding_size: None,
            },
            count: None,
        })
        .collect()
}

/// Usages of a parameter buffer: generated kernels bind it as a uniform
/// block ([`Access::Uniform`]), hand-written ones may bind it as storage.
pub(crate) const PARAMS_USAGE: wgpu::BufferUsages =
    wgpu::BufferUsages::STORAGE.union(wgpu::BufferUsages::UNIFORM);

/// How many words pass `p`'s parameter buffer holds: its own, at least
/// [`PARAM_WORDS`] (the uniform block a kernel declares). Fails when a
/// pass binding its words as a uniform block has more of them.
pub(crate) fn param_word_count(pass: &Pass, p: usize) -> Result<usize, OpError> {
    let uniform = pass
        .buffers
        .iter()
        .zip(pass.kernel.bindings)
        .any(|(r, a)| *r == BufferRef::Params && *a == Access::Uniform);
    if uniform && pass.params.len() > PARAM_WORDS {
        return Err(OpError::InvalidArgument(format!(
            "pass {p} (`{}`) has {} parameter words; its uniform block holds {PARAM_WORDS}",
            pass.kernel.key,
            pass.params.len()
        )));
    }
    Ok(pass.params.len().max(PARAM_WORDS))
}

/// The words of pass `p`'s parameter buffer: its own, then zeros up to
/// [`param_word_count`].
pub(crate) fn param_words(pass: &Pass, p: usize) -> Result<Vec<u32>, OpError> {
    let mut words = pass.params.clone();
    words.resize(param_word_count(pass, p)?, 0);
    Ok(words)
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

fn same_kernel(a: &Kernel, b: &Kernel) -> bool {
    std::ptr::eq(a, b)
        || (a.wgsl() == b.wgsl()
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

/// Compiles `kernel` (or its segmented variant) on `device`, uncached.
pub(crate) fn compile(
    device: &wgpu::Device,
    limits: &wgpu::Limits,
    kernel: &'static Kernel,
    variant: Variant,
) -> Result<Compiled, OpError> {
    let key = kernel.key;
    let (wgsl, bindings): (&'static str, Vec<Access>) = match variant {
        Variant::Plain => (kernel.wgsl(), kernel.bindings.to_vec()),
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
    let storage = bindings.iter().filter(|a| **a != Access::Uniform).count();
    if storage > limits.max_storage_buffers_per_shader_stage as usize {
        return Err(OpError::TooLarge {
            what: format!("{storage} storage buffers of kernel `{label}`"),
            limit: format!(
                "max_storage_buffers_per_shader_stage ({})",
                limits.max_storage_buffers_per_shader_stage
            ),
        });
    }
    let entries = layout_entries(&bindings);

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

#[cfg(test)]
mod tests {
    use super::*;

    static UNIFORM: Kernel = Kernel::new(
        "t/uniform",
        "",
        "main",
        &[Access::Uniform, Access::ReadWrite],
        1,
    );

    static STORAGE: Kernel = Kernel::new(
        "t/storage",
        "",
        "main",
        &[Access::Read, Access::ReadWrite],
        1,
    );

    fn pass(kernel: &'static Kernel, words: usize) -> Pass {
        Pass {
            kernel,
            buffers: vec![BufferRef::Params, BufferRef::Output(0)],
            params: (1..=words as u32).collect(),
            workgroups: 1,
        }
    }

    #[test]
    fn parameter_words_fill_the_uniform_block() {
        let words = param_words(&pass(&UNIFORM, 3), 0).unwrap();
        assert_eq!(words.len(), PARAM_WORDS);
        assert_eq!(&words[..4], &[1, 2, 3, 0]);
        assert!(words[3..].iter().all(|&w| w == 0));
        // No words at all still binds a whole (zero) block.
        assert_eq!(
            param_words(&pass(&UNIFORM, 0), 0).unwrap(),
            vec![0; PARAM_WORDS]
        );
        assert_eq!(
            param_words(&pass(&UNIFORM, PARAM_WORDS), 0).unwrap().len(),
            PARAM_WORDS
        );
    }

    #[test]
    fn too_many_words_for_a_uniform_block_are_an_error() {
        let e = param_words(&pass(&UNIFORM, PARAM_WORDS + 1), 2).unwrap_err();
        assert!(
            matches!(&e, OpError::InvalidArgument(m) if m.contains("pass 2") && m.contains(&format!("{} parameter words", PARAM_WORDS + 1))),
            "{e}"
        );
        // A storage array holds any count.
        assert_eq!(
            param_words(&pass(&STORAGE, PARAM_WORDS + 1), 0)
                .unwrap()
                .len(),
            PARAM_WORDS + 1
        );
    }

    #[test]
    fn layout_entries_bind_the_uniform_block() {
        let entries = layout_entries(&[Access::Uniform, Access::Read, Access::ReadWrite]);
        let kinds: Vec<_> = entries
            .iter()
            .map(|e| match e.ty {
                wgpu::BindingType::Buffer { ty, .. } => ty,
                _ => unreachable!(),
            })
            .collect();
        assert_eq!(
            kinds,
            [
                wgpu::BufferBindingType::Uniform,
                wgpu::BufferBindingType::Storage { read_only: true },
                wgpu::BufferBindingType::Storage { read_only: false },
            ]
        );
    }
}
