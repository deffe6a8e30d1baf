//! A compiled example for each descriptor's page: concrete tensor
//! descriptions, data types and attribute values that satisfy the spec's
//! rules and its support table, found at expansion time by a small,
//! deterministic search, then written as a doctest that builds the
//! descriptor, validates it and runs the CPU reference.
//!
//! The search evaluates a candidate exactly as the generated `build` and
//! `validate` do (the same [`ops_core::expr::Env`], output inference and
//! support table), so a candidate it accepts is one the descriptor accepts;
//! the doctest is the proof. For each support entry and a few shared ranks
//! it starts from the simplest choice of every free thing (each tensor's
//! sizes and data type, each host tensor's values, each required attribute,
//! each output's data type where no rule gives it) and climbs: it takes any
//! single change that lets validation pass more of the rules, until every
//! rule and the table pass. Each climb step costs one pass over the
//! candidates, and a climb takes at most one step per rule, so the search is
//! linear in the spec's size (times the candidates of each free thing).

use ops_core::expr::{Env, Step as XStep, Value};
use ops_core::support::{SupportEntry, SupportTable, TensorSupport};
use ops_core::{DataType, FeatureLevel, TensorDesc};

use crate::model::{AttrType, Const, IntKind, Spec, Step};

/// A descriptor the example builds: every tensor's description (host
/// tensors with their values, outputs as `build` infers them), the
/// attributes the example sets, and the level it validates at.
#[derive(Clone, Debug)]
pub struct Example {
    /// The feature level `validate` is called with.
    pub level: FeatureLevel,
    /// Every tensor, in spec order.
    pub tensors: Vec<ExampleTensor>,
    /// Per attribute, the value the example sets (`None`: its default).
    pub attrs: Vec<Option<Value>>,
}

/// One tensor of an [`Example`].
#[derive(Clone, Debug)]
pub struct ExampleTensor {
    /// Its data type.
    pub dtype: DataType,
    /// Its sizes.
    pub sizes: Vec<u32>,
    /// A host tensor's values.
    pub values: Option<Vec<i128>>,
    /// An inferred output whose data type the example sets with
    /// `{name}_dtype` (no `dtype` rule gives it).
    pub dtype_setter: bool,
}

/// The most candidate evaluations one spec's search makes.
const BUDGET: usize = 40_000;

/// The order data types are preferred in, for device tensors and for host
/// tensors (whose values the example writes as Rust literals).
const PREFERRED: [DataType; 12] = [
    DataType::Float32,
    DataType::Int32,
    DataType::Uint32,
    DataType::Int64,
    DataType::Uint64,
    DataType::Int16,
    DataType::Uint16,
    DataType::Int8,
    DataType::Uint8,
    DataType::Float16,
    DataType::Float64,
    DataType::Bool,
];
const PREFERRED_HOST: [DataType; 9] = [
    DataType::Int64,
    DataType::Int32,
    DataType::Uint32,
    DataType::Uint64,
    DataType::Int16,
    DataType::Uint16,
    DataType::Int8,
    DataType::Uint8,
    DataType::Float32,
];

/// One free choice of a candidate.
#[derive(Clone, Debug)]
enum Cand {
    Sizes(Vec<u32>),
    DType(DataType),
    /// Host values; `true` for a 0-dimensional tensor.
    Host(Vec<i128>, bool),
    Attr(Value),
}

/// What a free choice sets.
#[derive(Clone, Copy, Debug)]
enum Target {
    Sizes(usize),
    DType(usize),
    Host(usize),
    Attr(usize),
}

fn leak<T>(v: Vec<T>) -> &'static [T] {
    Box::leak(v.into_boxed_slice())
}

fn leak_str(s: &str) -> &'static str {
    Box::leak(s.to_string().into_boxed_str())
}

/// The spec's rules as the runtime evaluates them (the compiler's trees are
/// already static; only the messages are copied).
fn runtime_steps(spec: &Spec) -> &'static [XStep] {
    leak(
        spec.steps
            .iter()
            .map(|s| match s {
                Step::Require { cond, message } => XStep::Require {
                    cond: *cond,
                    message: leak_str(message),
                },
                Step::Let { var, value } => XStep::Let {
                    var: *var,
                    value: *value,
                },
                Step::Shape {
                    tensor,
                    sizes,
                    message,
                } => XStep::Shape {
                    tensor: *tensor,
                    sizes: *sizes,
                    message: leak_str(message),
                },
                Step::DType {
                    tensor,
                    dtype,
                    message,
                } => XStep::DType {
                    tensor: *tensor,
                    dtype: *dtype,
                    message: leak_str(message),
                },
            })
            .collect(),
    )
}

