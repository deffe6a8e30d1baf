//! Valid descriptors, drawn from an operator's [`OperatorInfo`]: a
//! shrinkable "genome" of choices, realised into [`OpArgs`], built and kept
//! when `validate` accepts it at the drawn level.

use std::fmt;
use std::sync::Arc;

use proptest::prelude::*;
use proptest::strategy::{NewTree, ValueTree};
use proptest::test_runner::TestRunner;

use super::data::{
    data_tensor, host_tensor, hostile_tensor, index_tensor, random_layout, same_sign_tensor,
    IndexMode, Rng,
};
use crate::support::SupportEntry;
use crate::{
    AttrKind, AttrValue, DataType, FeatureLevel, HostTensor, OpArgs, Operator, OperatorInfo,
    TensorDesc,
};

/// Attempts [`ValidCases`] makes to find one valid descriptor before it
/// gives up (acceptance is above 5% for every catalog operator, so giving up
/// means the spec's rules and tables admit almost nothing).
pub const MAX_ATTEMPTS: usize = 2000;

/// Upper bound on the elements of the shared base shape (unless a
/// dimension is drawn large).
const BASE_ELEMENTS: u64 = 1024;
/// Upper bound on the elements of all tensors of a case together, for the
/// strategies tests use ([`ValidCases::max_elements`] changes it).
pub const CASE_ELEMENTS: u64 = 1 << 17;
/// The bound `ops fuzz` uses: a case of this many elements runs in well
/// under a second on lavapipe.
pub const FUZZ_ELEMENTS: u64 = 1 << 20;
/// One genome in this many draws a large dimension.
const LARGE_ONE_IN: f64 = 8.0;
/// The smallest large dimension (a power of two: 2^`LARGE_MIN_LOG2`).
const LARGE_MIN_LOG2: u32 = 10;
/// The largest large dimension is below 2^(`LARGE_MAX_LOG2` + 1), and within
/// the case's bound.
const LARGE_MAX_LOG2: u32 = 17;

/// A change a tensor's shape makes to the shared base shape.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Mutation {
    /// The base shape as it is.
    Same,
    /// The shape of an earlier input.
    CopyOf(u8),
    /// The first `k` dimensions set to 1.
    LeadingOnes(u8),
    /// One dimension set to a size (0 now and then).
    Change(u8, u32),
    /// Dimensions in a bit mask set to 1.
    OnesMask(u8),
    /// Shifted right by `k` with leading 1s (right-aligned shapes).
    ShiftRight(u8),
    /// The first `k` dimensions removed (another rank).
    Truncate(u8),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        40 => Just(Mutation::Same),
        15 => any::<u8>().prop_map(Mutation::CopyOf),
        15 => any::<u8>().prop_map(Mutation::LeadingOnes),
        15 => (any::<u8>(), prop_oneof![9 => 1u32..=6, 1 => Just(0u32)])
            .prop_map(|(d, s)| Mutation::Change(d, s)),
        8 => any::<u8>().prop_map(Mutation::OnesMask),
        7 => any::<u8>().prop_map(Mutation::ShiftRight),
        3 => any::<u8>().prop_map(Mutation::Truncate),
    ]
}

/// Choices for a list of axes (a list attribute or a host tensor's values).
#[derive(Clone, Copy, Debug)]
pub(crate) struct ListGene {
    len: u8,
    empty: bool,
    negative: u8,
    use_negative: bool,
    perm: u64,
}

fn list_gene() -> impl Strategy<Value = ListGene> {
    (
        any::<u8>(),
        prop::bool::weighted(0.05),
        any::<u8>(),
        prop::bool::weighted(0.3),
        any::<u64>(),
    )
        .prop_map(|(len, empty, negative, use_negative, perm)| ListGene {
            len,
            empty,
            negative,
            use_negative,
            perm,
        })
}

/// Choices for one tensor.
#[derive(Clone, Copy, Debug)]
pub(crate) struct TensorGene {
    share: bool,
    dtype: u8,
    rank: u8,
    first: Mutation,
    second: Mutation,
    list: ListGene,
}

/// Choices for one attribute.
#[derive(Clone, Copy, Debug)]
pub(crate) struct AttrGene {
    omit: bool,
    mode: u8,
    value: u8,
    list: ListGene,
}

/// One dimension of the base shape made large: which (modulo the rank) and
/// its size, 2^`log2` plus `extra` modulo 2^`log2`, so that sizes from a
/// thousand to a few hundred thousand, powers of two or not, come up alike.
#[derive(Clone, Copy, Debug)]
pub(crate) struct LargeGene {
    dim: u8,
    log2: u32,
    extra: u32,
}

impl LargeGene {
    fn size(&self) -> u64 {
        let p = 1u64 << self.log2;
        p + u64::from(self.extra) % p
    }
}

