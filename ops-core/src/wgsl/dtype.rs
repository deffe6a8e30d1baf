//! Per-[`DataType`] WGSL helpers shared by every pattern's kernels.
//!
//! Tensors are bound as packed `array<u32>` words, little-endian, whatever
//! their data type: an 8-bit element is a byte of a word, a 64-bit element
//! two words (low, high). A *raw* element in WGSL is the element's bits as
//! `u32` (zero-extended, for types of 32 bits or fewer) or `vec2<u32>`
//! `(lo, hi)` (64-bit types). Everything here works on those bits with
//! integer arithmetic only, so NaN payloads, -0.0 and subnormals behave alike
//! on every adapter and no WGSL extension is needed (no `shader-f16`, no
//! 64-bit integers): core WebGPU.
//!
//! Each `gen_*` function writes one WGSL function through a [`Writer`];
//! functions that touch a buffer name its global variable, since core WGSL
//! cannot pass storage pointers to functions.

use crate::family::reduce::Zeros;
use crate::DataType;

use super::segments::Buffer;
use super::writer::Writer;

/// True for types held in two words (`vec2<u32>` raw values and keys).
pub const fn is_wide(dt: DataType) -> bool {
    dt.size_bits() == 64
}

/// True for types narrower than a word: several elements share a `u32`, so
/// a kernel writing them binds the buffer as `array<atomic<u32>>` and stores
/// through [`gen_store_to`]'s `atomicAnd`/`atomicOr`; the buffer must start
/// zeroed or hold valid data.
pub const fn is_packed(dt: DataType) -> bool {
    dt.size_bits() < 32
}

/// The WGSL type of a raw element (and of its comparison key).
pub const fn raw_type(dt: DataType) -> &'static str {
    if is_wide(dt) {
        "vec2<u32>"
    } else {
        "u32"
    }
}

/// The WGSL store type of a tensor binding: `array<atomic<u32>>` for a
/// written packed tensor, `array<u32>` otherwise.
pub const fn storage_type(dt: DataType, written: bool) -> &'static str {
    if written && is_packed(dt) {
        "array<atomic<u32>>"
    } else {
        "array<u32>"
    }
}

/// The raw value of type `dt` all of whose bits are zero.
pub const fn raw_zero(dt: DataType) -> &'static str {
    if is_wide(dt) {
        "vec2<u32>(0u, 0u)"
    } else {
        "0u"
    }
}

/// A WGSL expression turning the `u32` expression `value` (a non-negative
/// integer that fits `dt`) into a raw element of integer type `dt`.
pub fn raw_from_u32(dt: DataType, value: &str) -> String {
    if is_wide(dt) {
        format!("vec2<u32>({value}, 0u)")
    } else {
        value.to_string()
    }
}

/// A WGSL expression for raw element `e` of `dt` in a block of words held
/// in registers, `word(i)` the expression of the block's word `i`: two
/// words of a 64-bit element, one of a 32-bit one, a lane of an 8- or
/// 16-bit one (packed as in memory, low lanes first).
pub fn raw_in_words(dt: DataType, e: usize, word: &dyn Fn(usize) -> String) -> String {
    match (dt.size_bits() as usize, lane_mask(dt)) {
        (64, _) => format!("vec2<u32>({}, {})", word(2 * e), word(2 * e + 1)),
        (32, _) => word(e),
        (bits, Some(mask)) => {
            let lanes = 32 / bits;
            format!(
                "(({} >> {}u) & {mask})",
                word(e / lanes),
                (e % lanes) * bits
            )
        }
        _ => unreachable!("every data type is 8, 16, 32 or 64 bits"),
    }
}

/// The mask of a narrow type's bits within a word, `None` for 32 and 64 bits.
pub(crate) const fn lane_mask(dt: DataType) -> Option<&'static str> {
    match dt.size_bits() {
        8 => Some("0xffu"),
        16 => Some("0xffffu"),
        _ => None,
    }
}

/// `(elements per word as a shift, lane index mask, lane width in bits)` of a packed type.
pub(crate) const fn lane_geometry(dt: DataType) -> (u32, u32, u32) {
    match dt.size_bits() {
        8 => (2, 3, 8),
        _ => (1, 1, 16),
    }
}