/// The spec's support table as the runtime checks it.
fn runtime_table(spec: &Spec, names: &'static [&'static str]) -> &'static SupportTable {
    let entries = spec
        .support
        .iter()
        .map(|e| SupportEntry {
            when: leak(e.when.as_ref().map(|w| w.1.clone()).unwrap_or_default()),
            level: e.level.map(|l| l.0),
            ranks: (e.ranks.0 as u8, e.ranks.1 as u8),
            tensors: leak(
                e.rows
                    .iter()
                    .map(|r| TensorSupport {
                        tensor: r.tensor,
                        dtypes: leak(r.dtypes.clone()),
                        ranks: r.ranks.map(|r| (r.0 as u8, r.1 as u8)),
                    })
                    .collect(),
            ),
        })
        .collect();
    Box::leak(Box::new(SupportTable {
        operator: leak_str(&spec.name),
        selector: None,
        introduced: spec.introduced.map(|l| l.0),
        entries: leak(entries),
        tensor_names: names,
        seed_names: leak(spec.tensors.iter().map(|t| leak_str(&t.seed)).collect()),
    }))
}

fn const_value(c: &Const) -> Value {
    match c {
        Const::Int(v) => Value::Int(*v),
        Const::List(l) => Value::List(l.clone()),
        Const::Bool(b) => Value::Bool(*b),
        Const::Float(_) => Value::Int(0),
        Const::Enum(m) => Value::Enum(*m),
    }
}

struct Search<'s> {
    spec: &'s Spec,
    steps: &'static [XStep],
    table: &'static SupportTable,
    names: &'static [&'static str],
    n_inputs: usize,
    /// Tensors whose data type a `dtype` rule gives.
    dtype_rule: Vec<bool>,
    /// The selector attribute of the table, if entries have `when`.
    selector: Option<usize>,
    evaluations: usize,
}

/// An evaluated candidate: how far validation got (higher is further) and
/// the tensors as `build` made them.
struct Outcome {
    score: usize,
    tensors: Vec<ExampleTensor>,
    attrs: Vec<Value>,
}

