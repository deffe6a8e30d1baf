//! The chain cases of `ops bench`: operators recorded into one submission
//! ([`ops_gpu::Recording`]) against the same operators called one by one.
//!
//! - Small: 10 element-wise operators on 1 KiB FLOAT32 tensors, each
//!   reading the previous one's output, as one recording with one read-back
//!   against 10 [`Context::run`] calls (an upload, a submission and a
//!   read-back each). Reports both in chains and calls a second, and the
//!   ratio of their times.
//! - Large: 4 element-wise operators over the main tensors
//!   ([`BenchOptions::size`](super::BenchOptions::size) bytes each), as one
//!   recording against the sum of the same operators run stand-alone on
//!   device tensors ([`Context::run_on_device`]: one submission and a wait
//!   each). The goal: the chain costs no more than its parts. Both sides
//!   are wall times from submission to completion (a recording has no
//!   per-pass timestamps).
//!
//! Both check their results against the CPU reference, and the buffer
//! pool's hits over the chain cases are reported.

use std::time::{Duration, Instant};

use ops_core::{HostTensor, OpError, Operator, TensorDesc};
use ops_gpu::{Context, DeviceTensor};
use serde_json::{json, Value};

use super::median;
use ops::onnx;

/// Operators in the small chain.
pub const SMALL_CHAIN_CALLS: usize = 10;

/// The byte size of each small-chain tensor.
pub const SMALL_CHAIN_BYTES: u64 = 1024;

/// What the chain cases measured.
#[derive(Clone, Debug, PartialEq)]
pub struct ChainReport {
    /// The small chain's operators, in order.
    pub small_ops: String,
    /// Chains timed on each side.
    pub small_chains: usize,
    /// Small chains a second, recorded in one submission.
    pub recorded_per_s: f64,
    /// Small chains a second as `Context::run` calls.
    pub run_per_s: f64,
    /// The large chain's operators and tensor bytes.
    pub large_ops: String,
    /// The large chain's median time in one submission.
    pub large_chain: Duration,
    /// The sum of its operators' median stand-alone times.
    pub large_parts: Duration,
    /// Whether every result equalled the CPU reference.
    pub matches_cpu: bool,
    /// Buffer pool hits and misses over the chain cases.
    pub pool_hits: u64,
    /// See [`pool_hits`](Self::pool_hits).
    pub pool_misses: u64,
}

impl ChainReport {
    /// How many times faster the recorded small chain is than the calls.
    pub fn small_speedup(&self) -> f64 {
        self.recorded_per_s / self.run_per_s.max(1e-12)
    }

    /// The large chain's time over the sum of its parts' (goal: at most 1).
    pub fn large_ratio(&self) -> f64 {
        self.large_chain.as_secs_f64() / self.large_parts.as_secs_f64().max(1e-12)
    }

    /// The pool's hit rate over the chain cases.
    pub fn pool_hit_rate(&self) -> f64 {
        let all = self.pool_hits + self.pool_misses;
        self.pool_hits as f64 / (all.max(1)) as f64
    }

    /// Lines of the text report.
    pub fn to_text(&self) -> String {
        format!(
            "chains: {} in one submission vs {} Context::run calls ({} bytes each, {} chains a side)\n  \
             recorded {:.0} chains/s ({:.0} calls/s), Context::run {:.0} chains/s ({:.0} calls/s): {:.2}x faster\n  \
             {}: one submission {:.3} ms, its operators stand-alone {:.3} ms: {:.2} of the parts (goal <= 1)\n  \
             buffer pool over the chains: {} hits, {} misses ({:.1}% hit rate){}\n",
            self.small_ops,
            SMALL_CHAIN_CALLS,
            SMALL_CHAIN_BYTES,
            self.small_chains,
            self.recorded_per_s,
            self.recorded_per_s * SMALL_CHAIN_CALLS as f64,
            self.run_per_s,
            self.run_per_s * SMALL_CHAIN_CALLS as f64,
            self.small_speedup(),
            self.large_ops,
            ms(self.large_chain),
            ms(self.large_parts),
            self.large_ratio(),
            self.pool_hits,
            self.pool_misses,
            100.0 * self.pool_hit_rate(),
            if self.matches_cpu { "" } else { "; RESULTS DIFFER FROM THE CPU REFERENCE" }
        )
    }

    /// The JSON record.
    pub fn to_json(&self) -> Value {
        json!({
            "small_ops": self.small_ops,
            "small_calls": SMALL_CHAIN_CALLS,
            "small_bytes": SMALL_CHAIN_BYTES,
            "small_chains": self.small_chains,
            "recorded_chains_per_s": self.recorded_per_s,
            "run_chains_per_s": self.run_per_s,
            "recorded_calls_per_s": self.recorded_per_s * SMALL_CHAIN_CALLS as f64,
            "run_calls_per_s": self.run_per_s * SMALL_CHAIN_CALLS as f64,
            "small_speedup": self.small_speedup(),
            "large_ops": self.large_ops,
            "large_chain_s": self.large_chain.as_secs_f64(),
            "large_parts_s": self.large_parts.as_secs_f64(),
            "large_ratio": self.large_ratio(),
            "target_large_ratio": 1.0,
            "matches_cpu": self.matches_cpu,
            "pool_hits": self.pool_hits,
            "pool_misses": self.pool_misses,
            "pool_hit_rate": self.pool_hit_rate(),
        })
    }
}

fn ms(t: Duration) -> f64 {
    t.as_secs_f64() * 1e3
}

fn build_error(e: impl std::fmt::Display) -> OpError {
    OpError::InvalidArgument(e.to_string())
}

