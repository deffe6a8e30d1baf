//! Invalid descriptors: a valid case with exactly one thing broken, and
//! the check that the rejection names a rule involving that thing.

use std::fmt;
use std::sync::Arc;

use proptest::prelude::*;
use proptest::strategy::{NewTree, ValueTree};
use proptest::test_runner::TestRunner;

use super::data::host_tensor;
use super::rules::{output_rule_reads, reads_of, Reads};
use super::valid::{draw, Aim, Genome, Reject, CASE_ELEMENTS, MAX_ATTEMPTS};
use crate::args::host_values;
use crate::{
    AttrKind, AttrValue, DataType, FeatureLevel, OpArgs, OpError, Operator, OperatorInfo,
    TensorDesc, ValidationError,
};

/// The one thing an invalid case breaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Broken {
    /// Tensor `tensor` (spec order) has a data type its row of the level's
    /// table does not list.
    DataType {
        /// The tensor, by spec order (inputs then outputs).
        tensor: usize,
    },
    /// Tensor `tensor` has another dimension count: outside the level's
    /// range, or one the shape rules do not accept.
    Rank {
        /// The tensor, by spec order.
        tensor: usize,
    },
    /// One size of tensor `tensor` changed (a host tensor: one value more).
    Sizes {
        /// The tensor, by spec order.
        tensor: usize,
    },
    /// Attribute `attr` holds a value the rules (or its type) do not accept.
    Attribute {
        /// The attribute, by spec order.
        attr: usize,
    },
    /// The level is below the one that introduced the operator.
    Level,
    /// The level is at least the introduction but below the lowest level
    /// whose table admits the descriptor.
    LevelTable,
}

impl Broken {
    /// A short name of the category (`"data type"`, ...).
    pub fn category(&self) -> &'static str {
        match self {
            Broken::DataType { .. } => "data type",
            Broken::Rank { .. } => "rank",
            Broken::Sizes { .. } => "sizes",
            Broken::Attribute { .. } => "attribute",
            Broken::Level => "level",
            Broken::LevelTable => "level table",
        }
    }

    /// Says what was broken, with the spec's names.
    pub fn describe(&self, info: &OperatorInfo) -> String {
        let t = |i: usize| info.tensors.get(i).map_or("?", |t| t.name);
        match *self {
            Broken::DataType { tensor } => format!("the data type of `{}`", t(tensor)),
            Broken::Rank { tensor } => format!("the rank of `{}`", t(tensor)),
            Broken::Sizes { tensor } => format!("the sizes of `{}`", t(tensor)),
            Broken::Attribute { attr } => format!(
                "attribute `{}`",
                info.attrs.get(attr).map_or("?", |a| a.name)
            ),
            Broken::Level => "a level below the operator's introduction".into(),
            Broken::LevelTable => "a level whose table does not admit the descriptor".into(),
        }
    }

    /// True when `e`, the error `validate` returned, blames a rule that
    /// involves what was broken:
    ///
    /// - a support-table rule about the broken tensor's data type or
    ///   dimension count, or the introduction level;
    /// - otherwise a spec rule (found by its message) that reads the broken
    ///   thing: `dtype(t)` (or the values of a host tensor, which a
    ///   non-integer data type makes unknown) for a data type, `rank(t)` or
    ///   `t.sizes` for a rank, `t.sizes` (or the values of a host tensor)
    ///   for sizes, the attribute for an attribute — directly or through
    ///   `let` variables;
    /// - or a support-table rule about an output's dimension count or data
    ///   type, when the `shape` or `dtype` step that infers them reads the
    ///   broken thing (the output was inferred from it).
    pub fn explains(&self, info: &OperatorInfo, e: &ValidationError) -> bool {
        let rule = e.rule.as_str();
        let seed = |i: usize| info.tensors.get(i).map_or("?", |t| t.seed);
        let table_rule = |i: usize, what: &str| rule.starts_with(&format!("{}.{what}", seed(i)));
        let mut reads: Option<Reads> = reads_of(info, rule);
        // A table rule about an output whose sizes or data type the builder
        // inferred: the step that inferred them is where the broken thing
        // shows (flipping `keep_dims` can leave too few dimensions).
        for (t, ti) in info.tensors.iter().enumerate() {
            if !ti.output {
                continue;
            }
            let derived = if table_rule(t, "DimensionCount must be") {
                output_rule_reads(info, t, true)
            } else if table_rule(t, "DataType must be one of") {
                output_rule_reads(info, t, false)
            } else {
                None
            };
            if derived.is_some() {
                reads = derived;
            }
        }
        let has = |bits: u64, i: usize| bits & (1u64 << i.min(63)) != 0;
        match *self {
            Broken::Level => rule.contains("was introduced in feature level"),
            Broken::LevelTable => {
                (rule.contains(".DataType must be one of")
                    || rule.contains(".DimensionCount must be"))
                    && rule.contains(" at feature level ")
            }
            Broken::DataType { tensor } => {
                table_rule(tensor, "DataType must be one of")
                    || reads.is_some_and(|r| has(r.dtype, tensor) || has(r.values, tensor))
            }
            Broken::Rank { tensor } => {
                table_rule(tensor, "DimensionCount must be")
                    || reads.is_some_and(|r| has(r.rank, tensor) || has(r.sizes, tensor))
            }
            Broken::Sizes { tensor } => {
                reads.is_some_and(|r| has(r.sizes, tensor) || has(r.values, tensor))
            }
            Broken::Attribute { attr } => {
                reads.is_some_and(|r| has(r.attrs, attr))
                    // A table rule of the entries the attribute selects.
                    || info.table.selector.as_ref().is_some_and(|sel| {
                        sel.attr == attr && rule.contains(&format!(" when {} is ", sel.seed))
                    })
            }
        }
    }

    /// True when the builder's error `e` names what was broken (an
    /// attribute value its type cannot hold, an enum member that does not
    /// exist).
    pub fn explains_build_error(&self, info: &OperatorInfo, e: &OpError) -> bool {
        match (*self, e) {
            (Broken::Attribute { attr }, OpError::InvalidArgument(m)) => info
                .attrs
                .get(attr)
                .is_some_and(|a| m.contains(&format!("`{}`", a.name))),
            _ => false,
        }
    }
}