/// Every choice behind one case. Each field shrinks toward the simplest
/// case: the first entry, the lowest rank, sizes of 1, shapes unchanged, no
/// large dimension (a large one first toward 2^`LARGE_MIN_LOG2`).
#[derive(Clone, Debug)]
pub(crate) struct Genome {
    entry: u8,
    level: u8,
    small_rank: bool,
    rank: u8,
    base: Vec<u32>,
    large: Option<LargeGene>,
    tensors: Vec<TensorGene>,
    attrs: Vec<AttrGene>,
    data_seed: u64,
}

fn max_rank(info: &OperatorInfo) -> usize {
    info.table
        .entries
        .iter()
        .flat_map(|e| {
            std::iter::once(e.ranks.1).chain(e.tensors.iter().filter_map(|r| r.ranks.map(|r| r.1)))
        })
        .max()
        .unwrap_or(8)
        .max(1) as usize
}

pub(crate) fn genome(info: &'static OperatorInfo) -> BoxedStrategy<Genome> {
    let size = prop_oneof![35 => Just(1u32), 35 => 2u32..=3, 25 => 4u32..=6, 2 => Just(0u32)];
    let tensor = (
        prop::bool::weighted(0.7),
        any::<u8>(),
        any::<u8>(),
        mutation(),
        prop_oneof![70 => Just(Mutation::Same), 30 => mutation()],
        list_gene(),
    )
        .prop_map(|(share, dtype, rank, first, second, list)| TensorGene {
            share,
            dtype,
            rank,
            first,
            second,
            list,
        });
    let large = (any::<u8>(), LARGE_MIN_LOG2..=LARGE_MAX_LOG2, any::<u32>())
        .prop_map(|(dim, log2, extra)| LargeGene { dim, log2, extra });
    let attr = (
        prop::bool::weighted(0.4),
        any::<u8>(),
        any::<u8>(),
        list_gene(),
    )
        .prop_map(|(omit, mode, value, list)| AttrGene {
            omit,
            mode,
            value,
            list,
        });
    (
        any::<u8>(),
        any::<u8>(),
        prop::bool::weighted(0.5),
        any::<u8>(),
        prop::collection::vec(size, max_rank(info)),
        prop::option::weighted(1.0 / LARGE_ONE_IN, large),
        prop::collection::vec(tensor, info.tensors.len()),
        prop::collection::vec(attr, info.attrs.len()),
        any::<u64>(),
    )
        .prop_map(
            |(entry, level, small_rank, rank, base, large, tensors, attrs, data_seed)| Genome {
                entry,
                level,
                small_rank,
                rank,
                base,
                large,
                tensors,
                attrs,
                data_seed,
            },
        )
        .boxed()
}

/// One valid call of an operator: the descriptor, the level it was drawn
/// for (it validates there), the arguments that built it, and input data.
#[derive(Clone)]
pub struct ValidCase {
    /// The operator.
    pub info: &'static OperatorInfo,
    /// The level the descriptor was drawn for and validates at.
    pub level: FeatureLevel,
    /// The arguments `info.build` made the descriptor from (outputs left
    /// to inference, unless their data type had to be given).
    pub args: OpArgs,
    /// The descriptor.
    pub op: Arc<dyn Operator>,
    /// Input data, in spec order (host tensors hold the descriptor's values).
    pub inputs: Vec<HostTensor>,
    /// Some index value is out of range: both backends must fail with the
    /// same [`crate::OpError::IndexOutOfRange`].
    pub expect_index_error: bool,
    /// The data tensors hold hostile values ([`super::hostile_tensor`]),
    /// whatever the accuracy contract: a ULP contract is then checked as
    /// [`super::compare_hostile`] says.
    pub hostile: bool,
}

impl ValidCase {
    /// The inputs as the `&[&HostTensor]` that `run_cpu` takes.
    pub fn input_refs(&self) -> Vec<&HostTensor> {
        self.inputs.iter().collect()
    }

    /// The data type of every tensor, inputs then outputs, in spec order.
    pub fn dtypes(&self) -> Vec<DataType> {
        self.op
            .input_descs()
            .iter()
            .chain(self.op.output_descs().iter())
            .map(|d| d.dtype)
            .collect()
    }

    /// The rank of the first input (the rank the table entry constrains).
    pub fn rank(&self) -> usize {
        self.op.input_descs().first().map_or(0, |d| d.rank())
    }

    /// The support-table entry the case was drawn from (its level, or
    /// `None` for operators without levels).
    pub fn entry_level(&self) -> Option<FeatureLevel> {
        self.info
            .table
            .entry(self.level, self.info.table.member_of(&self.args))
            .and_then(|e| e.level)
    }
}

impl fmt::Debug for ValidCase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{} at feature level {}: {:?}",
            self.info.name, self.level, self.op
        )?;
        for (name, t) in self.info.inputs.iter().zip(&self.inputs) {
            writeln!(f, "  {name}: {}", describe_tensor(t))?;
        }
        if self.expect_index_error {
            writeln!(f, "  (some index is out of range)")?;
        }
        if self.hostile {
            writeln!(f, "  (hostile values)")?;
        }
        Ok(())
    }
}

