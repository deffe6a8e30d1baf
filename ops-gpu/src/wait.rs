//! Waiting for the device without blocking the caller: read-back buffers
//! mapped with `map_async`, completed by a poller thread of the context.
//!
//! On native backends wgpu delivers `map_async` callbacks only while some
//! thread polls the device. [`map_read`] returns a future that is ready once
//! every buffer is mapped; when a first non-blocking poll does not finish
//! it, the context's poller thread (one per context, started on first use)
//! waits on the device and the callbacks wake the future. Any executor can
//! drive it; the blocking calls drive it with `pollster`.

use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::sync::{mpsc, Arc, Mutex, MutexGuard};
use std::task::{Context as TaskContext, Poll, Waker};
use std::time::{Duration, Instant};

use ops_core::OpError;

use crate::Context;

/// How long the device may take to finish a submission and map its
/// read-back buffers before the wait gives up.
const DEADLINE: Duration = Duration::from_secs(600);

#[derive(Default)]
struct State {
    remaining: usize,
    error: Option<OpError>,
    waker: Option<Waker>,
    /// The poller has the request.
    requested: bool,
}

fn lock(m: &Mutex<State>) -> MutexGuard<'_, State> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// One wait handed to the poller thread.
pub(crate) struct Request {
    index: Option<wgpu::SubmissionIndex>,
    state: Arc<Mutex<State>>,
}

/// A context's poller thread and the way to hand it requests.
pub(crate) struct Poller {
    /// `None` stops the thread, whatever other senders remain (futures
    /// may outlive their context).
    pub(crate) tx: mpsc::Sender<Option<Request>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Poller {
    /// Ends the thread and waits for it, so that its handle on the device
    /// is gone before the context's own (a device released on a thread of
    /// its own races the process's exit handlers in some drivers).
    pub(crate) fn stop(mut self) {
        let _ = self.tx.send(None);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The poller thread: waits on the device for each request until its
/// buffers are mapped (or the device fails), then wakes its future.
pub(crate) fn spawn_poller(
    device: wgpu::Device,
    lost: Arc<Mutex<Option<String>>>,
) -> Result<Poller, OpError> {
    let (tx, rx) = mpsc::channel::<Option<Request>>();
    let thread = std::thread::Builder::new()
        .name("ops-gpu poller".into())
        .spawn(move || {
            for req in rx.iter().map_while(|r| r) {
                serve(&device, &lost, &req);
                let waker = lock(&req.state).waker.take();
                if let Some(w) = waker {
                    w.wake();
                }
            }
        })
        .map_err(|e| OpError::Device(format!("starting the poller thread failed: {e}")))?;
    Ok(Poller {
        tx,
        thread: Some(thread),
    })
}

fn serve(device: &wgpu::Device, lost: &Mutex<Option<String>>, req: &Request) {
    let deadline = Instant::now() + DEADLINE;
    let mut first = true;
    loop {
        let poll_type = if first {
            wgpu::PollType::Wait {
                submission_index: req.index.clone(),
                timeout: Some(DEADLINE),
            }
        } else {
            wgpu::PollType::Poll
        };
        first = false;
        let polled = catch_unwind(AssertUnwindSafe(|| device.poll(poll_type)));
        let lost = lost
            .lock()
            .map(|l| l.clone())
            .unwrap_or_else(|p| p.into_inner().clone());
        let mut s = lock(&req.state);
        if s.remaining == 0 || s.error.is_some() {
            return;
        }
        if let Some(msg) = lost {
            s.error = Some(OpError::DeviceLost(msg));
            return;
        }
        match polled {
            Ok(Ok(_)) => {}
            Ok(Err(e)) => {
                s.error = Some(OpError::Device(format!("waiting for the GPU failed: {e}")));
                return;
            }
            Err(_) => {
                s.error = Some(OpError::Device(
                    "waiting for the GPU failed (wgpu panicked)".into(),
                ));
                return;
            }
        }
        if Instant::now() > deadline {
            s.error = Some(OpError::Device(
                "the GPU finished but the read-back buffers were never mapped".into(),
            ));
            return;
        }
        drop(s);
        // Done on the device; another thread's poll may be delivering the
        // callbacks.
        std::thread::sleep(Duration::from_micros(200));
    }
}

/// A future that is ready when every buffer of a [`map_read`] is mapped.
pub(crate) struct MapRead {
    state: Arc<Mutex<State>>,
    index: Option<wgpu::SubmissionIndex>,
    device: wgpu::Device,
    lost: Arc<Mutex<Option<String>>>,
    poller: Result<mpsc::Sender<Option<Request>>, OpError>,
}

/// Starts mapping `staging` for reading (their copies were submitted as
/// `index`, or in a submission the caller made: `None` waits for the
/// device's latest).
pub(crate) fn map_read(
    ctx: &Context,
    index: Option<wgpu::SubmissionIndex>,
    staging: Vec<wgpu::Buffer>,
) -> MapRead {
    let state = Arc::new(Mutex::new(State {
        remaining: staging.len(),
        ..State::default()
    }));
    for s in &staging {
        let st = Arc::clone(&state);
        s.map_async(wgpu::MapMode::Read, .., move |r| {
            let mut s = lock(&st);
            match r {
                Ok(()) => s.remaining = s.remaining.saturating_sub(1),
                Err(e) => {
                    s.error.get_or_insert_with(|| {
                        OpError::Device(format!("mapping a read-back buffer failed: {e}"))
                    });
                }
            }
            if s.remaining == 0 || s.error.is_some() {
                if let Some(w) = s.waker.take() {
                    w.wake();
                }
            }
        });
    }
    MapRead {
        state,
        index,
        device: ctx.device.clone(),
        lost: Arc::clone(&ctx.lost),
        poller: ctx.poller(),
    }
}

impl MapRead {
    fn lost(&self) -> Option<String> {
        match self.lost.lock() {
            Ok(l) => l.clone(),
            Err(p) => p.into_inner().clone(),
        }
    }

    /// Ready when done or failed.
    fn outcome(&self) -> Option<Result<(), OpError>> {
        if let Some(msg) = self.lost() {
            return Some(Err(OpError::DeviceLost(msg)));
        }
        let s = lock(&self.state);
        match &s.error {
            Some(e) => Some(Err(e.clone())),
            None if s.remaining == 0 => Some(Ok(())),
            None => None,
        }
    }
}

impl Future for MapRead {
    type Output = Result<(), OpError>;

    fn poll(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        if let Some(out) = this.outcome() {
            return Poll::Ready(out);
        }
        let first = !lock(&this.state).requested;
        if first {
            // Small work is often done already: one poll without blocking.
            let _ = catch_unwind(AssertUnwindSafe(|| this.device.poll(wgpu::PollType::Poll)));
            if let Some(out) = this.outcome() {
                return Poll::Ready(out);
            }
        }
        let mut s = lock(&this.state);
        s.waker = Some(cx.waker().clone());
        if s.remaining == 0 || s.error.is_some() {
            drop(s);
            cx.waker().wake_by_ref();
            return Poll::Pending;
        }
        if !s.requested {
            s.requested = true;
            drop(s);
            let sent = match &this.poller {
                Ok(tx) => tx
                    .send(Some(Request {
                        index: this.index.clone(),
                        state: Arc::clone(&this.state),
                    }))
                    .map_err(|_| OpError::Device("the poller thread has stopped".into())),
                Err(e) => Err(e.clone()),
            };
            if let Err(e) = sent {
                return Poll::Ready(Err(e));
            }
        }
        Poll::Pending
    }
}
