//! Adapter selection and device creation.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Mutex, OnceLock};

use ops_core::{DeviceClass, OpError};

use crate::cache::PipelineCache;
use crate::pool::{Pool, PoolStats};
use crate::wait::{spawn_poller, Poller, Request};
use crate::{AdapterSummary, CacheStats, NO_ADAPTER_HELP};

/// The bytes a new context's buffer pool keeps waiting at most.
pub const DEFAULT_POOL_LIMIT: u64 = 256 << 20;

/// A wgpu device and queue with a pipeline cache and a buffer pool;
/// executes GPU plans.
///
/// A context is `Send + Sync`: one context may run plans from many threads
/// at once, and pipelines are compiled once per kernel even when several
/// threads first need one at the same time. It opens a device of its own
/// ([`Context::new`]) or runs on the caller's ([`Context::from_device`]).
/// Its [`DeviceTensor`](crate::DeviceTensor)s belong to it: another
/// context refuses them, also on the same device.
///
/// Every failure is an [`OpError`] from the call that hit it. After
/// [`OpError::OutOfMemory`] or [`OpError::Device`] the context stays usable;
/// after [`OpError::DeviceLost`] it is not: every later call fails the same
/// way ([`Context::device_lost`] says so), and a new context is needed.
pub struct Context {
    pub(crate) device: wgpu::Device,
    pub(crate) queue: wgpu::Queue,
    pub(crate) limits: wgpu::Limits,
    pub(crate) cache: PipelineCache,
    /// Set by the device-lost callback.
    pub(crate) lost: Arc<Mutex<Option<String>>>,
    /// The largest storage binding the runtime uses, in bytes.
    pub(crate) max_binding: u64,
    /// The byte size of every segment but the last of a segmented tensor: a
    /// multiple of the storage offset alignment, at most `max_binding`.
    pub(crate) segment: u64,
    /// The buffers of device tensors, calls and uploads.
    pub(crate) pool: Pool,
    /// Unique among the process's contexts: device tensors carry it.
    pub(crate) id: u64,
    /// The poller thread, started on first use.
    poller: OnceLock<Result<Poller, OpError>>,
    /// The class plans are shaped for ([`Context::device_class`]).
    class: DeviceClass,
    summary: AdapterSummary,
    // Kept alive for the life of the device (a context on the caller's
    // device has neither).
    _adapter: Option<wgpu::Adapter>,
    _instance: Option<wgpu::Instance>,
}

impl Drop for Context {
    fn drop(&mut self) {
        if let Some(Ok(p)) = self.poller.take() {
            p.stop();
        }
    }
}

impl fmt::Debug for Context {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Context")
            .field("adapter", &self.summary)
            .field("cache", &self.cache_stats())
            .finish_non_exhaustive()
    }
}

/// Which adapters `OPS_ADAPTER` admits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Preference {
    /// Hardware first, then software.
    Auto,
    /// Software (`DeviceType::Cpu`) only.
    Software,
    /// Hardware only.
    Hardware,
}

impl Preference {
    fn from_env() -> Result<Preference, OpError> {
        match env_text("OPS_ADAPTER", "`software` or `hardware`")? {
            None => Ok(Preference::Auto),
            Some(v) => Preference::parse(&v),
        }
    }

    fn parse(v: &str) -> Result<Preference, OpError> {
        match v.trim().to_ascii_lowercase().as_str() {
            "" | "auto" => Ok(Preference::Auto),
            "software" | "sw" | "cpu" => Ok(Preference::Software),
            "hardware" | "hw" | "gpu" => Ok(Preference::Hardware),
            _ => Err(OpError::InvalidArgument(format!(
                "OPS_ADAPTER must be `software` or `hardware`, got `{v}`"
            ))),
        }
    }
}

/// The device class `OPS_PLANS` asks for (`None`: unset or `auto`, the
/// adapter's own).
fn plans_from_env() -> Result<Option<DeviceClass>, OpError> {
    match env_text("OPS_PLANS", "`software`, `hardware` or `auto`")? {
        None => Ok(None),
        Some(v) => parse_plans(&v),
    }
}