/// `FLOAT32 [2, 3] = [bits, ...]`: the elements as raw hexadecimal words
/// (exact, NaN payloads included), the first 64 of them.
pub fn describe_tensor(t: &HostTensor) -> String {
    let w = t.dtype().size_bytes();
    let words: Vec<String> = t
        .bytes()
        .chunks(w)
        .take(64)
        .map(|c| {
            let mut b = [0u8; 8];
            b[..w].copy_from_slice(c);
            format!("{:#0width$x}", u64::from_le_bytes(b), width = 2 + 2 * w)
        })
        .collect();
    let more = if t.len() > 64 {
        format!(", ... ({} elements)", t.len())
    } else {
        String::new()
    };
    format!(
        "{} {:?} = [{}{more}]",
        t.dtype(),
        t.sizes(),
        words.join(", ")
    )
}

/// What realising a genome needs to know beyond the genome, to aim at one
/// cell of the coverage table (`ops fuzz`); every field is optional. A drawn
/// case that misses the aim (another rank of the first input, an inferred
/// output of another data type) is rejected.
#[derive(Clone, Debug, Default)]
pub struct Aim {
    /// The table entry, by index (highest level first).
    pub entry: Option<usize>,
    /// The rank of the shared base shape.
    pub rank: Option<usize>,
    /// A data type per tensor, inputs then outputs.
    pub dtypes: Option<Vec<DataType>>,
}

fn pick<T: Copy>(items: &[T], k: u64) -> T {
    items[(k % items.len() as u64) as usize]
}

fn entry_levels(info: &OperatorInfo, idx: usize) -> Vec<FeatureLevel> {
    let entries = info.table.entries;
    let Some(low) = entries[idx].level else {
        return vec![FeatureLevel::HIGHEST];
    };
    // Entries are highest level first: the next higher one of the same
    // selector members is the nearest before.
    let high = entries[..idx]
        .iter()
        .rev()
        .find(|e| e.when == entries[idx].when)
        .and_then(|e| e.level)
        .unwrap_or(FeatureLevel::new(u8::MAX, 0));
    let low = info.introduced.map_or(low, |i| i.max(low));
    let levels: Vec<FeatureLevel> = FeatureLevel::ALL
        .into_iter()
        .filter(|&l| l >= low && l < high)
        .collect();
    if levels.is_empty() {
        vec![low]
    } else {
        levels
    }
}

fn apply(m: Mutation, shape: &mut Vec<u32>, earlier: &[Vec<u32>]) {
    let r = shape.len();
    match m {
        Mutation::Same => {}
        Mutation::CopyOf(k) => {
            if !earlier.is_empty() {
                *shape = earlier[k as usize % earlier.len()].clone();
            }
        }
        Mutation::LeadingOnes(k) => {
            let k = k as usize % (r + 1);
            shape[..k].iter_mut().for_each(|s| *s = 1);
        }
        Mutation::Change(d, s) => {
            if r > 0 {
                shape[d as usize % r] = s;
            }
        }
        Mutation::OnesMask(mask) => {
            for (d, s) in shape.iter_mut().enumerate() {
                if mask & (1 << (d % 8)) != 0 {
                    *s = 1;
                }
            }
        }
        Mutation::ShiftRight(k) => {
            let k = k as usize % (r + 1);
            let mut out = vec![1; k];
            out.extend_from_slice(&shape[..r - k]);
            *shape = out;
        }
        Mutation::Truncate(k) => {
            let k = k as usize % (r + 1);
            shape.drain(..k);
        }
    }
}

/// Axes for a list: a shuffled subset of `0..rank`, some written negative.
fn list_values(g: &ListGene, rank: usize, signed: bool, exact_len: Option<usize>) -> Vec<i128> {
    let mut rng = Rng::new(g.perm);
    let mut all: Vec<i128> = (0..rank as i128).collect();
    rng.shuffle(&mut all);
    let len = match exact_len {
        Some(n) => n,
        None if g.empty || rank == 0 => 0,
        // Now and then two values per dimension (a pad's begins and
        // ends), the permutation twice.
        None if g.len >= 224 => 2 * (1 + g.len as usize % rank),
        None => 1 + g.len as usize % rank,
    };
    let mut out: Vec<i128> = all
        .iter()
        .copied()
        .cycle()
        .take(len.min(2 * rank))
        .collect();
    while out.len() < len {
        out.push(0);
    }
    if signed && g.use_negative {
        for (i, v) in out.iter_mut().enumerate() {
            if g.negative & (1 << (i % 8)) != 0 {
                *v -= rank as i128;
            }
        }
    }
    out
}

