//! Division by a divisor the plan knows, without a division instruction.
//!
//! Kernels that turn a flat index into coordinates divide by the same
//! sizes for every element. A [`Divisor`] is computed once on the host
//! and passed in two parameter words; the kernel then divides with a
//! multiply-high and two shifts ([`WGSL`], `divide(n, magic, shifts)`),
//! the method of Granlund and Montgomery ("Division by invariant integers
//! using multiplication", 1994, figure 4.1), exact for every `u32`
//! dividend and every divisor from 1 to `u32::MAX`:
//!
//! ```text
//! l = ceil(log2(d)),  m = floor(2^32 * (2^l - d) / d) + 1
//! t = mulhi(m, n),    q = (t + ((n - t) >> min(l, 1))) >> max(l - 1, 0)
//! ```
//!
//! WGSL has no 32x32 -> 64-bit multiply, so `mulhi` is assembled from four
//! 16-bit products. Both steps vectorise where an integer division does
//! not (a CPU implementation of Vulkan divides lane by lane), and a GPU's
//! `u32` division is itself a sequence of some twenty instructions.

/// A divisor prepared for [`WGSL`]'s `divide`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Divisor {
    /// The divisor.
    pub d: u32,
    /// `m`: the multiplier.
    pub magic: u32,
    /// `min(l, 1) | max(l - 1, 0) << 8`: the two shifts.
    pub shifts: u32,
}

impl Divisor {
    /// The divisor `d`; 0 (a size that is never divided by) gives the
    /// divisor 1.
    pub fn new(d: u32) -> Divisor {
        let d = d.max(1);
        let l = 32 - (d - 1).leading_zeros();
        let magic = (((1u64 << 32) * ((1u64 << l) - u64::from(d))) / u64::from(d) + 1) as u32;
        let shifts = l.min(1) | (l.saturating_sub(1) << 8);
        Divisor { d, magic, shifts }
    }

    /// `n / d` by the kernel's arithmetic.
    pub fn divide(self, n: u32) -> u32 {
        let t = ((u64::from(self.magic) * u64::from(n)) >> 32) as u32;
        (t + ((n - t) >> (self.shifts & 0xff))) >> (self.shifts >> 8)
    }
}

/// The WGSL functions `mulhi(a, b)` (the high word of the 64-bit product)
/// and `divide(n, magic, shifts)` (`n / d` for the [`Divisor`] of `d`).
pub const WGSL: &str = "\
fn mulhi(a: u32, b: u32) -> u32 {
    let a0 = a & 0xffffu;
    let a1 = a >> 16u;
    let b0 = b & 0xffffu;
    let b1 = b >> 16u;
    let low = a0 * b0;
    let cross0 = a0 * b1;
    let cross1 = a1 * b0;
    let middle = (low >> 16u) + (cross0 & 0xffffu) + (cross1 & 0xffffu);
    return a1 * b1 + (cross0 >> 16u) + (cross1 >> 16u) + (middle >> 16u);
}

fn divide(n: u32, magic: u32, shifts: u32) -> u32 {
    let t = mulhi(n, magic);
    return (t + ((n - t) >> (shifts & 0xffu))) >> (shifts >> 8u);
}
";

#[cfg(test)]
mod tests {
    use super::*;

    /// The WGSL's `mulhi` from 16-bit products, as the kernel computes it.
    fn mulhi16(a: u32, b: u32) -> u32 {
        let (a0, a1, b0, b1) = (a & 0xffff, a >> 16, b & 0xffff, b >> 16);
        let (low, cross0, cross1) = (a0 * b0, a0 * b1, a1 * b0);
        let middle = (low >> 16) + (cross0 & 0xffff) + (cross1 & 0xffff);
        a1 * b1 + (cross0 >> 16) + (cross1 >> 16) + (middle >> 16)
    }

    #[test]
    fn mulhi_from_16_bit_products_is_exact() {
        let edges = [
            0,
            1,
            2,
            0xffff,
            0x1_0000,
            0x8000_0000,
            u32::MAX - 1,
            u32::MAX,
        ];
        let mut x = 0x9e37_79b9u32;
        let mut values: Vec<u32> = edges.to_vec();
        for _ in 0..2000 {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            values.push(x);
        }
        for &a in &values {
            for &b in values.iter().step_by(37) {
                let want = ((u64::from(a) * u64::from(b)) >> 32) as u32;
                assert_eq!(mulhi16(a, b), want, "{a} * {b}");
            }
        }
    }

    #[test]
    fn division_is_exact_for_every_divisor_kind() {
        let mut divisors: Vec<u32> = (1..=300).collect();
        for k in 1..32 {
            let p = 1u32 << k;
            divisors.extend([p - 1, p, p + 1]);
        }
        divisors.extend([u32::MAX - 1, u32::MAX, 641, 6_700_417, 65_535 * 3]);
        let mut x = 0x2545_f491u32;
        for &d in &divisors {
            let div = Divisor::new(d);
            let mut dividends = vec![0, 1, d - 1, d, d.wrapping_add(1), u32::MAX, u32::MAX - 1];
            dividends.extend((1..4).map(|k| d.saturating_mul(k)));
            dividends.extend((1..4).map(|k| d.saturating_mul(k).saturating_sub(1)));
            for _ in 0..500 {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                dividends.push(x);
                dividends.push(x >> (x % 32));
            }
            for n in dividends {
                assert_eq!(div.divide(n), n / d, "{n} / {d}");
            }
        }
        assert_eq!(Divisor::new(0), Divisor::new(1));
    }
}