impl Search<'_> {
    /// The score of a descriptor that validates, plus one when its outputs
    /// are neither empty nor large (a readable example).
    fn full(&self) -> usize {
        self.steps.len() + 3
    }

    fn evaluate(&mut self, level: FeatureLevel, cfg: &[(Target, Cand)]) -> Outcome {
        self.evaluations += 1;
        let spec = self.spec;
        let mut tensors: Vec<ExampleTensor> = spec
            .tensors
            .iter()
            .map(|_| ExampleTensor {
                dtype: DataType::Float32,
                sizes: Vec::new(),
                values: None,
                dtype_setter: false,
            })
            .collect();
        let mut attrs: Vec<Value> = spec
            .attrs
            .iter()
            .map(|a| a.default.as_ref().map_or(Value::Int(0), const_value))
            .collect();
        for (t, c) in cfg {
            match (t, c) {
                (Target::Sizes(i), Cand::Sizes(s)) => tensors[*i].sizes = s.clone(),
                (Target::DType(i), Cand::DType(d)) => {
                    tensors[*i].dtype = *d;
                    tensors[*i].dtype_setter = spec.tensors[*i].output;
                }
                (Target::Host(i), Cand::Host(v, scalar)) => {
                    tensors[*i].sizes = if *scalar {
                        Vec::new()
                    } else {
                        vec![v.len() as u32]
                    };
                    tensors[*i].values = Some(v.clone());
                }
                (Target::Attr(a), Cand::Attr(v)) => attrs[*a] = v.clone(),
                _ => {}
            }
        }
        // A host tensor holds its values as its data type does (the
        // example writes them as literals of that type).
        let unsigned = |d: DataType| !d.is_float() && !d.is_signed_int();
        if tensors.iter().any(|t| {
            t.values
                .as_ref()
                .is_some_and(|v| unsigned(t.dtype) && v.iter().any(|&x| x < 0))
        }) {
            return Outcome {
                score: 0,
                tensors,
                attrs,
            };
        }
        let member = self.selector.and_then(|a| match attrs[a] {
            Value::Enum(m) => Some(m),
            _ => None,
        });
        let missing: Vec<usize> = spec
            .tensors
            .iter()
            .enumerate()
            .filter(|(_, t)| t.output && !t.given)
            .map(|(i, _)| i)
            .collect();
        let host: Vec<Option<Vec<i128>>> = tensors.iter().map(|t| t.values.clone()).collect();
        let descs: Vec<TensorDesc> = tensors
            .iter()
            .map(|t| TensorDesc::new(t.dtype, t.sizes.clone()))
            .collect();
        let refs: Vec<&TensorDesc> = descs.iter().collect();
        let (inferred, _) = ops_core::__private::args::infer_outputs(
            self.table.operator,
            self.steps,
            spec.slots,
            &refs,
            self.names,
            &host,
            &attrs,
            &missing,
            self.table,
            self.n_inputs,
        );
        for (i, sizes, dt) in inferred {
            tensors[i].sizes = sizes;
            if let (Some(d), false) = (dt, tensors[i].dtype_setter) {
                tensors[i].dtype = d;
            }
        }
        let descs: Vec<TensorDesc> = tensors
            .iter()
            .map(|t| TensorDesc::new(t.dtype, t.sizes.clone()))
            .collect();
        let refs: Vec<&TensorDesc> = descs.iter().collect();
        let mut score = 0;
        if self
            .table
            .check_input_ranks(Some(level), member, &refs, self.n_inputs)
            .is_ok()
        {
            score = 1;
            let mut env = Env::new(&refs, self.names, &host, &attrs, spec.slots);
            for k in 0..self.steps.len() {
                if env
                    .run_steps(self.table.operator, &self.steps[k..k + 1])
                    .is_err()
                {
                    break;
                }
                score += 1;
            }
            if score == self.steps.len() + 1 && self.table.check(level, member, &refs).is_ok() {
                score += 1;
                let readable = tensors.iter().filter(|t| t.values.is_none()).all(|t| {
                    let n: u64 = t.sizes.iter().map(|&s| u64::from(s)).product();
                    n > 0 && n <= 4096
                });
                if readable {
                    score += 1;
                }
            }
        }
        Outcome {
            score,
            tensors,
            attrs,
        }
    }

    /// One climb from the candidates `at` of the choices, leaving choice
    /// `frozen` as it is: the descriptor it reaches, if it validates, and
    /// its candidates.
    fn climb(
        &mut self,
        level: FeatureLevel,
        choices: &[(Target, Vec<Cand>)],
        mut at: Vec<usize>,
        frozen: Option<usize>,
    ) -> Option<(Outcome, Vec<usize>)> {
        let cfg = |at: &[usize]| -> Vec<(Target, Cand)> {
            choices
                .iter()
                .zip(at)
                .map(|((t, c), &i)| (*t, c[i].clone()))
                .collect()
        };
        let mut best = self.evaluate(level, &cfg(&at));
        let full = self.full();
        'climb: while best.score < full {
            for k in (0..choices.len()).filter(|&k| Some(k) != frozen) {
                for c in 0..choices[k].1.len() {
                    if c == at[k] {
                        continue;
                    }
                    if self.evaluations >= BUDGET {
                        break 'climb;
                    }
                    let mut next = at.clone();
                    next[k] = c;
                    let o = self.evaluate(level, &cfg(&next));
                    if o.score > best.score {
                        best = o;
                        at = next;
                        continue 'climb;
                    }
                }
            }
            break;
        }
        (best.score + 1 >= full).then_some((best, at))
    }

    /// A climb from the first candidate of every choice, then a polish: each
    /// choice the climb moved off its first (simplest, most typical)
    /// candidate goes back to it where a climb of the others around it still
    /// validates, in the order of the choices (ONNX Reshape of `[2, 3]` rather than of `[1, 1]`, whose
    /// `shape` the climb would otherwise have met first).
    fn find(&mut self, level: FeatureLevel, choices: &[(Target, Vec<Cand>)]) -> Option<Outcome> {
        let (mut best, mut at) = self.climb(level, choices, vec![0; choices.len()], None)?;
        for k in 0..choices.len() {
            if at[k] == 0 {
                continue;
            }
            let mut start = at.clone();
            start[k] = 0;
            if let Some((o, next)) = self.climb(level, choices, start, Some(k)) {
                // Earlier choices (the inputs') first: a later polish never
                // undoes an earlier one.
                if o.score >= best.score && next < at {
                    best = o;
                    at = next;
                }
            }
        }
        Some(best)
    }
}