/// Unary element-wise operators on `desc`, cycling Relu, Neg, Abs,
/// LeakyRelu (exact: the chain's result is checked bit for bit).
fn unary_ops(desc: &TensorDesc, n: usize) -> Result<Vec<Box<dyn Operator>>, OpError> {
    (0..n)
        .map(|k| -> Result<Box<dyn Operator>, OpError> {
            let d = desc.clone();
            Ok(match k % 4 {
                0 => Box::new(
                    onnx::ReluDesc::builder()
                        .x(d)
                        .build()
                        .map_err(build_error)?,
                ),
                1 => Box::new(onnx::NegDesc::builder().x(d).build().map_err(build_error)?),
                2 => Box::new(onnx::AbsDesc::builder().x(d).build().map_err(build_error)?),
                _ => Box::new(
                    onnx::LeakyReluDesc::builder()
                        .x(d)
                        .alpha(0.5)
                        .build()
                        .map_err(build_error)?,
                ),
            })
        })
        .collect()
}

fn names(ops: &[Box<dyn Operator>]) -> String {
    let names: Vec<&str> = ops.iter().map(|o| o.info().name).collect();
    names.join(" -> ")
}

/// `x` through `ops` on the CPU reference.
fn cpu_chain(ops: &[Box<dyn Operator>], x: &HostTensor) -> Result<HostTensor, OpError> {
    let mut t = x.clone();
    for op in ops {
        t = op.run_cpu(&[&t])?.remove(0);
    }
    Ok(t)
}

/// `x` through `ops` in one recording, read back once.
fn recorded(
    ctx: &Context,
    ops: &[Box<dyn Operator>],
    x: &DeviceTensor,
) -> Result<HostTensor, OpError> {
    let mut rec = ctx.record();
    let mut t = x.clone();
    for op in ops {
        t = rec.run(op.as_ref(), &[&t])?.remove(0);
    }
    rec.read(&t)?;
    Ok(rec.submit()?.wait()?.remove(0))
}

/// Values in [-2, 2) from a fixed seed.
fn input(elements: u32) -> Result<HostTensor, OpError> {
    let mut rng = ops_core::fuzz::Rng::new(0x00c0_ffee);
    let v: Vec<f32> = (0..elements)
        .map(|_| (rng.next_u64() >> 40) as f32 / (1u64 << 24) as f32 * 4.0 - 2.0)
        .collect();
    HostTensor::from_slice([elements], &v)
}

/// Runs the chain cases: `chains` small chains a side, `runs` timed runs
/// of the large chain and of each of its parts over `bytes`-byte tensors.
pub fn chains(
    ctx: &Context,
    chains: usize,
    runs: usize,
    bytes: u64,
) -> Result<ChainReport, OpError> {
    let before = ctx.pool_stats();
    let mut matches = true;

    // Small: 10 operators on 1 KiB.
    let small = input((SMALL_CHAIN_BYTES / 4) as u32)?;
    let ops = unary_ops(small.desc(), SMALL_CHAIN_CALLS)?;
    let want = cpu_chain(&ops, &small)?;
    let small_d = ctx.upload(&small)?;
    matches &= recorded(ctx, &ops, &small_d)? == want;
    let mut by_run = small.clone();
    for op in &ops {
        by_run = ctx.run(op.as_ref(), &[&by_run])?.remove(0);
    }
    matches &= by_run == want;
    let chains = chains.max(1);
    let (mut rec_time, mut run_time) = (Duration::ZERO, Duration::ZERO);
    // Alternating rounds, so that a slow spell falls on both alike.
    let rounds = chains.min(10);
    for round in 0..rounds {
        let n = chains / rounds + usize::from(round < chains % rounds);
        let start = Instant::now();
        for _ in 0..n {
            recorded(ctx, &ops, &small_d)?;
        }
        rec_time += start.elapsed();
        let start = Instant::now();
        for _ in 0..n {
            let mut t = small.clone();
            for op in &ops {
                t = ctx.run(op.as_ref(), &[&t])?.remove(0);
            }
        }
        run_time += start.elapsed();
    }

    // Large: 4 operators over the main tensors.
    let elements = (bytes / 4).clamp(4, u64::from(u32::MAX)) as u32;
    let large = input(elements)?;
    let big_ops = unary_ops(large.desc(), 4)?;
    let large_d = ctx.upload(&large)?;
    let runs = runs.max(1);
    matches &= recorded(ctx, &big_ops, &large_d)? == cpu_chain(&big_ops, &large)?;
    let mut chain_times = Vec::with_capacity(runs);
    for _ in 0..runs {
        let start = Instant::now();
        let mut rec = ctx.record();
        let mut t = large_d.clone();
        for op in &big_ops {
            t = rec.run(op.as_ref(), &[&t])?.remove(0);
        }
        rec.submit()?.wait()?;
        chain_times.push(start.elapsed());
    }
    let mut parts = Duration::ZERO;
    for op in &big_ops {
        ctx.run_on_device(op.as_ref(), &[&large_d])?;
        let mut times = Vec::with_capacity(runs);
        for _ in 0..runs {
            let start = Instant::now();
            ctx.run_on_device(op.as_ref(), &[&large_d])?;
            times.push(start.elapsed());
        }
        parts += median(times).0;
    }
    let after = ctx.pool_stats();
    Ok(ChainReport {
        small_ops: names(&ops),
        small_chains: chains,
        recorded_per_s: chains as f64 / rec_time.as_secs_f64().max(1e-12),
        run_per_s: chains as f64 / run_time.as_secs_f64().max(1e-12),
        large_ops: format!("{} over {} bytes", names(&big_ops), u64::from(elements) * 4),
        large_chain: median(chain_times).0,
        large_parts: parts,
        matches_cpu: matches,
        pool_hits: after.hits - before.hits,
        pool_misses: after.misses - before.misses,
    })
}
