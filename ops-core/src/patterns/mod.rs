//! What several families of [`crate::family`] share: division by
//! multiplication ([`divisor`]), team sizes, the coordinates index errors
//! name and the work items of word-wise stores.

pub mod divisor;

/// The largest power of two at most `v` (1 for 0): team sizes.
pub(crate) fn pow2_floor(v: u64) -> u64 {
    if v <= 1 {
        1
    } else {
        1 << (63 - v.leading_zeros())
    }
}

/// The row-major coordinates of element `position` of a tensor of `sizes`
/// (index errors name elements by them).
pub(crate) fn coordinates(sizes: &[u32], position: u64) -> Vec<u32> {
    let mut rest = position;
    let mut coords = vec![0u32; sizes.len()];
    for (c, &s) in coords.iter_mut().zip(sizes).rev() {
        if s > 0 {
            *c = (rest % u64::from(s)) as u32;
            rest /= u64::from(s);
        }
    }
    coords
}

/// Work items of a kernel storing `count` elements of `data` whole words
/// at a time: one per element of 32- and 64-bit data, one per `u32` word
/// of 4 (8-bit) or 2 (16-bit) elements.
pub(crate) fn word_items(count: u64, data: crate::DataType) -> u64 {
    match data.size_bytes() {
        1 => count.div_ceil(4),
        2 => count.div_ceil(2),
        _ => count,
    }
}
