//! Stage 3: rules that span several items. Only [`check_spec`] builds a
//! [`Checked`], so code generation never sees an unchecked model.

use crate::diag::{Diagnostic, Errors};
use crate::model::{Compute, Spec, Step};

/// A spec that passed every check.
#[derive(Clone, Debug)]
pub struct Checked(Spec);

impl Checked {
    /// The checked model.
    pub fn spec(&self) -> &Spec {
        &self.0
    }
}

/// Runs every check; `None` when any failed (the errors are recorded).
pub fn check_spec(spec: Spec, errors: &mut Errors) -> Option<Checked> {
    check_levels(&spec, errors);
    check_tables(&spec, errors);
    check_outputs(&spec, errors);
    check_compute(&spec, errors);
    errors.is_empty().then_some(Checked(spec))
}

/// A leveled table needs `introduced`, and its lowest level is that level;
/// levels are written highest first, each once.
///
/// ```text
/// introduced 3.0
/// support { level 4.1 ranks 1..=8 {..} level 3.0 ranks 1..=8 {..} }
/// ```
fn check_levels(spec: &Spec, errors: &mut Errors) {
    let leveled = spec.support.iter().filter(|e| e.level.is_some()).count();
    if leveled > 0 && leveled != spec.support.len() {
        errors.error(
            spec.support_span,
            "either every support entry has a `level` or none does",
        );
        return;
    }
    match (spec.introduced, leveled > 0) {
        (None, true) => errors.push(
            Diagnostic::new(
                spec.support_span,
                "support entries have levels but the operator has no `introduced` level",
            )
            .help("add `introduced 3.0` (the level that introduced the operator)"),
        ),
        (Some((_, span)), false) if !spec.support.is_empty() => errors.error(
            span,
            "`introduced` given, but the support entries have no `level`",
        ),
        _ => {}
    }
    let Some((intro, _)) = spec.introduced else {
        return;
    };
    // Entries of one `when` group (or all, without groups) are ordered
    // among themselves.
    let group = |e: &crate::model::Entry| e.when.as_ref().map(|w| w.1.clone());
    let mut prevs: Vec<(Option<Vec<u32>>, ops_core::FeatureLevel)> = Vec::new();
    for e in &spec.support {
        let Some((level, span)) = e.level else {
            continue;
        };
        let key = group(e);
        let prev = prevs.iter().rev().find(|(k, _)| *k == key).map(|p| p.1);
        if level < intro {
            errors.push(
                Diagnostic::new(span, format!("support entry level {level} is below the operator's introduction ({intro})"))
                    .help("an operator has no table before the level that introduced it"),
            );
        }
        if let Some(p) = prev {
            if level == p {
                errors.error(
                    span,
                    format!("support entries overlap: level {level} is given twice"),
                );
            } else if level > p {
                errors.push(
                    Diagnostic::new(
                        span,
                        format!("support entries out of order: {level} follows {p}"),
                    )
                    .help("write entries highest level first, as the seed tables do"),
                );
            }
        }
        prevs.push((key, level));
    }
    let mut keys: Vec<Option<Vec<u32>>> = spec.support.iter().map(group).collect();
    keys.dedup();
    for key in keys {
        if let Some(lowest) = spec
            .support
            .iter()
            .filter(|e| group(e) == key)
            .filter_map(|e| e.level.map(|l| l.0))
            .min()
        {
            if lowest > intro {
                errors.error(
                    spec.support_span,
                    format!(
                        "no support entry at the introduction level {intro} (the lowest is {lowest})"
                    ),
                );
            }
        }
    }
    // One selector attribute per table.
    let selectors: Vec<usize> = spec
        .support
        .iter()
        .filter_map(|e| e.when.as_ref().map(|w| w.0))
        .collect();
    if let Some(&first) = selectors.first() {
        if let Some(e) = spec
            .support
            .iter()
            .find(|e| e.when.as_ref().is_some_and(|w| w.0 != first))
        {
            if let Some((_, _, span)) = &e.when {
                errors.error(*span, "every `when` of a table names the same attribute");
            }
        }
    }
}