/// Writes `fn {name}(i: u32) -> raw` reading raw element `i` of `buffer`
/// through its accessors ([`crate::wgsl::segments::gen_accessors`]).
pub fn gen_load_from(w: &mut Writer, name: &str, buffer: &Buffer, dt: DataType) {
    let word = |index: &str| buffer.word(index);
    w.open(format!("fn {name}(i: u32) -> {}", raw_type(dt)));
    match (dt.size_bits(), lane_mask(dt)) {
        (64, _) => {
            w.line(format!(
                "return vec2<u32>({}, {});",
                word("2u * i"),
                word("2u * i + 1u")
            ));
        }
        (32, _) => {
            w.line(format!("return {};", word("i")));
        }
        (_, Some(mask)) => {
            let (shift, lane, width) = lane_geometry(dt);
            w.line(format!(
                "return ({} >> ((i & {lane}u) * {width}u)) & {mask};",
                word(&format!("i >> {shift}u"))
            ));
        }
        _ => unreachable!("every data type is 8, 16, 32 or 64 bits"),
    }
    w.close();
}

/// Writes `fn {name}(i: u32, v: raw)` storing raw element `i` of `buffer`
/// through its accessors; `buffer.atomic` must be [`is_packed`]`(dt)`.
///
/// Narrow types clear their lane with `atomicAnd` and set it with
/// `atomicOr`, so threads writing neighbouring elements of one word never
/// race; other types store whole words.
pub fn gen_store_to(w: &mut Writer, name: &str, buffer: &Buffer, dt: DataType) {
    debug_assert_eq!(buffer.atomic, is_packed(dt), "{}", buffer.name);
    w.open(format!("fn {name}(i: u32, v: {})", raw_type(dt)));
    match (dt.size_bits(), lane_mask(dt)) {
        (64, _) => {
            w.line(buffer.set("2u * i", "v.x"));
            w.line(buffer.set("2u * i + 1u", "v.y"));
        }
        (32, _) => {
            w.line(buffer.set("i", "v"));
        }
        (_, Some(mask)) => {
            let (shift, lane, width) = lane_geometry(dt);
            w.line(format!("let word = i >> {shift}u;"));
            w.line(format!("let shift = (i & {lane}u) * {width}u;"));
            w.line(buffer.atomic("And", "word", &format!("~({mask} << shift)")));
            w.line(buffer.atomic("Or", "word", &format!("(v & {mask}) << shift")));
        }
        _ => unreachable!("every data type is 8, 16, 32 or 64 bits"),
    }
    w.close();
}

/// Where NaN sorts in a comparison key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NanKey {
    /// Key 0: below every number (NaN wins a minimum).
    Lowest,
    /// Key all ones: above every number (NaN wins a maximum).
    Highest,
}