/// Sizes of rank `k` from the shared base shape of rank `r`: its last `k`
/// sizes (shapes align to the right, as broadcasting does), extended on the
/// right when `k > r`.
fn shape(base: &[u32], r: usize, k: usize) -> Vec<u32> {
    if k <= r {
        base[r - k..r].to_vec()
    } else {
        base[..k].to_vec()
    }
}

fn ordered(dtypes: &[DataType], preferred: &[DataType]) -> Vec<DataType> {
    preferred
        .iter()
        .copied()
        .filter(|d| dtypes.contains(d))
        .collect()
}

/// Lists a rule may want: axes, sizes, zeros, ones, pads.
fn lists(base: &[u32], r: usize) -> Vec<Vec<i128>> {
    let sizes: Vec<i128> = base[..r].iter().map(|&s| i128::from(s)).collect();
    let ri = r as i128;
    let mut out = vec![
        vec![0],
        vec![0; r],
        sizes.clone(),
        vec![1; r],
        (0..ri).collect(),
        Vec::new(),
        vec![1],
        vec![ri - 1],
        vec![0, 1],
        vec![2],
        vec![-1],
        vec![0; 2 * r],
        sizes.iter().rev().copied().collect(),
        (0..ri).rev().collect(),
    ];
    let mut seen = Vec::new();
    out.retain(|l| {
        if seen.contains(l) {
            false
        } else {
            seen.push(l.clone());
            true
        }
    });
    out
}

/// Finds a descriptor of `spec` that validates at a level of its table, or
/// `None` when the search finds none within its bounds.
pub fn find(spec: &Spec) -> Option<Example> {
    let names: &'static [&'static str] =
        leak(spec.tensors.iter().map(|t| leak_str(&t.name)).collect());
    let steps = runtime_steps(spec);
    let table = runtime_table(spec, names);
    let dtype_rule = (0..spec.tensors.len())
        .map(|i| {
            spec.steps
                .iter()
                .any(|s| matches!(s, Step::DType { tensor, .. } if *tensor == i))
        })
        .collect();
    let selector = spec
        .support
        .iter()
        .find_map(|e| e.when.as_ref().map(|w| w.0));
    let mut search = Search {
        spec,
        steps,
        table,
        names,
        n_inputs: spec.tensors.iter().filter(|t| !t.output).count(),
        dtype_rule,
        selector,
        evaluations: 0,
    };
    // Outputs that split an input take its first dimension, one part each.
    let outputs = spec.tensors.iter().filter(|t| t.output).count() as u32;
    let mut base: Vec<u32> = vec![2, 3, 4, 5, 6, 7, 8, 9];
    base[0] = base[0].max(outputs);
    let latest = *FeatureLevel::ALL.last()?;
    for entry in &spec.support {
        let level = entry
            .level
            .map(|l| l.0)
            .or(spec.introduced.map(|l| l.0))
            .unwrap_or(latest);
        let (lo, hi) = (entry.ranks.0 as usize, entry.ranks.1 as usize);
        let ranks: Vec<usize> = [2, 1, 3, 4, 0]
            .into_iter()
            .filter(|r| (lo..=hi).contains(r))
            .chain((lo..=hi.min(8)).filter(|r| *r > 4))
            .take(3)
            .collect();
        for r in ranks {
            let Some(choices) = choices(&search, entry, &base, r) else {
                continue;
            };
            if let Some(o) = search.find(level, &choices) {
                let attrs = spec
                    .attrs
                    .iter()
                    .enumerate()
                    .map(|(i, a)| {
                        let set = a.default.as_ref().map(const_value).as_ref() != Some(&o.attrs[i]);
                        set.then(|| o.attrs[i].clone())
                    })
                    .collect();
                return Some(Example {
                    level,
                    tensors: o.tensors,
                    attrs,
                });
            }
            if search.evaluations >= BUDGET {
                return None;
            }
        }
    }
    None
}