/// Dimension counts lie in 1..=8 for leveled (DirectML) tables, 0..=8
/// otherwise; every tensor has exactly one non-empty row per entry.
///
/// ```text
/// level 3.0 ranks 1..=8 { input: FLOAT32; output: UINT32; }
/// ```
fn check_tables(spec: &Spec, errors: &mut Errors) {
    let min_rank = if spec.introduced.is_some() { 1 } else { 0 };
    let check_range = |r: (i128, i128, crate::diag::Span), errors: &mut Errors| {
        if r.0 < min_rank || r.1 > 8 || r.0 > r.1 {
            errors.error(
                r.2,
                format!("rank range {}..={} is outside {min_rank}..=8", r.0, r.1),
            );
        }
    };
    for e in &spec.support {
        check_range(e.ranks, errors);
        for (ti, t) in spec.tensors.iter().enumerate() {
            let rows: Vec<_> = e.rows.iter().filter(|r| r.tensor == ti).collect();
            match rows.len() {
                0 => errors.error(
                    e.span,
                    format!("support entry has no row for tensor `{}`", t.name),
                ),
                1 => {}
                _ => errors.error(
                    rows[1].span,
                    format!("tensor `{}` has two rows in one support entry", t.name),
                ),
            }
        }
        for r in &e.rows {
            if r.dtypes.is_empty() {
                errors.error(
                    r.span,
                    format!(
                        "tensor `{}` lists no data types",
                        spec.tensors[r.tensor].name
                    ),
                );
            }
            if let Some(rr) = r.ranks {
                check_range(rr, errors);
            }
        }
    }
}

/// Every output has a `shape` rule, so the builder can infer it, except a
/// `given` one: the caller gives its sizes and `require` rules check them
/// (lowering refuses a `shape` rule for it).
///
/// ```text
/// output output: tensor "OutputTensor"                 // shape output = [..] => "..";
/// output outputs: given tensor[1..=6] "OutputTensors"  // require .. outputs.sizes ..
/// ```
fn check_outputs(spec: &Spec, errors: &mut Errors) {
    for (i, t) in spec
        .tensors
        .iter()
        .enumerate()
        .filter(|(_, t)| t.output && !t.given)
    {
        if !spec
            .steps
            .iter()
            .any(|s| matches!(s, Step::Shape { tensor, .. } if *tensor == i))
        {
            errors.push(
                Diagnostic::new(t.span, format!("output `{}` has no `shape` rule", t.name)).help(
                    format!("add `shape {} = [...] => \"...\";` to `rules`", t.name),
                ),
            );
        }
    }
}

/// The pattern's tensors admit the table's data types: a reduce keeping
/// values outputs the input's type, one keeping indices outputs integers;
/// gathers and scatters move one data type and read integer indices.
fn check_compute(spec: &Spec, errors: &mut Errors) {
    match &spec.compute {
        Some(Compute::Switch { attr, arms }) => {
            for (members, c) in arms {
                check_compute(&spec.arm(*attr, members, c), errors);
            }
        }
        Some(Compute::Pattern(p)) => p.check(spec, errors),
        None => {}
    }
}

/// Tensors `a` and `b` list the same data types in every support entry
/// (`b` `what` `a`: "keeps values of").
pub(crate) fn same_types(spec: &Spec, a: usize, b: usize, what: &str, errors: &mut Errors) {
    for e in &spec.support {
        let ra = e.rows.iter().find(|r| r.tensor == a);
        let rb = e.rows.iter().find(|r| r.tensor == b);
        if let (Some(ra), Some(rb)) = (ra, rb) {
            if ra.dtypes != rb.dtypes {
                errors.error(
                    rb.span,
                    format!(
                        "`{}` {what} `{}`: both must list the same data types",
                        spec.tensors[b].name, spec.tensors[a].name
                    ),
                );
            }
        }
    }
}

/// Tensor `t` holds indices: its rows list integers only.
pub(crate) fn integer_types(spec: &Spec, t: usize, errors: &mut Errors) {
    for e in &spec.support {
        for r in e.rows.iter().filter(|r| r.tensor == t) {
            if r.dtypes.iter().any(|d| d.is_float()) {
                errors.error(
                    r.span,
                    format!(
                        "`{}` holds indices: its data types must be integers",
                        spec.tensors[t].name
                    ),
                );
            }
        }
    }
}
