//! The host memory limit: the most bytes one operator call may allocate in
//! host memory.
//!
//! Both backends check a call against it before allocating anything: the
//! outputs a call returns ([`crate::check_call`], for the CPU reference
//! and `ops_gpu::Context::run`, which reads them back) and, on the CPU,
//! the reference's working arrays (a fold's accumulators, a selection's
//! candidates). A call past it is [`OpError::TooLarge`] naming the limit, as
//! the GPU names its buffer limits, so a descriptor whose output does not
//! fit the host is refused at once instead of aborting the process on a
//! failed allocation. `ops run` also refuses a case file's tensors past it
//! before reading their data.
//!
//! The limit is [`DEFAULT_HOST_LIMIT`] unless the environment variable
//! [`HOST_LIMIT_VAR`] (`OPS_HOST_LIMIT`) gives another, in bytes with an
//! optional binary suffix (`8GiB`, `512MiB`, `4096`), or a program sets one
//! with [`set_host_limit`].

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

use crate::OpError;

/// The host limit when neither [`HOST_LIMIT_VAR`] nor [`set_host_limit`]
/// gives one: 4 GiB, twice the largest buffer lavapipe's GPU backend
/// allocates (`max_buffer_size`), so that every call the GPU runs has a
/// CPU reference.
pub const DEFAULT_HOST_LIMIT: u64 = 4 << 30;

/// The environment variable that sets the host limit (read once).
pub const HOST_LIMIT_VAR: &str = "OPS_HOST_LIMIT";

/// The limit [`set_host_limit`] set; 0 when none was.
static SET: AtomicU64 = AtomicU64::new(0);

/// The host limit from [`HOST_LIMIT_VAR`], read once.
static FROM_ENV: OnceLock<Option<u64>> = OnceLock::new();

/// The host limit in bytes: [`set_host_limit`]'s, else [`HOST_LIMIT_VAR`]'s
/// when it parses ([`parse_host_limit`]), else [`DEFAULT_HOST_LIMIT`].
pub fn host_limit() -> u64 {
    match SET.load(Ordering::Relaxed) {
        0 => FROM_ENV
            .get_or_init(|| {
                std::env::var(HOST_LIMIT_VAR)
                    .ok()
                    .and_then(|v| parse_host_limit(&v).ok())
            })
            .unwrap_or(DEFAULT_HOST_LIMIT),
        n => n,
    }
}

/// Sets the host limit for the whole process (`None` restores the
/// environment's or the default).
pub fn set_host_limit(bytes: Option<u64>) {
    SET.store(bytes.map_or(0, |b| b.max(1)), Ordering::Relaxed);
}

/// Reads a byte count: digits with an optional suffix `KiB`, `MiB`, `GiB`
/// or `TiB` (also `K`, `M`, `G`, `T`), as [`HOST_LIMIT_VAR`] holds it.
pub fn parse_host_limit(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let digits = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (number, suffix) = t.split_at(digits);
    let shift = match suffix.trim() {
        "" => 0,
        "K" | "KiB" => 10,
        "M" | "MiB" => 20,
        "G" | "GiB" => 30,
        "T" | "TiB" => 40,
        _ => return Err(bad_limit(text)),
    };
    number
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(1 << shift))
        .filter(|&n| n > 0)
        .ok_or_else(|| bad_limit(text))
}

fn bad_limit(text: &str) -> String {
    format!(
        "{HOST_LIMIT_VAR} must be a positive byte count such as `8GiB` or `4096`, got {}",
        crate::quote(text)
    )
}

/// Refuses `bytes` of host memory (`None`: more than `u64` counts) for
/// `what` when past [`host_limit`], with [`OpError::TooLarge`] naming the
/// limit.
pub fn check_host_bytes(what: impl FnOnce() -> String, bytes: Option<u64>) -> Result<(), OpError> {
    let limit = host_limit();
    if bytes.is_some_and(|b| b <= limit) {
        return Ok(());
    }
    let size = bytes.map_or_else(|| "more than 2^64".to_string(), |b| b.to_string());
    Err(OpError::TooLarge {
        what: format!("{} of {size} bytes", what()),
        limit: format!("the host limit of {limit} bytes (`{HOST_LIMIT_VAR}`)"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_parse_with_binary_suffixes() {
        assert_eq!(parse_host_limit("4096"), Ok(4096));
        assert_eq!(parse_host_limit("8GiB"), Ok(8 << 30));
        assert_eq!(parse_host_limit(" 512M "), Ok(512 << 20));
        for bad in ["", "0", "-1", "1.5G", "8 gigs", "99999999999999999999T"] {
            assert!(parse_host_limit(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn bytes_past_the_limit_are_too_large() {
        assert!(check_host_bytes(|| "x".into(), Some(host_limit())).is_ok());
        let e = check_host_bytes(|| "output `y`".into(), Some(host_limit() + 1)).unwrap_err();
        let OpError::TooLarge { what, limit } = e else {
            panic!("{e:?}")
        };
        assert!(what.starts_with("output `y` of "), "{what}");
        assert!(limit.contains("OPS_HOST_LIMIT"), "{limit}");
        assert!(check_host_bytes(|| "z".into(), None).is_err());
    }
}