/// The value of environment variable `name` (`None` when unset); a value
/// that is not Unicode is an error saying it must be one of `expected`.
fn env_text(name: &str, expected: &str) -> Result<Option<String>, OpError> {
    match std::env::var(name) {
        Err(std::env::VarError::NotPresent) => Ok(None),
        Err(std::env::VarError::NotUnicode(v)) => Err(OpError::InvalidArgument(format!(
            "{name} must be {expected}, got {v:?}"
        ))),
        Ok(v) => Ok(Some(v)),
    }
}

fn parse_plans(v: &str) -> Result<Option<DeviceClass>, OpError> {
    match v.trim().to_ascii_lowercase().as_str() {
        "" | "auto" => Ok(None),
        "software" | "sw" | "cpu" => Ok(Some(DeviceClass::Software)),
        "hardware" | "hw" | "gpu" => Ok(Some(DeviceClass::Hardware)),
        _ => Err(OpError::InvalidArgument(format!(
            "OPS_PLANS must be `software`, `hardware` or `auto`, got `{v}`"
        ))),
    }
}

/// Lower is better: the rank of a hardware device type.
fn hardware_rank(t: wgpu::DeviceType) -> Option<u8> {
    match t {
        wgpu::DeviceType::DiscreteGpu => Some(0),
        wgpu::DeviceType::IntegratedGpu => Some(1),
        wgpu::DeviceType::VirtualGpu => Some(2),
        wgpu::DeviceType::Other => Some(3),
        wgpu::DeviceType::Cpu => None,
    }
}

/// Lower is better: native compute APIs before OpenGL.
fn backend_rank(b: wgpu::Backend) -> u8 {
    match b {
        wgpu::Backend::Vulkan | wgpu::Backend::Metal | wgpu::Backend::Dx12 => 0,
        wgpu::Backend::Gl => 1,
        _ => 2,
    }
}

fn summarize(info: &wgpu::AdapterInfo) -> AdapterSummary {
    AdapterSummary {
        name: info.name.clone(),
        backend: info.backend.to_string(),
        device_type: format!("{:?}", info.device_type),
        software: info.device_type == wgpu::DeviceType::Cpu,
    }
}

fn describe(info: &wgpu::AdapterInfo) -> String {
    format!("{} ({}, {:?})", info.name, info.backend, info.device_type)
}