/// Branch-free (`select`, non-short-circuit `&` and `|`), so that a loop
/// over elements has no divergent control flow.
///
/// Writes `fn {name}(v: raw) -> key`, mapping a raw element to an unsigned
/// key (the raw type: `u32`, or `vec2<u32>` `(lo, hi)` compared hi first, see
/// [`gen_key_less`]) whose unsigned order is the numeric order of `dt`.
///
/// - Unsigned integers and `BOOL` (0 or 1): the bits.
/// - Signed integers: the bits with the sign bit flipped (within the type's
///   width, which orders like sign-extending and flipping bit 31).
/// - Floats: `!bits` when the sign bit is set, else `bits | sign` (one
///   `xor` with the sign bit spread by an arithmetic shift); with
///   [`Zeros::Equal`] -0.0 first becomes +0.0, with [`Zeros::NegativeFirst`]
///   it keeps the key just below +0.0's. NaN (exponent all ones, mantissa
///   non-zero, either sign, any payload) gets the key `nan` says, so all NaNs
///   tie; no number gets that key.
pub fn gen_key(w: &mut Writer, name: &str, dt: DataType, zeros: Zeros, nan: NanKey) {
    let ty = raw_type(dt);
    w.open(format!("fn {name}(v: {ty}) -> {ty}"));
    let nan_word = match nan {
        NanKey::Lowest => "0u",
        NanKey::Highest => "0xffffffffu",
    };
    match dt {
        DataType::Uint8
        | DataType::Uint16
        | DataType::Uint32
        | DataType::Uint64
        | DataType::Bool => {
            w.line("return v;");
        }
        DataType::Int8 => {
            w.line("return v ^ 0x80u;");
        }
        DataType::Int16 => {
            w.line("return v ^ 0x8000u;");
        }
        DataType::Int32 => {
            w.line("return v ^ 0x80000000u;");
        }
        DataType::Int64 => {
            w.line("return vec2<u32>(v.x, v.y ^ 0x80000000u);");
        }
        DataType::Float16 | DataType::Float32 => {
            // The sign bit spread over the value's width: all ones for a
            // negative value (flip every bit), else just the sign (set it).
            let (sign, magnitude, inf, spread) = if dt == DataType::Float16 {
                ("0x8000u", "0x7fffu", "0x7c00u", "((b >> 15u) * 0x7fffu)")
            } else {
                (
                    "0x80000000u",
                    "0x7fffffffu",
                    "0x7f800000u",
                    "u32(i32(b) >> 31u)",
                )
            };
            if zeros == Zeros::Equal {
                w.line(format!("let b = select(v, 0u, v == {sign});"));
            } else {
                w.line("let b = v;");
            }
            w.line(format!("let k = b ^ ({spread} | {sign});"));
            w.line(format!(
                "return select(k, {nan_word}, (b & {magnitude}) > {inf});"
            ));
        }
        DataType::Float64 => {
            w.line("let lo = v.x;");
            if zeros == Zeros::Equal {
                w.line("let hi = select(v.y, 0u, (v.y == 0x80000000u) & (lo == 0u));");
            } else {
                w.line("let hi = v.y;");
            }
            w.line("let magnitude = hi & 0x7fffffffu;");
            w.line(
                "let nan = (magnitude > 0x7ff00000u) | ((magnitude == 0x7ff00000u) & (lo != 0u));",
            );
            w.line("let spread = u32(i32(hi) >> 31u);");
            w.line("let k = vec2<u32>(lo ^ spread, hi ^ (spread | 0x80000000u));");
            w.line(format!(
                "return select(k, vec2<u32>({nan_word}, {nan_word}), nan);"
            ));
        }
    }
    w.close();
}

/// True when [`gen_key`]'s key for `dt` under `zeros` is one word and one
/// to one on every value but NaN: equal keys are equal bits, so a selection
/// of values can keep the best key alone and turn it back into bits
/// ([`gen_unkey`]). Not for 64-bit types (two-word keys) nor for floats
/// whose zeros tie ([`Zeros::Equal`]).
pub fn key_inverts(dt: DataType, zeros: Zeros) -> bool {
    !is_wide(dt) && (!dt.is_float() || zeros == Zeros::NegativeFirst)
}

/// Writes `fn {name}(k: u32) -> u32`, the inverse of [`gen_key`] where
/// [`key_inverts`] holds: the raw bits whose key is `k`. A NaN's key gives
/// no NaN back: a caller that may meet NaNs must find their bits itself.
pub fn gen_unkey(w: &mut Writer, name: &str, dt: DataType) {
    debug_assert!(!is_wide(dt), "one-word keys only");
    w.open(format!("fn {name}(k: u32) -> u32"));
    match dt {
        DataType::Int8 => w.line("return k ^ 0x80u;"),
        DataType::Int16 => w.line("return k ^ 0x8000u;"),
        DataType::Int32 => w.line("return k ^ 0x80000000u;"),
        DataType::Float16 => {
            w.comment(
                "A set sign bit in the key: a positive value (sign set); else every bit flipped.",
            );
            w.line("return select(k ^ 0xffffu, k ^ 0x8000u, (k & 0x8000u) != 0u);")
        }
        DataType::Float32 => {
            w.comment(
                "A set sign bit in the key: a positive value (sign set); else every bit flipped.",
            );
            w.line("return select(~k, k ^ 0x80000000u, (k & 0x80000000u) != 0u);")
        }
        _ => w.line("return k;"),
    };
    w.close();
}