/// One invalid case: arguments and a level with exactly one thing broken.
#[derive(Clone)]
pub struct InvalidCase {
    /// The operator.
    pub info: &'static OperatorInfo,
    /// The level to validate at.
    pub level: FeatureLevel,
    /// The arguments (outputs given explicitly when one of them is broken).
    pub args: OpArgs,
    /// What was broken.
    pub broken: Broken,
    /// The descriptor, when the builder accepted the arguments.
    pub op: Option<Arc<dyn Operator>>,
    /// The builder's error, when it rejected the arguments (an attribute
    /// value its type cannot hold).
    pub build_error: Option<OpError>,
}

impl fmt::Debug for InvalidCase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{} at feature level {}, broken: {}",
            self.info.name,
            self.level,
            self.broken.describe(self.info)
        )?;
        match (&self.op, &self.build_error) {
            (Some(op), _) => writeln!(f, "  {op:?}"),
            (None, Some(e)) => writeln!(f, "  {:?}\n  builder: {e}", self.args),
            (None, None) => writeln!(f, "  {:?}", self.args),
        }
    }
}

/// Choices of what to break.
#[derive(Clone, Copy, Debug)]
pub(crate) struct BreakGene {
    kind: u8,
    target: u8,
    a: u8,
    b: u8,
}

fn break_gene() -> impl Strategy<Value = BreakGene> {
    (any::<u8>(), any::<u8>(), any::<u8>(), any::<u8>())
        .prop_map(|(kind, target, a, b)| BreakGene { kind, target, a, b })
}

/// A tensor's current description in the valid case (outputs as inferred).
fn desc_of(op: &dyn Operator, info: &OperatorInfo, i: usize) -> TensorDesc {
    let n_in = info.tensors.iter().filter(|t| !t.output).count();
    if i < n_in {
        op.input_descs()[i].clone()
    } else {
        op.output_descs()[i - n_in].clone()
    }
}

/// Puts `desc` for tensor `i` into `args` (outputs become explicit; host
/// tensors keep their values, converted to the new type and shape).
fn set_desc(
    info: &OperatorInfo,
    args: &mut OpArgs,
    i: usize,
    desc: TensorDesc,
    values: Option<Vec<i128>>,
) -> Result<(), Reject> {
    let t = &info.tensors[i];
    if t.host {
        let values = values.ok_or(Reject::Aim)?;
        if desc.element_count() != Some(values.len() as u64) {
            return Err(Reject::Aim);
        }
        args.host_data.insert(
            t.name.to_string(),
            host_tensor(desc.dtype, &desc.sizes, &values),
        );
    } else {
        if t.output {
            args.output_dtypes.remove(t.name);
        }
        args.tensors.insert(t.name.to_string(), desc);
    }
    Ok(())
}