/// The free choices of one climb: entry `entry`, shared rank `r`.
fn choices(
    search: &Search,
    entry: &crate::model::Entry,
    base: &[u32],
    r: usize,
) -> Option<Vec<(Target, Vec<Cand>)>> {
    let spec = search.spec;
    let mut out = Vec::new();
    let lists = lists(base, r);
    for (i, t) in spec.tensors.iter().enumerate() {
        let row = entry.rows.iter().find(|row| row.tensor == i);
        let dtypes = row.map(|row| row.dtypes.clone()).unwrap_or_default();
        let (lo, hi) = row
            .and_then(|row| row.ranks)
            .map_or((entry.ranks.0, entry.ranks.1), |x| (x.0, x.1));
        let (lo, hi) = (lo as usize, (hi as usize).min(8));
        if t.host {
            let dts = ordered(&dtypes, &PREFERRED_HOST);
            if dts.is_empty() {
                // The example could not write its values.
                out.push((Target::DType(i), Vec::new()));
                continue;
            }
            out.push((Target::DType(i), dts.into_iter().map(Cand::DType).collect()));
            let mut hosts: Vec<Cand> = lists.iter().map(|l| Cand::Host(l.clone(), false)).collect();
            for v in [0, 1, 2] {
                hosts.push(Cand::Host(vec![v], true));
            }
            out.push((Target::Host(i), hosts));
            continue;
        }
        if !t.output || !search.dtype_rule[i] {
            let dts = ordered(&dtypes, &PREFERRED);
            out.push((Target::DType(i), dts.into_iter().map(Cand::DType).collect()));
        }
        if t.output && !t.given {
            continue;
        }
        let k0 = r.clamp(lo, hi.max(lo));
        let first = shape(base, r, k0);
        let mut sizes = vec![first.clone(), vec![1; k0]];
        for d in 0..k0 {
            let mut s = first.clone();
            s[d] = 1;
            sizes.push(s);
        }
        for k in lo..=hi.min(5) {
            if k != k0 {
                sizes.push(shape(base, r, k));
            }
        }
        if t.given && k0 > 0 && spec.tensors.iter().filter(|t| t.given).count() > 1 {
            // Several given outputs split the first dimension (as many as
            // they are) in parts of 1.
            sizes.swap(0, 2);
        }
        sizes.dedup();
        out.push((
            Target::Sizes(i),
            sizes.into_iter().map(Cand::Sizes).collect(),
        ));
    }
    let ri = r as i128;
    for (ai, a) in spec.attrs.iter().enumerate() {
        let selected = Some(ai) == search.selector;
        // An attribute with a default keeps it unless another value lets
        // more rules pass (ONNX Mod's `fmod` on floats).
        let default = a.default.as_ref().map(const_value);
        let mut cands: Vec<Value> = match a.ty {
            AttrType::Int(k) => {
                let mut v = vec![0, 1, 2, -1, ri - 1];
                if k == IntKind::U32 {
                    v.retain(|&x| x >= 0);
                }
                v.dedup();
                v.into_iter().map(Value::Int).collect()
            }
            AttrType::List(k) => lists
                .iter()
                .filter(|l| k != IntKind::U32 || l.iter().all(|&x| x >= 0))
                .cloned()
                .map(Value::List)
                .collect(),
            AttrType::Bool => vec![Value::Bool(false), Value::Bool(true)],
            AttrType::Enum(e) => {
                let n = spec.enums[e].members.len() as u32;
                let mut first: Vec<u32> = match (&entry.when, selected) {
                    (Some(w), true) => w.1.clone(),
                    _ => Vec::new(),
                };
                if let Some(Const::Enum(d)) = &a.default {
                    if first.is_empty() {
                        first.push(*d);
                    }
                }
                let rest: Vec<u32> = (0..n).filter(|m| !first.contains(m)).collect();
                first.extend(rest);
                first.into_iter().map(Value::Enum).collect()
            }
            // Rules never read these: any value serves.
            AttrType::Float(_) | AttrType::Scalar(_) => vec![Value::Int(0)],
        };
        if let Some(d) = default.filter(|_| !selected) {
            if matches!(a.ty, AttrType::Float(_) | AttrType::Scalar(_)) {
                continue;
            }
            cands.retain(|c| *c != d);
            cands.insert(0, d);
        }
        out.push((
            Target::Attr(ai),
            cands.into_iter().map(Cand::Attr).collect(),
        ));
    }
    // A choice without candidates (a host tensor of a type the example
    // cannot write) leaves nothing to search.
    if out.iter().any(|(_, c)| c.is_empty()) {
        return None;
    }
    Some(out)
}