/// A list attribute: half the time (`len` in 96..224) one value per
/// dimension of the first tensor, `sizes` (a DirectML window's offsets,
/// sizes and strides, a tile's repeats, a padding's starts and ends):
/// all 1, all 0, the tensor's sizes, each in `[0, size]`, each in 1..=3,
/// or (signed) each in ±1..=3. Otherwise axes ([`list_values`]).
fn attr_list(g: &ListGene, rank: usize, signed: bool, sizes: &[u32]) -> Vec<i128> {
    if !(96..224).contains(&g.len) || g.empty {
        return list_values(g, rank, signed, None);
    }
    let mut rng = Rng::new(g.perm);
    let size = |d: usize| i128::from(sizes.get(d).copied().unwrap_or(1));
    let forms = if signed { 6 } else { 5 };
    let form = g.negative % forms;
    (0..rank)
        .map(|d| match form {
            0 => 1,
            1 => 0,
            2 => size(d),
            3 => i128::from(rng.below(size(d) as u64 + 1)),
            4 => 1 + i128::from(rng.below(3)),
            _ => {
                let v = 1 + i128::from(rng.below(3));
                if rng.chance(1, 2) {
                    -v
                } else {
                    v
                }
            }
        })
        .collect()
}

fn attr_int(g: &AttrGene, rank: usize, signed: bool) -> i128 {
    let r = rank as i128;
    match g.mode % 20 {
        0..=3 => r,
        4..=6 => (r - 1).max(0),
        7..=10 => 1,
        11..=12 => 0,
        13 if signed => -1 - (i128::from(g.value) % r.max(1)),
        _ => i128::from(g.value) % (r + 1),
    }
}

/// A caller-described (`given`) output drawn as its part of a cut: most of
/// the time the outputs of one declaration tile the first input along one
/// dimension (DirectML's SPLIT describes its outputs so), each one part of
/// a cut of that dimension's extent. The group's first tensor gene holds
/// the choices (whether to cut, the dimension, the cut's seed), so the
/// group agrees. `None`: draw the shape as an input's.
fn cut_part(
    info: &OperatorInfo,
    g: &Genome,
    tensor: usize,
    source: Option<&Vec<u32>>,
) -> Option<Vec<u32>> {
    let (first, n) = info.group_of(tensor);
    let gene = g.tensors.get(first)?;
    let source = source?;
    if gene.list.len >= 192 || source.is_empty() {
        return None;
    }
    let d = gene.rank as usize % source.len();
    let extent = u64::from(source[d]);
    let mut rng = Rng::new(gene.list.perm);
    // Cut points in [0, extent]: distinct and inside when the extent allows
    // parts of at least 1, else anywhere (empty parts).
    let mut cuts: Vec<u64> = if extent >= n as u64 {
        let mut inner: Vec<u64> = Vec::new();
        while inner.len() + 1 < n {
            let c = 1 + rng.below(extent - 1);
            if !inner.contains(&c) {
                inner.push(c);
            }
        }
        inner
    } else {
        (1..n).map(|_| rng.below(extent + 1)).collect()
    };
    cuts.sort_unstable();
    let k = tensor - first;
    let lo = if k == 0 { 0 } else { cuts[k - 1] };
    let hi = cuts.get(k).copied().unwrap_or(extent);
    let mut shape = source.clone();
    shape[d] = (hi - lo) as u32;
    Some(shape)
}

/// Why a drawn genome gave no valid case.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reject {
    /// The aim cannot be met by this genome (wrong table, ...).
    Aim,
    /// `build` failed.
    Build(String),
    /// `validate` failed at the level, with this rule.
    Invalid(String),
    /// The tensors would be too large for a quick run.
    TooLarge,
}

/// The descriptor of a genome, without input data.
pub(crate) struct Drawn {
    pub level: FeatureLevel,
    pub args: OpArgs,
    pub op: Box<dyn Operator>,
}

/// Rule-guided repairs [`draw`] makes before giving up on a genome.
pub const REPAIRS: usize = 6;

fn mutation_from(rng: &mut Rng) -> Mutation {
    let a = rng.next_u64() as u8;
    match rng.below(103) {
        0..=39 => Mutation::Same,
        40..=54 => Mutation::CopyOf(a),
        55..=69 => Mutation::LeadingOnes(a),
        70..=84 => Mutation::Change(a, 1 + rng.below(6) as u32),
        85..=92 => Mutation::OnesMask(a),
        93..=99 => Mutation::ShiftRight(a),
        _ => Mutation::Truncate(a),
    }
}

fn list_gene_from(rng: &mut Rng) -> ListGene {
    ListGene {
        len: rng.next_u64() as u8,
        empty: rng.chance(1, 20),
        negative: rng.next_u64() as u8,
        use_negative: rng.chance(3, 10),
        perm: rng.next_u64(),
    }
}