impl Context {
    /// Opens a device on the best adapter.
    ///
    /// Prefers a hardware adapter and falls back to a software one
    /// (`DeviceType::Cpu`, e.g. lavapipe). The environment variable
    /// `OPS_ADAPTER=software|hardware` forces one kind; `WGPU_BACKEND`
    /// limits the backends wgpu searches. The device gets the adapter's own
    /// limits and no optional features. `OPS_PLANS=software|hardware` sets
    /// the [`device_class`](Context::device_class) whatever the adapter
    /// (`auto` or unset: the adapter's own), so that a machine without a GPU
    /// can run, test and fuzz the plans shaped for one.
    ///
    /// Fails with [`OpError::NoAdapter`] (its message includes
    /// [`NO_ADAPTER_HELP`]) when no adapter of the wanted kind can open a device.
    pub fn new() -> Result<Context, OpError> {
        let pref = Preference::from_env()?;
        let plans = plans_from_env()?;
        // Native compute APIs first; OpenGL (which also probes display
        // servers) only when they offer no adapter of the wanted kind.
        let env = wgpu::InstanceDescriptor::new_without_display_handle_from_env();
        let backends = env.backends;
        let mut instance = wgpu::Instance::new(wgpu::InstanceDescriptor {
            backends: backends & !wgpu::Backends::GL,
            ..wgpu::InstanceDescriptor::new_without_display_handle_from_env()
        });
        let mut adapters =
            pollster::block_on(instance.enumerate_adapters(backends & !wgpu::Backends::GL));
        let wanted = |a: &wgpu::Adapter| match pref {
            Preference::Auto => true,
            Preference::Software => a.get_info().device_type == wgpu::DeviceType::Cpu,
            Preference::Hardware => a.get_info().device_type != wgpu::DeviceType::Cpu,
        };
        if !adapters.iter().any(wanted) && backends.contains(wgpu::Backends::GL) {
            instance = wgpu::Instance::new(wgpu::InstanceDescriptor { backends, ..env });
            adapters = pollster::block_on(instance.enumerate_adapters(backends));
        }

        let mut hardware: Vec<(u8, u8, wgpu::Adapter)> = Vec::new();
        let mut software: Vec<(u8, wgpu::Adapter)> = Vec::new();
        let mut seen = Vec::new();
        for a in adapters {
            let info = a.get_info();
            seen.push(describe(&info));
            match hardware_rank(info.device_type) {
                Some(r) => hardware.push((r, backend_rank(info.backend), a)),
                None => software.push((backend_rank(info.backend), a)),
            }
        }
        hardware.sort_by_key(|(r, b, _)| (*r, *b));
        software.sort_by_key(|(b, _)| *b);
        let hardware = hardware.into_iter().map(|(_, _, a)| a);
        let software = software.into_iter().map(|(_, a)| a);
        let mut candidates: Vec<wgpu::Adapter> = match pref {
            Preference::Auto => hardware.chain(software).collect(),
            Preference::Software => software.collect(),
            Preference::Hardware => hardware.collect(),
        };
        if candidates.is_empty() && pref != Preference::Hardware {
            // Some platforms only hand out their fallback adapter on request.
            let opts = wgpu::RequestAdapterOptions {
                force_fallback_adapter: true,
                ..Default::default()
            };
            if let Ok(a) = pollster::block_on(instance.request_adapter(&opts)) {
                candidates.push(a);
            }
        }

        let mut failures = Vec::new();
        for adapter in candidates {
            let info = adapter.get_info();
            let limits = adapter.limits();
            let desc = wgpu::DeviceDescriptor {
                label: Some("ops-gpu"),
                required_features: wgpu::Features::empty(),
                required_limits: limits.clone(),
                ..Default::default()
            };
            match pollster::block_on(adapter.request_device(&desc)) {
                Ok((device, queue)) => {
                    let ctx = Context::from_parts(Some((instance, adapter)), device, queue, &info);
                    return Ok(match plans {
                        Some(class) => ctx.with_device_class(class),
                        None => ctx,
                    });
                }
                Err(e) => failures.push(format!("{}: {e}", describe(&info))),
            }
        }

        let wanted = match pref {
            Preference::Auto => "",
            Preference::Software => " (OPS_ADAPTER=software admits only software adapters)",
            Preference::Hardware => " (OPS_ADAPTER=hardware admits only hardware adapters)",
        };
        let mut msg = format!("{NO_ADAPTER_HELP}{wanted}");
        if !seen.is_empty() {
            msg.push_str(&format!(" Adapters seen: {}.", seen.join("; ")));
        }
        if !failures.is_empty() {
            msg.push_str(&format!(
                " Device requests failed: {}.",
                failures.join("; ")
            ));
        }
        Err(OpError::NoAdapter(msg))
    }

    /// A context on a device the caller opened, with its limits and
    /// features as they are.
    ///
    /// The device and queue stay the caller's: ops records into its
    /// command encoders ([`Context::record_into`](crate::Context::record_into))
    /// and submits on its queue, and installs no callbacks on it (the
    /// uncaptured-error handler and the device-lost callback remain the
    /// caller's; every call of ops runs inside error scopes). A loss ops
    /// sees is reported by [`Context::device_lost`]. The
    /// [`device_class`](Context::device_class) follows the adapter's
    /// device type. Several contexts may share one device: each has its own
    /// pipelines, pool and tensors.
    pub fn from_device(device: wgpu::Device, queue: wgpu::Queue) -> Context {
        let info = device.adapter_info();
        Context::build(None, device, queue, &info, false)
    }

