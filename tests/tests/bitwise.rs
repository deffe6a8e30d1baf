//! The bitwise operators and shifts of the arithmetic (`&`, `|`, `^`, `~`,
//! `<<`, `>>`) on the GPU and the CPU reference, against an independent
//! computation on the bits here:
//!
//! - every pair of 8-bit values, and every value with every count (0 to
//!   255) for the shifts;
//! - for the 16-, 32- and 64-bit types (64-bit values are word pairs on the
//!   GPU), edge values against edge values, and against every count from 0
//!   to the width + 1 and counts far beyond it (whose bits are shifted out:
//!   0).

use std::collections::BTreeMap;

use ops_core::{AttrValue, DataType, HostTensor, OpArgs, Operator, TensorDesc};
use ops_tests::{assert_bitwise_eq, gpu};

/// Builds the operator `namespace::name` over `tensors` (by tensor name).
fn build(
    namespace: &str,
    name: &str,
    tensors: &[(&str, &HostTensor)],
    attrs: &[(&str, AttrValue)],
) -> Box<dyn Operator> {
    let info = ops::catalog()
        .iter()
        .find(|i| i.namespace == namespace && i.name == name)
        .unwrap_or_else(|| panic!("no {namespace}::{name}"));
    let args = OpArgs {
        tensors: tensors
            .iter()
            .map(|(n, t)| (n.to_string(), t.desc().clone()))
            .collect::<BTreeMap<_, _>>(),
        attributes: attrs
            .iter()
            .map(|(n, v)| (n.to_string(), v.clone()))
            .collect(),
        ..OpArgs::default()
    };
    (info.build)(&args).unwrap_or_else(|e| panic!("{namespace}::{name}: {e}"))
}

/// A tensor of `dt` of the given shape holding `bits` (the low bits of each).
fn tensor(dt: DataType, sizes: &[u32], bits: &[u64]) -> HostTensor {
    let w = dt.size_bytes();
    let bytes: Vec<u8> = bits
        .iter()
        .flat_map(|b| b.to_le_bytes()[..w].to_vec())
        .collect();
    HostTensor::from_bytes(TensorDesc::new(dt, sizes.to_vec()), bytes).unwrap()
}

fn mask(dt: DataType) -> u64 {
    match dt.size_bits() {
        64 => u64::MAX,
        b => (1u64 << b) - 1,
    }
}

/// Edge values of an integer type, as bits: 0, 1, 2, the extremes of both
/// signednesses, alternating patterns, single high and low bits.
fn edges(dt: DataType) -> Vec<u64> {
    let bits = dt.size_bits();
    let m = mask(dt);
    let mut v = vec![
        0,
        1,
        2,
        3,
        m,
        m - 1,
        m >> 1,
        (m >> 1) + 1,
        0x5555_5555_5555_5555 & m,
        0xaaaa_aaaa_aaaa_aaaa & m,
        0x0123_4567_89ab_cdef & m,
        1 << (bits / 2),
        (1 << (bits / 2)) - 1,
    ];
    v.sort_unstable();
    v.dedup();
    v
}

/// Runs `op` on the GPU and the CPU, checks the two agree bit for bit and
/// that they give `want`.
fn check(op: &dyn Operator, inputs: &[&HostTensor], want: &HostTensor, context: &str) {
    let cpu = op
        .run_cpu(inputs)
        .unwrap_or_else(|e| panic!("{context}: cpu: {e}"));
    assert_bitwise_eq(&cpu[0], want, &format!("{context} (cpu)"));
    let got = gpu()
        .run(op, inputs)
        .unwrap_or_else(|e| panic!("{context}: gpu: {e}"));
    assert_bitwise_eq(&got[0], want, &format!("{context} (gpu)"));
}