/// Re-draws one genome component that `rule` (the rule `validate`
/// blamed) reads: an attribute, or a tensor's shape mutations, data type
/// or values. False when the rule reads nothing the genome controls.
fn repair(info: &OperatorInfo, g: &mut Genome, rule: &str, rng: &mut Rng) -> bool {
    let Some(reads) = super::rules::reads_of(info, rule) else {
        return false;
    };
    let bit = |bits: u64, i: usize| i < 64 && bits & (1 << i) != 0;
    // (is_attr, index, what): what 0 = shape, 1 = dtype, 2 = values.
    let mut candidates: Vec<(bool, usize, u8)> = Vec::new();
    for a in 0..info.attrs.len() {
        if bit(reads.attrs, a) {
            candidates.push((true, a, 0));
        }
    }
    for (t, ti) in info.tensors.iter().enumerate() {
        if ti.output && !info.is_given(t) {
            continue;
        }
        if bit(reads.rank | reads.sizes, t) && !ti.host {
            candidates.push((false, t, 0));
        }
        if bit(reads.dtype, t) {
            candidates.push((false, t, 1));
        }
        if bit(reads.values, t) {
            candidates.push((false, t, 2));
        }
    }
    if candidates.is_empty() {
        return false;
    }
    let (is_attr, i, what) = candidates[rng.below(candidates.len() as u64) as usize];
    if is_attr {
        let a = &mut g.attrs[i];
        a.omit = rng.chance(2, 5);
        a.mode = rng.next_u64() as u8;
        a.value = rng.next_u64() as u8;
        a.list = list_gene_from(rng);
    } else {
        let t = &mut g.tensors[i];
        match what {
            0 => {
                t.first = mutation_from(rng);
                t.second = if rng.chance(7, 10) {
                    Mutation::Same
                } else {
                    mutation_from(rng)
                };
                if info.is_given(i) {
                    // The group's cut ([`cut_part`]): another dimension
                    // and cut, or none.
                    let first = &mut g.tensors[info.group_of(i).0];
                    first.rank = rng.next_u64() as u8;
                    first.list = list_gene_from(rng);
                }
            }
            1 => {
                t.share = rng.chance(7, 10);
                t.dtype = rng.next_u64() as u8;
            }
            _ => t.list = list_gene_from(rng),
        }
    }
    true
}

/// Realises a genome into a descriptor valid at its level: when `validate`
/// blames a rule, re-draws something that rule reads (up to [`REPAIRS`]
/// times, from the genome's data seed, so the result is deterministic).
pub(crate) fn draw(
    info: &'static OperatorInfo,
    g: &Genome,
    aim: &Aim,
    limit: u64,
) -> Result<Drawn, Reject> {
    let first = draw_once(info, g, aim, limit);
    let Err(Reject::Invalid(mut rule)) = first else {
        return first;
    };
    let mut g = g.clone();
    let mut rng = Rng::new(g.data_seed ^ 0x0005_EED0_F0E1_2E9A);
    for _ in 0..REPAIRS {
        if !repair(info, &mut g, &rule, &mut rng) {
            break;
        }
        match draw_once(info, &g, aim, limit) {
            Err(Reject::Invalid(r)) => rule = r,
            other => return other,
        }
    }
    Err(Reject::Invalid(rule))
}