    /// The device this context runs on (a handle: wgpu devices are shared).
    pub fn device(&self) -> &wgpu::Device {
        &self.device
    }

    /// The queue this context submits on.
    pub fn queue(&self) -> &wgpu::Queue {
        &self.queue
    }

    pub(crate) fn from_parts(
        owned: Option<(wgpu::Instance, wgpu::Adapter)>,
        device: wgpu::Device,
        queue: wgpu::Queue,
        info: &wgpu::AdapterInfo,
    ) -> Context {
        Context::build(owned, device, queue, info, true)
    }

    fn build(
        owned: Option<(wgpu::Instance, wgpu::Adapter)>,
        device: wgpu::Device,
        queue: wgpu::Queue,
        info: &wgpu::AdapterInfo,
        own_callbacks: bool,
    ) -> Context {
        static NEXT_ID: AtomicU64 = AtomicU64::new(1);
        let lost = Arc::new(Mutex::new(None));
        if own_callbacks {
            // Every operation runs inside error scopes; anything that still
            // escapes must not take the process down.
            device.on_uncaptured_error(Arc::new(|e: wgpu::Error| {
                eprintln!("ops-gpu: uncaptured wgpu error: {e}");
            }));
            let lost_cb = Arc::clone(&lost);
            device.set_device_lost_callback(move |reason, message| {
                if let Ok(mut l) = lost_cb.lock() {
                    *l = Some(format!("device lost ({reason:?}): {message}"));
                }
            });
        }
        let limits = device.limits();
        let (instance, adapter) = match owned {
            Some((i, a)) => (Some(i), Some(a)),
            None => (None, None),
        };
        let max_binding = limits.max_storage_buffer_binding_size;
        Context {
            device,
            queue,
            cache: PipelineCache::default(),
            lost,
            max_binding,
            segment: segment_size(max_binding, limits.min_storage_buffer_offset_alignment),
            limits,
            pool: Pool::new(DEFAULT_POOL_LIMIT),
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            poller: OnceLock::new(),
            class: DeviceClass::of(info.device_type == wgpu::DeviceType::Cpu),
            summary: summarize(info),
            _adapter: adapter,
            _instance: instance,
        }
    }

    /// The poller thread's end ([`crate::wait`]), started on first use.
    pub(crate) fn poller(&self) -> Result<mpsc::Sender<Option<Request>>, OpError> {
        match self
            .poller
            .get_or_init(|| spawn_poller(self.device.clone(), Arc::clone(&self.lost)))
        {
            Ok(p) => Ok(p.tx.clone()),
            Err(e) => Err(e.clone()),
        }
    }

    /// The buffer pool's counters: hits, misses and what waits in it.
    pub fn pool_stats(&self) -> PoolStats {
        self.pool.stats()
    }

    /// Keeps at most `bytes` of unused buffers in the pool from now on
    /// (default [`DEFAULT_POOL_LIMIT`]), releasing what is beyond it; 0
    /// releases every waiting buffer and pools none.
    pub fn set_pool_limit(&self, bytes: u64) {
        self.pool.set_limit(bytes);
    }

    /// The adapter this context runs on.
    pub fn adapter(&self) -> &AdapterSummary {
        &self.summary
    }

    /// The class of plans [`Context::run`] asks operators for
    /// ([`Operator::gpu_plan_for`](ops_core::Operator::gpu_plan_for)):
    /// [`DeviceClass::Software`] on a CPU-backed adapter such as lavapipe,
    /// [`DeviceClass::Hardware`] otherwise, unless set by `OPS_PLANS` (see
    /// [`Context::new`]) or [`Context::with_device_class`].
    pub fn device_class(&self) -> DeviceClass {
        self.class
    }