fn break_one(
    info: &'static OperatorInfo,
    op: &dyn Operator,
    level: FeatureLevel,
    args: &mut OpArgs,
    g: &BreakGene,
) -> Result<(Broken, FeatureLevel), Reject> {
    let n = info.tensors.len();
    let tensor = g.target as usize % n.max(1);
    let host_vals = |args: &OpArgs| {
        args.host_data
            .get(info.tensors[tensor].name)
            .and_then(host_values)
    };
    match g.kind % 5 {
        0 => {
            let entry = info
                .table
                .entry(level, info.table.member_of(args))
                .ok_or(Reject::Aim)?;
            let row = entry.tensors.iter().find(|r| r.tensor == tensor);
            let allowed: &[DataType] = row.map_or(&DataType::ALL, |r| r.dtypes);
            let others: Vec<DataType> = DataType::ALL
                .into_iter()
                .filter(|d| !allowed.contains(d))
                .collect();
            if others.is_empty() {
                return Err(Reject::Aim);
            }
            let mut d = desc_of(op, info, tensor);
            d.dtype = others[g.a as usize % others.len()];
            let v = host_vals(args);
            set_desc(info, args, tensor, d, v)?;
            Ok((Broken::DataType { tensor }, level))
        }
        1 => {
            let mut d = desc_of(op, info, tensor);
            let r = d.rank();
            let entry = info.table.entry(level, info.table.member_of(args));
            let row = entry.and_then(|e| e.tensors.iter().find(|row| row.tensor == tensor));
            let (lo, hi) = row
                .and_then(|row| row.ranks)
                .or(entry.map(|e| e.ranks))
                .map_or((0, 8), |(a, b)| (a as usize, b as usize));
            let target = match g.a % 4 {
                0 => hi + 1,
                1 if lo > 0 => lo - 1,
                2 => r + 1,
                _ => r.checked_sub(1).ok_or(Reject::Aim)?,
            };
            let mut v = host_vals(args);
            if target > r {
                for _ in r..target {
                    if g.b.is_multiple_of(2) || info.tensors[tensor].host {
                        d.sizes.insert(0, 1);
                    } else {
                        d.sizes.push(1 + u32::from(g.b % 3));
                    }
                }
            } else {
                for _ in target..r {
                    if g.b.is_multiple_of(2) {
                        d.sizes.remove(0);
                    } else {
                        d.sizes.pop();
                    }
                }
                if let Some(v) = v.as_mut() {
                    let n = d.element_count().unwrap_or(0) as usize;
                    v.truncate(n);
                }
            }
            set_desc(info, args, tensor, d, v)?;
            Ok((Broken::Rank { tensor }, level))
        }
        2 => {
            let mut d = desc_of(op, info, tensor);
            let mut v = host_vals(args);
            if let Some(vals) = v.as_mut() {
                // One value more: a duplicate, or one past the rank.
                let extra = if vals.is_empty() || g.b.is_multiple_of(2) {
                    op.input_descs().first().map_or(0, |x| x.rank() as i128)
                } else {
                    vals[g.a as usize % vals.len()]
                };
                vals.push(extra);
                match d.sizes.last_mut() {
                    Some(s) => *s += 1,
                    None => return Err(Reject::Aim),
                }
            } else {
                if d.rank() == 0 {
                    return Err(Reject::Aim);
                }
                let k = g.a as usize % d.rank();
                let s = d.sizes[k];
                d.sizes[k] = match g.b % 3 {
                    0 => s + 1,
                    1 if s > 1 => s - 1,
                    _ => s + 2,
                };
            }
            set_desc(info, args, tensor, d, v)?;
            Ok((Broken::Sizes { tensor }, level))
        }
        3 => {
            if info.attrs.is_empty() {
                return Err(Reject::Aim);
            }
            let attr = g.target as usize % info.attrs.len();
            let a = &info.attrs[attr];
            let rank = op.input_descs().first().map_or(0, |x| x.rank() as i128);
            let current = args.attributes.get(a.name).cloned();
            let v = match a.kind {
                AttrKind::Int { .. } => {
                    let cur = match current {
                        Some(AttrValue::Int(i)) => i,
                        _ => 0,
                    };
                    AttrValue::Int(match g.a % 6 {
                        0 => cur + 1,
                        1 => rank,
                        2 => rank + 1,
                        3 => 1000,
                        4 => -1,
                        _ => cur - 1,
                    })
                }
                AttrKind::List { .. } => {
                    let mut l = match current {
                        Some(AttrValue::Ints(l)) => l,
                        _ => Vec::new(),
                    };
                    match g.a % 6 {
                        0 if !l.is_empty() => {
                            let dup = l[g.b as usize % l.len()];
                            l.push(dup);
                        }
                        1 => l.push(rank),
                        2 => l.clear(),
                        3 => l.push(-1 - rank),
                        4 => l.push(1 << 40),
                        _ if !l.is_empty() => {
                            let k = g.b as usize % l.len();
                            l[k] = rank + i128::from(g.b % 3);
                        }
                        _ => l.push(rank),
                    }
                    AttrValue::Ints(l)
                }
                AttrKind::Bool => AttrValue::Bool(!matches!(current, Some(AttrValue::Bool(true)))),
                // Rules never read a float attribute: no value breaks one.
                AttrKind::Float | AttrKind::Number => return Err(Reject::Aim),
                AttrKind::Enum(members) => {
                    if g.a.is_multiple_of(2) {
                        AttrValue::Enum("NOT_A_MEMBER".into())
                    } else {
                        AttrValue::Enum(members[g.b as usize % members.len()].to_string())
                    }
                }
            };
            args.attributes.insert(a.name.to_string(), v);
            Ok((Broken::Attribute { attr }, level))
        }
        _ => {
            let below_intro: Vec<FeatureLevel> = info
                .introduced
                .map(|i| FeatureLevel::ALL.into_iter().filter(|&l| l < i).collect())
                .unwrap_or_default();
            let intro = info.introduced.ok_or(Reject::Aim)?;
            let min = op.min_feature_level().ok_or(Reject::Aim)?;
            let below_min: Vec<FeatureLevel> = FeatureLevel::ALL
                .into_iter()
                .filter(|&l| l >= intro && l < min)
                .collect();
            let use_table = g.a % 2 == 1 || below_intro.is_empty();
            if use_table && !below_min.is_empty() {
                Ok((
                    Broken::LevelTable,
                    below_min[g.b as usize % below_min.len()],
                ))
            } else if !below_intro.is_empty() {
                Ok((Broken::Level, below_intro[g.b as usize % below_intro.len()]))
            } else {
                Err(Reject::Aim)
            }
        }
    }
}