/// [`draw`] without repairs; `limit` bounds the elements of all tensors.
fn draw_once(
    info: &'static OperatorInfo,
    g: &Genome,
    aim: &Aim,
    limit: u64,
) -> Result<Drawn, Reject> {
    let entries = info.table.entries;
    let (entry_idx, entry): (usize, Option<&SupportEntry>) = if entries.is_empty() {
        (0, None)
    } else {
        let i = aim
            .entry
            .unwrap_or(g.entry as usize % entries.len())
            .min(entries.len() - 1);
        (i, Some(&entries[i]))
    };
    let level = match entry {
        Some(_) => pick(&entry_levels(info, entry_idx), g.level.into()),
        None => FeatureLevel::HIGHEST,
    };
    let (lo, hi) = entry.map_or((0, 8), |e| (e.ranks.0 as usize, e.ranks.1 as usize));
    let span = (hi - lo + 1) as u64;
    let rank = aim.rank.unwrap_or_else(|| {
        if g.small_rank {
            lo + (u64::from(g.rank) % span.min(3)) as usize
        } else {
            lo + (u64::from(g.rank) % span) as usize
        }
    });
    if rank < lo || rank > hi {
        return Err(Reject::Aim);
    }
    let mut base: Vec<u32> = g.base.iter().copied().cycle().take(rank).collect();
    // A large dimension: the others shrink so that every tensor of the
    // case can hold the base shape within the bound.
    let (large, cap) = match g.large {
        Some(l) if rank > 0 => {
            let tensors = info.tensors.iter().filter(|t| !t.host).count().max(1) as u64;
            let cap = (limit / tensors).max(1);
            let d = l.dim as usize % rank;
            base[d] = l.size().min(cap) as u32;
            (Some(d), cap)
        }
        _ => (None, BASE_ELEMENTS),
    };
    while base.iter().map(|&s| u64::from(s)).product::<u64>() > cap {
        let Some(m) = (0..base.len())
            .filter(|&d| Some(d) != large && base[d] > 1)
            .max_by_key(|&d| base[d])
        else {
            break;
        };
        base[m] /= 2;
    }

    let mut args = OpArgs::default();
    let mut chosen: Vec<DataType> = Vec::new();
    let mut shapes: Vec<Vec<u32>> = Vec::new();
    for (i, (t, tg)) in info.tensors.iter().zip(&g.tensors).enumerate() {
        let row = entry.and_then(|e| e.tensors.iter().find(|r| r.tensor == i));
        let dtypes: &[DataType] = row.map_or(&DataType::ALL, |r| r.dtypes);
        let dtype = match &aim.dtypes {
            Some(d) => match d.get(i) {
                Some(&d) if dtypes.contains(&d) => d,
                _ => return Err(Reject::Aim),
            },
            None => {
                let shared: Vec<DataType> = chosen
                    .iter()
                    .copied()
                    .filter(|d| dtypes.contains(d))
                    .collect();
                if tg.share && !shared.is_empty() {
                    if tg.dtype < 192 {
                        shared[0]
                    } else {
                        pick(&shared, tg.dtype.into())
                    }
                } else {
                    pick(dtypes, tg.dtype.into())
                }
            }
        };
        chosen.push(dtype);
        let (tlo, thi) = row
            .and_then(|r| r.ranks)
            .map_or((lo, hi), |(a, b)| (a as usize, b as usize));
        let trank = if (tlo..=thi).contains(&rank) && !t.host {
            rank
        } else {
            tlo + (tg.rank as usize % (thi - tlo + 1))
        };
        let given = info.is_given(i);
        if t.output && !given {
            args.output_dtypes.insert(t.name.to_string(), dtype);
            continue;
        }
        if t.host {
            let exact = (trank == 0).then_some(1);
            let values = list_values(&tg.list, rank, dtype.is_signed_int(), exact);
            let mut sizes = vec![1u32; trank.saturating_sub(1)];
            if trank > 0 {
                sizes.push(values.len() as u32);
            }
            let data = host_tensor(dtype, &sizes, &values);
            args.host_data.insert(t.name.to_string(), data);
            continue;
        }
        let mut shape: Vec<u32> = base.iter().copied().chain([1; 8]).take(trank).collect();
        if trank > rank {
            // The row wants more dimensions than the base: leading 1s.
            shape = vec![1; trank - rank];
            shape.extend_from_slice(&base);
        }
        apply(tg.first, &mut shape, &shapes);
        apply(tg.second, &mut shape, &shapes);
        if given {
            if let Some(part) = cut_part(info, g, i, shapes.first()) {
                shape = part;
            }
        }
        shapes.push(shape.clone());
        args.tensors
            .insert(t.name.to_string(), TensorDesc::new(dtype, shape));
    }
    // An entry for some members of the selector attribute draws one of them.
    let selected = info.table.selector.as_ref().and_then(|sel| {
        let when = entry.map_or(&[][..], |e| e.when);
        (!when.is_empty()).then_some((sel.attr, when))
    });
    for (ai, (a, ag)) in info.attrs.iter().zip(&g.attrs).enumerate() {
        if let (Some((sel, when)), AttrKind::Enum(members)) = (selected, a.kind) {
            if sel == ai {
                let m = pick(when, ag.value.into()) as usize;
                args.attributes
                    .insert(a.name.to_string(), AttrValue::Enum(members[m].to_string()));
                continue;
            }
        }
        if a.has_default && ag.omit {
            continue;
        }
        let v = match a.kind {
            AttrKind::Int { signed } => AttrValue::Int(attr_int(ag, rank, signed)),
            AttrKind::List { signed } => AttrValue::Ints(attr_list(
                &ag.list,
                rank,
                signed,
                shapes.first().map_or(&[][..], |s| &s[..]),
            )),
            AttrKind::Bool => AttrValue::Bool(ag.value & 1 == 1),
            // Non-negative, as the magnitudes of ULP-contract data: a
            // negative attribute added to a positive sum cancels, which no
            // ULP bound survives (an RMS's epsilon of -1 over a mean of
            // squares near 1 missed its bound by 99 ULP).
            AttrKind::Float => AttrValue::Float(pick(
                &[0.0, 1.0, 0.5, 0.00001, 2.0, 0.25, 0.1, 3.0],
                ag.value.into(),
            )),
            // A number of a tensor's type: integers at and beyond every
            // type's edges (2^53 + 1 and the 64-bit extremes: the exact
            // bounds of a DML_SCALAR_UNION), or floats.
            AttrKind::Number => {
                const INTS: [i128; 12] = [
                    0,
                    1,
                    -1,
                    100,
                    -129,
                    300,
                    (1 << 24) + 1,
                    (1 << 53) + 1,
                    -(1 << 53) - 1,
                    i64::MIN as i128,
                    i64::MAX as i128,
                    u64::MAX as i128,
                ];
                const FLOATS: [f64; 8] = [0.0, -0.0, 0.5, -2.5, 65504.0, 1e10, 0.1, -1e-7];
                if ag.mode % 2 == 0 {
                    AttrValue::Int(pick(&INTS, ag.value.into()))
                } else {
                    AttrValue::Float(pick(&FLOATS, ag.value.into()))
                }
            }
            AttrKind::Enum(members) => AttrValue::Enum(pick(members, ag.value.into()).to_string()),
        };
        args.attributes.insert(a.name.to_string(), v);
    }

    // Outputs are inferred; their data type too when a rule gives it.
    let dtypes = std::mem::take(&mut args.output_dtypes);
    let op = match (info.build)(&args) {
        Ok(op) => op,
        Err(_) => {
            args.output_dtypes = dtypes;
            (info.build)(&args).map_err(|e| Reject::Build(e.to_string()))?
        }
    };
    if let Err(e) = op.validate(level) {
        return Err(Reject::Invalid(e.rule));
    }
    // An aimed draw must land in its cell: the first input's rank and every
    // tensor's data type (outputs included, which rules may infer).
    let descs: Vec<TensorDesc> = op
        .input_descs()
        .into_iter()
        .chain(op.output_descs())
        .collect();
    if aim
        .rank
        .is_some_and(|r| descs.first().map(TensorDesc::rank) != Some(r))
    {
        return Err(Reject::Aim);
    }
    if let Some(want) = &aim.dtypes {
        if descs.iter().map(|d| d.dtype).ne(want.iter().copied()) {
            return Err(Reject::Aim);
        }
    }
    let total: u64 = op
        .input_descs()
        .iter()
        .chain(op.output_descs().iter())
        .map(|d| d.element_count().unwrap_or(u64::MAX))
        .fold(0u64, u64::saturating_add);
    if total > limit {
        return Err(Reject::TooLarge);
    }
    Ok(Drawn { level, args, op })
}