    /// This context asking operators for plans of `class`, whatever its
    /// adapter is: every class computes the same results on every adapter,
    /// so a software adapter can check the plans shaped for a hardware GPU
    /// (and the other way round); only the speed differs.
    pub fn with_device_class(mut self, class: DeviceClass) -> Context {
        self.class = class;
        self
    }

    /// The pipeline cache counters.
    pub fn cache_stats(&self) -> CacheStats {
        self.cache.stats()
    }

    /// The device's limits (the adapter's own, requested in full, less
    /// what [`Context::with_max_workgroups_per_dimension`] lowered).
    pub fn limits(&self) -> &wgpu::Limits {
        &self.limits
    }

    /// The largest storage-buffer binding this context uses, in bytes: the
    /// device's `max_storage_buffer_binding_size` unless lowered by
    /// [`Context::with_max_binding_size`].
    ///
    /// A tensor larger than this is bound in segments by the kernel's
    /// segmented variant (every generated kernel has one: up to four
    /// segments per tensor); beyond that a call fails with
    /// [`OpError::TooLarge`] naming this limit.
    pub fn max_binding_size(&self) -> u64 {
        self.max_binding
    }

    /// This context with storage bindings of at most `bytes` (never more
    /// than the device allows), so that smaller tensors take the segmented
    /// path: for tests of that path without hundreds of MiB of data.
    ///
    /// The segment size is `bytes` rounded down to the storage offset
    /// alignment; below one alignment unit, no tensor larger than `bytes`
    /// can run.
    pub fn with_max_binding_size(mut self, bytes: u64) -> Context {
        self.max_binding = bytes.min(self.limits.max_storage_buffer_binding_size);
        self.segment = segment_size(
            self.max_binding,
            self.limits.min_storage_buffer_offset_alignment,
        );
        self
    }

    /// This context spreading a pass's workgroups over x and y with at
    /// most `count` in each (never more than the device allows), so that
    /// small dispatches take the two-dimensional grid kernels linearise: for
    /// tests of that path without 65,536 workgroups of data.
    pub fn with_max_workgroups_per_dimension(mut self, count: u32) -> Context {
        let max = &mut self.limits.max_compute_workgroups_per_dimension;
        *max = count.clamp(1, *max);
        self
    }

    /// Why the device was lost, once it is: every call fails from then on
    /// with [`OpError::DeviceLost`] and a new context is needed. `None`
    /// while the context is usable.
    pub fn device_lost(&self) -> Option<String> {
        match self.lost.lock() {
            Ok(l) => l.clone(),
            Err(p) => p.into_inner().clone(),
        }
    }

    /// Destroys the device, as a driver reset or a removed GPU would: for
    /// tests of what callers see afterwards ([`Context::device_lost`]).
    #[doc(hidden)]
    pub fn destroy_device(&self) {
        // Marked first, so that calls failing from here on say why (the lost
        // callback may only run on a later poll).
        if let Ok(mut l) = self.lost.lock() {
            l.get_or_insert_with(|| "device lost (Destroyed): Context::destroy_device".into());
        }
        self.device.destroy();
        let _ = self.device.poll(wgpu::PollType::Poll);
    }

    /// `Err(DeviceLost)` once the device is lost.
    pub(crate) fn check_lost(&self) -> Result<(), OpError> {
        match self.device_lost() {
            Some(msg) => Err(OpError::DeviceLost(msg)),
            None => Ok(()),
        }
    }
}

/// The largest multiple of the storage offset alignment (and of 16, so that
/// `array<vec4<u32>>` segments hold whole vectors) that is at most
/// `max_binding`.
fn segment_size(max_binding: u64, alignment: u32) -> u64 {
    let alignment = u64::from(alignment).max(16);
    max_binding / alignment * alignment
}

/// The three error scopes every device operation runs in.
pub(crate) struct Scopes {
    // Innermost last.
    guards: Vec<wgpu::ErrorScopeGuard>,
}