/// A column of `a` against a row of `b`, as `[len(a), len(b)]` tensors, and
/// `f` of every pair.
fn pairs(
    dt: DataType,
    a: &[u64],
    b: &[u64],
    f: impl Fn(u64, u64) -> u64,
) -> (HostTensor, HostTensor, HostTensor) {
    let (n, k) = (a.len(), b.len());
    let mut x = Vec::with_capacity(n * k);
    let mut y = Vec::with_capacity(n * k);
    let mut want = Vec::with_capacity(n * k);
    for &p in a {
        for &q in b {
            x.push(p);
            y.push(q);
            want.push(f(p, q) & mask(dt));
        }
    }
    let s = [n as u32, k as u32];
    (
        tensor(dt, &s, &x),
        tensor(dt, &s, &y),
        tensor(dt, &s, &want),
    )
}

const INTS: [DataType; 8] = [
    DataType::Uint8,
    DataType::Int8,
    DataType::Uint16,
    DataType::Int16,
    DataType::Uint32,
    DataType::Int32,
    DataType::Uint64,
    DataType::Int64,
];

fn values(dt: DataType) -> Vec<u64> {
    if dt.size_bits() == 8 {
        (0..256).collect()
    } else {
        edges(dt)
    }
}

#[test]
fn and_or_xor_not_on_every_integer_type() {
    type BitOp = fn(u64, u64) -> u64;
    let ops: [(&str, BitOp); 3] = [
        ("BitwiseAnd", |a, b| a & b),
        ("BitwiseOr", |a, b| a | b),
        ("BitwiseXor", |a, b| a ^ b),
    ];
    for dt in INTS {
        let v = values(dt);
        for (name, f) in ops {
            let (a, b, want) = pairs(dt, &v, &v, f);
            let op = build("onnx", name, &[("a", &a), ("b", &b)], &[]);
            check(op.as_ref(), &[&a, &b], &want, &format!("{name} {dt}"));
        }
        let x = tensor(dt, &[v.len() as u32], &v);
        let want: Vec<u64> = v.iter().map(|&b| !b & mask(dt)).collect();
        let want = tensor(dt, &[v.len() as u32], &want);
        let op = build("onnx", "BitwiseNot", &[("x", &x)], &[]);
        check(op.as_ref(), &[&x], &want, &format!("BitwiseNot {dt}"));
    }
}

/// Counts 0 to the width + 1, and far beyond (their bits read unsigned).
fn counts(dt: DataType) -> Vec<u64> {
    if dt.size_bits() == 8 {
        return (0..256).collect();
    }
    let bits = u64::from(dt.size_bits());
    let mut c: Vec<u64> = (0..=bits + 1).collect();
    c.extend([bits * 2, 255, 256, 257, mask(dt), mask(dt) - 1]);
    c.extend([1u64 << 32, (1u64 << 32) + 1, 1u64 << 63].map(|x| x & mask(dt)));
    c.sort_unstable();
    c.dedup();
    c
}

#[test]
fn shifts_of_every_unsigned_type_by_every_count() {
    for dt in [
        DataType::Uint8,
        DataType::Uint16,
        DataType::Uint32,
        DataType::Uint64,
    ] {
        let bits = u64::from(dt.size_bits());
        let v = values(dt);
        let c = counts(dt);
        let shl = |a: u64, n: u64| if n >= bits { 0 } else { a << n };
        let shr = |a: u64, n: u64| if n >= bits { 0 } else { a >> n };
        for (direction, f) in [("LEFT", &shl as &dyn Fn(u64, u64) -> u64), ("RIGHT", &shr)] {
            let (x, y, want) = pairs(dt, &v, &c, f);
            let op = build(
                "onnx",
                "BitShift",
                &[("x", &x), ("y", &y)],
                &[("direction", AttrValue::Enum(direction.into()))],
            );
            check(
                op.as_ref(),
                &[&x, &y],
                &want,
                &format!("BitShift {direction} {dt}"),
            );
            // The DirectML operators compute the same.
            let name = if direction == "LEFT" {
                "ElementWiseBitShiftLeft"
            } else {
                "ElementWiseBitShiftRight"
            };
            let op = build("", name, &[("a", &x), ("b", &y)], &[]);
            check(op.as_ref(), &[&x, &y], &want, &format!("{name} {dt}"));
        }
    }
}