/// For an operator that reads strided inputs, a third of the time: each
/// device input laid out at random ([`random_layout`]), the descriptor
/// rebuilt from the new arguments (kept only if it still validates).
fn lay_out(info: &'static OperatorInfo, d: &mut Drawn, seed: u64) {
    let mut rng = Rng::new(seed ^ 0x57A1_DE5C_0FFE_E000);
    if !info.strided_inputs || rng.below(3) != 0 {
        return;
    }
    let mut args = d.args.clone();
    for t in info.tensors.iter().filter(|t| !t.output && !t.host) {
        if let Some(desc) = args.tensors.get_mut(t.name) {
            if let Some(s) = random_layout(&desc.sizes, &mut rng) {
                *desc = desc.clone().with_strides(s);
            }
        }
    }
    if let Ok(op) = (info.build)(&args) {
        if op.validate(d.level).is_ok() {
            d.args = args;
            d.op = op;
        }
    }
}

/// Input data for a drawn descriptor, from the genome's data seed (one
/// generator per tensor, so that shrinking one tensor's shape leaves the
/// others' data alone); a strided input's buffer holds data for every
/// element it spans.
///
/// With `hostile_one_in` above 0, one case in that many (drawn from the
/// seed) is hostile: its data tensors are [`hostile_tensor`]s.
pub(crate) fn with_data(
    info: &'static OperatorInfo,
    mut d: Drawn,
    seed: u64,
    hostile_one_in: u32,
) -> ValidCase {
    lay_out(info, &mut d, seed);
    let hostile = hostile_one_in > 0
        && Rng::new(seed ^ 0x4057_11E0_0BAD_F00D).below(hostile_one_in.into()) == 0;
    let bounds = d.op.index_bounds();
    let ulp_contract = matches!(d.op.tolerance(), crate::Tolerance::Ulp(_));
    let mut expect_index_error = false;
    let descs = d.op.input_descs();
    let inputs: Vec<HostTensor> = info
        .tensors
        .iter()
        .filter(|t| !t.output)
        .zip(&descs)
        .enumerate()
        .map(|(i, (t, desc))| {
            let mut rng = Rng::new(seed ^ (i as u64 + 1).wrapping_mul(0xA24B_AED4_963E_E407));
            if t.host {
                if let Some(h) = d.args.host_data.get(t.name) {
                    return h.clone();
                }
            }
            match bounds.iter().find(|b| b.tensor == i) {
                Some(b) => {
                    let mode = match rng.below(20) {
                        0..=10 => IndexMode::InRange,
                        11..=16 => IndexMode::Colliding,
                        _ => IndexMode::OutOfRange,
                    };
                    let (t, bad) = index_tensor(desc.dtype, &desc.sizes, b, mode, &mut rng);
                    expect_index_error |= bad && b.out_of_range == crate::OutOfRange::Error;
                    t
                }
                None => {
                    // A strided tensor's buffer, as a 1-D tensor of the
                    // elements it spans, then described by its strides.
                    let sizes = match desc.strides {
                        Some(_) => vec![desc.buffer_elements().unwrap_or(0) as u32],
                        None => desc.sizes.clone(),
                    };
                    let t = if hostile {
                        hostile_tensor(desc.dtype, &sizes, &mut rng)
                    } else if ulp_contract && desc.dtype.is_float() {
                        same_sign_tensor(desc.dtype, &sizes, d.op.accuracy_domain(), &mut rng)
                    } else {
                        data_tensor(desc.dtype, &sizes, &mut rng)
                    };
                    match desc.strides {
                        Some(_) => HostTensor::from_bytes(desc.clone(), t.into_bytes())
                            .expect("a buffer of the elements the strides span"),
                        None => t,
                    }
                }
            }
        })
        .collect();
    ValidCase {
        info,
        level: d.level,
        args: d.args,
        op: Arc::from(d.op),
        inputs,
        expect_index_error,
        hostile,
    }
}