fn realize_invalid(
    info: &'static OperatorInfo,
    g: &Genome,
    b: &BreakGene,
) -> Result<InvalidCase, Reject> {
    let drawn = draw(info, g, &Aim::default(), CASE_ELEMENTS)?;
    let mut args = drawn.args.clone();
    let (broken, level) = break_one(info, drawn.op.as_ref(), drawn.level, &mut args, b)?;
    match (info.build)(&args) {
        Err(e) => Ok(InvalidCase {
            info,
            level,
            args,
            broken,
            op: None,
            build_error: Some(e),
        }),
        Ok(op) => {
            if op.validate(level).is_ok() {
                // The mutation happened to stay valid: not an invalid case.
                return Err(Reject::Invalid("the mutation stayed valid".into()));
            }
            Ok(InvalidCase {
                info,
                level,
                args,
                broken,
                op: Some(Arc::from(op)),
                build_error: None,
            })
        }
    }
}

/// The proptest strategy of [`invalid_cases`](super::invalid_cases).
#[derive(Clone)]
pub struct InvalidCases {
    pub(crate) info: &'static OperatorInfo,
    pub(crate) genome: BoxedStrategy<(Genome, BreakGene)>,
}

impl fmt::Debug for InvalidCases {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "InvalidCases({})", self.info.name)
    }
}

pub(crate) fn invalid_genome(genome: BoxedStrategy<Genome>) -> BoxedStrategy<(Genome, BreakGene)> {
    (genome, break_gene()).boxed()
}

impl Strategy for InvalidCases {
    type Tree = InvalidTree;
    type Value = InvalidCase;

    fn new_tree(&self, runner: &mut TestRunner) -> NewTree<Self> {
        for _ in 0..MAX_ATTEMPTS {
            let tree = self.genome.new_tree(runner)?;
            let (g, b) = tree.current();
            if let Ok(case) = realize_invalid(self.info, &g, &b) {
                return Ok(InvalidTree {
                    info: self.info,
                    tree,
                    current: case,
                });
            }
        }
        Err(format!(
            "{}: no invalid descriptor in {MAX_ATTEMPTS} attempts",
            self.info.name
        )
        .into())
    }
}

/// The value tree of [`InvalidCases`] (shrinks keep a broken case).
pub struct InvalidTree {
    info: &'static OperatorInfo,
    tree: Box<dyn ValueTree<Value = (Genome, BreakGene)>>,
    current: InvalidCase,
}

impl fmt::Debug for InvalidTree {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.current.fmt(f)
    }
}

impl InvalidTree {
    fn settle(&mut self) {
        loop {
            let (g, b) = self.tree.current();
            if let Ok(c) = realize_invalid(self.info, &g, &b) {
                self.current = c;
                return;
            }
            if !self.tree.complicate() {
                return;
            }
        }
    }
}

impl ValueTree for InvalidTree {
    type Value = InvalidCase;

    fn current(&self) -> InvalidCase {
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