/// Writes `fn {name}(a: key, b: key) -> bool`: `a < b` as unsigned keys of
/// [`gen_key`] (two-word keys compare the high word, then the low word).
pub fn gen_key_less(w: &mut Writer, name: &str, dt: DataType) {
    let ty = raw_type(dt);
    w.open(format!("fn {name}(a: {ty}, b: {ty}) -> bool"));
    if is_wide(dt) {
        w.line("return (a.y < b.y) | ((a.y == b.y) & (a.x < b.x));");
    } else {
        w.line("return a < b;");
    }
    w.close();
}

/// Writes `fn {name}(v: raw index, n: u32) -> u32`: the position in
/// `[0, n)` index value `v` of type `index` selects in a dimension of size
/// `n` (signed values in `[-n, n)` count from the end when negative), or the
/// constant `bad` (which the module defines) for any other value. 64-bit
/// values are `(lo, hi)` word pairs compared exactly; 8- and 16-bit signed
/// values are sign-extended from their lane; unsigned (and, meaninglessly,
/// float) types are read as unsigned.
pub fn gen_resolve_index(w: &mut Writer, name: &str, index: DataType, bad: &str) {
    w.comment(format!(
        "The position {index} index value v selects in a dimension of size n, or {bad}."
    ));
    w.open(format!("fn {name}(v: {}, n: u32) -> u32", raw_type(index)));
    match (index.size_bits(), index.is_signed_int()) {
        (64, true) => {
            w.block("if (v.y == 0u)", |w| {
                w.block("if (v.x < n)", |w| {
                    w.line("return v.x;");
                });
                w.line(format!("return {bad};"));
            });
            w.comment("Negative: v = lo - 2^32, so -v = 2^32 - lo (lo = 0 is -2^32, too far).");
            w.block("if (v.y == 0xffffffffu && v.x != 0u)", |w| {
                w.line("let magnitude = 0u - v.x;");
                w.block("if (magnitude <= n)", |w| {
                    w.line("return n - magnitude;");
                });
            });
            w.line(format!("return {bad};"));
        }
        (64, false) => {
            w.block("if (v.y == 0u && v.x < n)", |w| {
                w.line("return v.x;");
            });
            w.line(format!("return {bad};"));
        }
        (bits, true) => {
            if bits == 32 {
                w.line("let s = bitcast<i32>(v);");
            } else {
                let shift = 32 - bits;
                w.comment("Sign-extend the lane.");
                w.line(format!("let s = bitcast<i32>(v << {shift}u) >> {shift}u;"));
            }
            w.block("if (s >= 0)", |w| {
                w.block("if (u32(s) < n)", |w| {
                    w.line("return u32(s);");
                });
                w.line(format!("return {bad};"));
            });
            w.comment("-s as u32, exact even for the most negative value.");
            w.line("let magnitude = 0u - bitcast<u32>(s);");
            w.block("if (magnitude <= n)", |w| {
                w.line("return n - magnitude;");
            });
            w.line(format!("return {bad};"));
        }
        (_, false) => {
            w.block("if (v < n)", |w| {
                w.line("return v;");
            });
            w.line(format!("return {bad};"));
        }
    }
    w.close();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn representations() {
        assert_eq!(raw_type(DataType::Float64), "vec2<u32>");
        assert_eq!(raw_type(DataType::Int8), "u32");
        assert_eq!(storage_type(DataType::Uint16, true), "array<atomic<u32>>");
        assert_eq!(storage_type(DataType::Uint16, false), "array<u32>");
        assert_eq!(storage_type(DataType::Int64, true), "array<u32>");
        assert_eq!(raw_from_u32(DataType::Uint64, "p"), "vec2<u32>(p, 0u)");
    }

    #[test]
    fn narrow_load_shifts_lanes() {
        let mut w = Writer::new();
        let x = Buffer::read("x", true);
        gen_load_from(&mut w, "load_x", &x, DataType::Int8);
        assert!(w
            .as_str()
            .contains("return (x_word(i >> 2u) >> ((i & 3u) * 8u)) & 0xffu;"));
        let mut w = Writer::new();
        let y = Buffer::read_write("y", true, true);
        gen_store_to(&mut w, "store_y", &y, DataType::Float16);
        assert!(w
            .as_str()
            .contains("y_atomic_or(word, (v & 0xffffu) << shift);"));
    }
}