pub(crate) fn realize(
    info: &'static OperatorInfo,
    g: &Genome,
    aim: &Aim,
    limit: u64,
    hostile_one_in: u32,
) -> Result<ValidCase, Reject> {
    let d = draw(info, g, aim, limit)?;
    Ok(with_data(info, d, g.data_seed, hostile_one_in))
}

/// The proptest strategy of [`valid_cases`](super::valid_cases).
#[derive(Clone)]
pub struct ValidCases {
    pub(crate) info: &'static OperatorInfo,
    pub(crate) genome: BoxedStrategy<Genome>,
    pub(crate) aim: Arc<Aim>,
    pub(crate) limit: u64,
    pub(crate) hostile_one_in: u32,
}

impl fmt::Debug for ValidCases {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ValidCases({})", self.info.name)
    }
}

impl ValidCases {
    /// The same strategy, aimed at one table entry, rank or data-type
    /// combination (the genome's own choices fill in the rest).
    pub fn aimed(mut self, aim: Aim) -> ValidCases {
        self.aim = Arc::new(aim);
        self
    }

    /// The same strategy with at most `n` elements in all tensors of a
    /// case together (default [`CASE_ELEMENTS`]; `ops fuzz` uses
    /// [`FUZZ_ELEMENTS`]). A large dimension is drawn within it.
    pub fn max_elements(mut self, n: u64) -> ValidCases {
        self.limit = n;
        self
    }

    /// The same strategy with hostile input data in one case in
    /// `one_in` ([`ValidCase::hostile`]; 0, the default, for none; `ops
    /// fuzz` uses [`HOSTILE_ONE_IN`](super::HOSTILE_ONE_IN)). Whether a
    /// case is hostile is drawn from its data seed, so a shrunk failure
    /// stays hostile when it needs to be.
    pub fn hostile(mut self, one_in: u32) -> ValidCases {
        self.hostile_one_in = one_in;
        self
    }
}

impl Strategy for ValidCases {
    type Tree = ValidTree;
    type Value = ValidCase;

    fn new_tree(&self, runner: &mut TestRunner) -> NewTree<Self> {
        for _ in 0..MAX_ATTEMPTS {
            let tree = self.genome.new_tree(runner)?;
            if let Ok(case) = realize(
                self.info,
                &tree.current(),
                &self.aim,
                self.limit,
                self.hostile_one_in,
            ) {
                return Ok(ValidTree {
                    info: self.info,
                    aim: self.aim.clone(),
                    limit: self.limit,
                    hostile_one_in: self.hostile_one_in,
                    tree,
                    current: case,
                });
            }
        }
        Err(format!(
            "{}: no valid descriptor in {MAX_ATTEMPTS} attempts",
            self.info.name
        )
        .into())
    }
}

/// The value tree of [`ValidCases`]: shrinks the genome, keeping only
/// shrinks that still give a valid descriptor (as `prop_filter` does, but
/// without counting the rejections against the test run).
pub struct ValidTree {
    info: &'static OperatorInfo,
    aim: Arc<Aim>,
    limit: u64,
    hostile_one_in: u32,
    tree: Box<dyn ValueTree<Value = Genome>>,
    current: ValidCase,
}

impl fmt::Debug for ValidTree {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.current.fmt(f)
    }
}

impl ValidTree {
    /// After the genome moved: complicate until it realises again.
    fn settle(&mut self) {
        loop {
            if let Ok(c) = realize(
                self.info,
                &self.tree.current(),
                &self.aim,
                self.limit,
                self.hostile_one_in,
            ) {
                self.current = c;
                return;
            }
            if !self.tree.complicate() {
                return;
            }
        }
    }
}

impl ValueTree for ValidTree {
    type Value = ValidCase;

    fn current(&self) -> ValidCase {
        self.current.clone()
    }

    fn simplify(&mut self) -> bool {
        if self.tree.simplify() {
            self.settle();
            true
        } else {
            false
        }
    }

    fn complicate(&mut self) -> bool {
        if self.tree.complicate() {
            self.settle();
            true
        } else {
            false
        }
    }
}