impl Drop for Scopes {
    /// Scopes left unpopped (an early return) are popped innermost first, as
    /// wgpu requires; their errors are dropped with them.
    fn drop(&mut self) {
        while let Some(g) = self.guards.pop() {
            drop(g);
        }
    }
}

impl Scopes {
    /// Pushes internal, out-of-memory and validation scopes on this thread.
    pub(crate) fn push(device: &wgpu::Device) -> Scopes {
        Scopes {
            guards: vec![
                device.push_error_scope(wgpu::ErrorFilter::Internal),
                device.push_error_scope(wgpu::ErrorFilter::OutOfMemory),
                device.push_error_scope(wgpu::ErrorFilter::Validation),
            ],
        }
    }

    /// Pops the scopes (innermost first) and returns the error caught: an
    /// out-of-memory error when there is one (a buffer that could not be
    /// allocated also makes every later use of it a validation error, which
    /// would hide the cause), else the first.
    pub(crate) fn pop(mut self) -> Option<wgpu::Error> {
        let mut first = None;
        let mut out_of_memory = None;
        let guards = std::mem::take(&mut self.guards);
        for g in guards.into_iter().rev() {
            if let Some(e) = pollster::block_on(g.pop()) {
                if matches!(e, wgpu::Error::OutOfMemory { .. }) {
                    out_of_memory.get_or_insert(e);
                } else {
                    first.get_or_insert(e);
                }
            }
        }
        out_of_memory.or(first)
    }
}

/// `what` failed with the wgpu error `e`: [`OpError::OutOfMemory`] for an
/// allocation the device could not make, [`OpError::Device`] otherwise.
pub(crate) fn device_error(what: &str, e: &wgpu::Error) -> OpError {
    match e {
        wgpu::Error::OutOfMemory { .. } => {
            OpError::OutOfMemory(format!("{what}: {}", error_text(e)))
        }
        _ => OpError::Device(format!("{what} failed: {}", error_text(e))),
    }
}

/// A wgpu error as text: the description and its chain of sources.
pub(crate) fn error_text(e: &wgpu::Error) -> String {
    match e {
        wgpu::Error::OutOfMemory { source } => format!("out of memory: {source}"),
        wgpu::Error::Validation { description, .. } | wgpu::Error::Internal { description, .. } => {
            description.trim().to_string()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_ops_plans() {
        assert_eq!(parse_plans("").unwrap(), None);
        assert_eq!(parse_plans(" Auto ").unwrap(), None);
        assert_eq!(
            parse_plans("hardware").unwrap(),
            Some(DeviceClass::Hardware)
        );
        assert_eq!(parse_plans("SW").unwrap(), Some(DeviceClass::Software));
        assert!(
            matches!(parse_plans("fast"), Err(OpError::InvalidArgument(m)) if m.contains("OPS_PLANS"))
        );
    }

    #[test]
    fn parses_ops_adapter() {
        assert_eq!(Preference::parse("").unwrap(), Preference::Auto);
        assert_eq!(Preference::parse("Software").unwrap(), Preference::Software);
        assert_eq!(
            Preference::parse(" hardware ").unwrap(),
            Preference::Hardware
        );
        assert!(
            matches!(Preference::parse("quantum"), Err(OpError::InvalidArgument(m)) if m.contains("OPS_ADAPTER"))
        );
    }

    #[test]
    fn segments_are_aligned() {
        assert_eq!(segment_size(128 << 20, 32), 128 << 20);
        assert_eq!(segment_size(1000, 256), 768);
        assert_eq!(segment_size(100, 256), 0);
        assert_eq!(segment_size(40, 0), 32);
    }

    #[test]
    fn ranks_adapters() {
        assert!(
            hardware_rank(wgpu::DeviceType::DiscreteGpu)
                < hardware_rank(wgpu::DeviceType::IntegratedGpu)
        );
        assert_eq!(hardware_rank(wgpu::DeviceType::Cpu), None);
        assert!(backend_rank(wgpu::Backend::Vulkan) < backend_rank(wgpu::Backend::Gl));
    }
}
