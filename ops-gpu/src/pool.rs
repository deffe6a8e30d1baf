//! The buffer pool: device buffers kept by size class and handed out again.
//!
//! Every buffer the runtime binds (inputs it uploads, outputs, scratch,
//! status words and pass parameters) comes from the pool of its context and
//! goes back when the last handle to it is dropped: a [`DeviceTensor`]
//! (crate::DeviceTensor) the caller dropped, or a finished call. Work
//! already submitted that still uses a returned buffer is not disturbed: a
//! queue runs its submissions in order, so the next user's writes land
//! after it. Buffers handed out are dirty; the runtime clears what a plan
//! expects zeroed.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, Weak};

/// Usages of every pooled buffer: bound as storage or as a uniform
/// parameter block, written by the queue, cleared and copied.
pub(crate) const POOL_USAGE: wgpu::BufferUsages = wgpu::BufferUsages::STORAGE
    .union(wgpu::BufferUsages::UNIFORM)
    .union(wgpu::BufferUsages::COPY_SRC)
    .union(wgpu::BufferUsages::COPY_DST);

/// The smallest pooled buffer, in bytes.
const MIN_CLASS: u64 = 256;

/// What a context's buffer pool did ([`Context::pool_stats`](crate::Context::pool_stats)).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct PoolStats {
    /// Buffers handed out again from the pool.
    pub hits: u64,
    /// Buffers the pool had to create.
    pub misses: u64,
    /// Buffers waiting in the pool now.
    pub free_buffers: u64,
    /// Their bytes.
    pub free_bytes: u64,
    /// The most bytes the pool keeps waiting; a buffer coming back beyond
    /// it is released to the device.
    pub limit_bytes: u64,
}

impl PoolStats {
    /// `hits / (hits + misses)`, 0 before the first buffer.
    pub fn hit_rate(&self) -> f64 {
        let all = self.hits + self.misses;
        if all == 0 {
            0.0
        } else {
            self.hits as f64 / all as f64
        }
    }
}

#[derive(Default)]
struct Shelves {
    free: HashMap<u64, Vec<wgpu::Buffer>>,
    free_bytes: u64,
    free_buffers: u64,
    limit: u64,
    hits: u64,
    misses: u64,
}

/// A context's pool of device buffers.
pub(crate) struct Pool {
    shelves: Arc<Mutex<Shelves>>,
}

/// A device buffer and, when it came from a pool, the way back there.
///
/// Dropping the last handle ([`Buf`]) returns a pooled buffer to its
/// shelf, or releases it when the pool is full or gone.
#[derive(Debug)]
pub(crate) struct Storage {
    pub(crate) buffer: wgpu::Buffer,
    home: Option<(u64, Weak<Mutex<Shelves>>)>,
}

/// A shared handle to a buffer.
pub(crate) type Buf = Arc<Storage>;

impl std::fmt::Debug for Shelves {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shelves")
            .field("free_buffers", &self.free_buffers)
            .finish_non_exhaustive()
    }
}

impl Storage {
    /// A buffer of the caller's or a one-off one: never pooled.
    pub(crate) fn unpooled(buffer: wgpu::Buffer) -> Buf {
        Arc::new(Storage { buffer, home: None })
    }
}

impl Drop for Storage {
    fn drop(&mut self) {
        let Some((class, home)) = self.home.take() else {
            return;
        };
        let Some(shelves) = home.upgrade() else {
            return;
        };
        let mut s = lock(&shelves);
        if s.free_bytes.saturating_add(class) > s.limit {
            return;
        }
        s.free_bytes += class;
        s.free_buffers += 1;
        s.free.entry(class).or_default().push(self.buffer.clone());
    }
}

fn lock(m: &Mutex<Shelves>) -> MutexGuard<'_, Shelves> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The size class of a buffer of `bytes`: at least [`MIN_CLASS`], else
/// `bytes` rounded up to an eighth of the next power of two (at most 25%
/// more than asked), and never above `max` (where `bytes` itself is used).
pub(crate) fn size_class(bytes: u64, max: u64) -> u64 {
    if bytes <= MIN_CLASS {
        return MIN_CLASS.min(max).max(bytes);
    }
    let step = (bytes.next_power_of_two() / 8).max(16);
    match bytes.checked_next_multiple_of(step) {
        Some(c) if c <= max => c,
        _ => bytes,
    }
}

impl Pool {
    /// An empty pool keeping at most `limit` bytes waiting.
    pub(crate) fn new(limit: u64) -> Pool {
        Pool {
            shelves: Arc::new(Mutex::new(Shelves {
                limit,
                ..Shelves::default()
            })),
        }
    }

    /// A buffer of at least `bytes` (a multiple of 4 no larger than
    /// `max`, the device's largest buffer), from a shelf when one waits
    /// there. Its contents are whatever its last user left.
    pub(crate) fn take(&self, device: &wgpu::Device, bytes: u64, max: u64, label: &str) -> Buf {
        let class = size_class(bytes, max);
        let home = Some((class, Arc::downgrade(&self.shelves)));
        {
            let mut s = lock(&self.shelves);
            if let Some(buffer) = s.free.get_mut(&class).and_then(Vec::pop) {
                s.free_bytes -= class;
                s.free_buffers -= 1;
                s.hits += 1;
                return Arc::new(Storage { buffer, home });
            }
            s.misses += 1;
        }
        let buffer = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            size: class,
            usage: POOL_USAGE,
            mapped_at_creation: false,
        });
        Arc::new(Storage { buffer, home })
    }

    pub(crate) fn stats(&self) -> PoolStats {
        let s = lock(&self.shelves);
        PoolStats {
            hits: s.hits,
            misses: s.misses,
            free_buffers: s.free_buffers,
            free_bytes: s.free_bytes,
            limit_bytes: s.limit,
        }
    }

    /// Keeps at most `limit` bytes waiting from now on, releasing what is
    /// beyond it (`0`: releases every waiting buffer, pools nothing).
    pub(crate) fn set_limit(&self, limit: u64) {
        let mut s = lock(&self.shelves);
        s.limit = limit;
        let mut classes: Vec<u64> = s.free.keys().copied().collect();
        // Largest first: the fewest buffers released.
        classes.sort_unstable_by(|a, b| b.cmp(a));
        for class in classes {
            while s.free_bytes > limit {
                let Some(b) = s.free.get_mut(&class).and_then(Vec::pop) else {
                    break;
                };
                b.destroy();
                s.free_bytes -= class;
                s.free_buffers -= 1;
            }
        }
        s.free.retain(|_, v| !v.is_empty());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn size_classes_waste_at_most_a_quarter() {
        assert_eq!(size_class(16, 1 << 30), 256);
        assert_eq!(size_class(256, 1 << 30), 256);
        assert_eq!(size_class(257, 1 << 30), 320);
        assert_eq!(size_class(64 << 20, 1 << 30), 64 << 20);
        assert_eq!(size_class((64 << 20) + 16, 1 << 30), 80 << 20);
        for bytes in (16..100_000u64).step_by(16) {
            let c = size_class(bytes, u64::MAX);
            assert!(c >= bytes && c.is_multiple_of(16), "{bytes} -> {c}");
            assert!(c <= MIN_CLASS.max(bytes + bytes / 4), "{bytes} -> {c}");
        }
        // Never above the device's largest buffer.
        assert_eq!(size_class(1000, 1008), 1000);
        assert_eq!(size_class(100, 128), 128);
    }
}
