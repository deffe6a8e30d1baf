//! Tensor support tables: which data types and dimension counts each feature
//! level admits, checked by generated `validate`.

use crate::{DataType, FeatureLevel, TensorDesc, ValidationError};

/// One tensor's row in a support table entry.
#[derive(Debug)]
pub struct TensorSupport {
    /// The tensor, by spec order (inputs then outputs).
    pub tensor: usize,
    /// The admitted data types.
    pub dtypes: &'static [DataType],
    /// The admitted dimension counts, inclusive; `None` means the entry's.
    pub ranks: Option<(u8, u8)>,
}

/// One entry of a support table: a feature level (or none, for operators
/// without levels) and what it admits.
#[derive(Debug)]
pub struct SupportEntry {
    /// The members of the table's [`Selector`] attribute the entry applies
    /// to (`when function in [MIN, MAX]` in the spec); empty for every
    /// descriptor.
    pub when: &'static [u32],
    /// The level from which the entry applies, until the next higher entry
    /// of the same `when`.
    pub level: Option<FeatureLevel>,
    /// Admitted dimension counts, inclusive.
    pub ranks: (u8, u8),
    /// The tensors' rows.
    pub tensors: &'static [TensorSupport],
}

/// The enum attribute whose value picks a table's entries, when they depend
/// on it (DirectML REDUCE's tables depend on `Function`).
#[derive(Debug)]
pub struct Selector {
    /// The attribute, by spec order.
    pub attr: usize,
    /// Its snake-case name.
    pub name: &'static str,
    /// Its name as the seed document writes it (`Function`).
    pub seed: &'static str,
    /// Its members, in spec order.
    pub members: &'static [&'static str],
}

/// A whole table, highest level first.
#[derive(Debug)]
pub struct SupportTable {
    /// The operator's name.
    pub operator: &'static str,
    /// The attribute that picks entries, if any does.
    pub selector: Option<Selector>,
    /// The level that introduced it.
    pub introduced: Option<FeatureLevel>,
    /// Entries, highest level first.
    pub entries: &'static [SupportEntry],
    /// Tensor names (snake case) in spec order.
    pub tensor_names: &'static [&'static str],
    /// Tensor names as the seed document writes them (`InputTensor`).
    pub seed_names: &'static [&'static str],
}

impl SupportTable {
    /// Whether `entry` applies to a descriptor whose selector attribute is
    /// `member` (`None`: any member, or no selector).
    pub fn applies(entry: &SupportEntry, member: Option<u32>) -> bool {
        entry.when.is_empty() || member.is_none_or(|m| entry.when.contains(&m))
    }

    /// The entry that applies at `level` to a descriptor whose selector
    /// attribute is `member` (`None` for tables without a selector).
    pub fn entry(&self, level: FeatureLevel, member: Option<u32>) -> Option<&'static SupportEntry> {
        self.entries
            .iter()
            .find(|e| Self::applies(e, member) && e.level.is_none_or(|l| l <= level))
    }

    /// The selector's member in `args` (by name, ignoring case), if the
    /// table has a selector and `args` sets it.
    pub fn member_of(&self, args: &crate::OpArgs) -> Option<u32> {
        let sel = self.selector.as_ref()?;
        match args.attributes.get(sel.name) {
            Some(crate::AttrValue::Enum(m)) => sel
                .members
                .iter()
                .position(|x| x.eq_ignore_ascii_case(m))
                .map(|i| i as u32),
            _ => None,
        }
    }

    /// ` when Function is SUM` for a selected member, else empty.
    fn when_text(&self, entry: &SupportEntry, member: Option<u32>) -> String {
        match (&self.selector, member) {
            (Some(sel), Some(m)) if !entry.when.is_empty() => format!(
                " when {} is {}",
                sel.seed,
                sel.members.get(m as usize).copied().unwrap_or("?")
            ),
            _ => String::new(),
        }
    }

    /// Checks every tensor against the entry for `level` and the selector's
    /// `member`.
    pub fn check(
        &self,
        level: FeatureLevel,
        member: Option<u32>,
        tensors: &[&TensorDesc],
    ) -> Result<(), ValidationError> {
        let fail = |rule: String, detail: String| ValidationError {
            operator: self.operator,
            rule,
            detail,
        };
        if let Some(intro) = self.introduced {
            if level < intro {
                return Err(fail(
                    format!("{} was introduced in feature level {intro}", self.operator),
                    format!("the requested feature level is {level}"),
                ));
            }
        }
        let Some(entry) = self.entry(level, member) else {
            let when = match (&self.selector, member) {
                (Some(sel), Some(m)) => format!(
                    " when {} is {}",
                    sel.seed,
                    sel.members.get(m as usize).copied().unwrap_or("?")
                ),
                _ => String::new(),
            };
            return Err(fail(
                format!(
                    "{} has no tensor support table at feature level {level}{when}",
                    self.operator
                ),
                format!("the requested feature level is {level}"),
            ));
        };
        let at = entry
            .level
            .map(|l| format!(" at feature level {l}"))
            .unwrap_or_default()
            + &self.when_text(entry, member);
        for row in entry.tensors {
            let t = tensors[row.tensor];
            let seed = self.seed_names[row.tensor];
            let name = self.tensor_names[row.tensor];
            self.check_rank(row.tensor, t, row.ranks.unwrap_or(entry.ranks), &at)?;
            if !row.dtypes.contains(&t.dtype) {
                let list: Vec<&str> = row.dtypes.iter().map(|d| d.spec_name()).collect();
                return Err(fail(
                    format!("{seed}.DataType must be one of {}{at}", list.join(", ")),
                    format!("`dtype({name})` is {}", t.dtype),
                ));
            }
        }
        Ok(())
    }

    /// The highest dimension count any entry admits for any tensor.
    pub fn max_rank(&self) -> usize {
        self.entries
            .iter()
            .flat_map(|e| {
                std::iter::once(e.ranks.1)
                    .chain(e.tensors.iter().filter_map(|r| r.ranks.map(|r| r.1)))
            })
            .max()
            .map_or(0, usize::from)
    }

    /// Refuses an input (one of the first `inputs` tensors) whose dimension
    /// count exceeds [`SupportTable::max_rank`], with the rule
    /// [`SupportTable::check`] gives for its rank: that of the entry for
    /// `level`, or with `None` the widest range any entry admits for it.
    ///
    /// Generated code runs it before the spec's rules, which iterate over
    /// dimensions, so that a huge rank is refused in time independent of
    /// it. Lower ranks are left to the rules and to
    /// [`SupportTable::check`], in spec order.
    pub fn check_input_ranks(
        &self,
        level: Option<FeatureLevel>,
        member: Option<u32>,
        tensors: &[&TensorDesc],
        inputs: usize,
    ) -> Result<(), ValidationError> {
        let max = self.max_rank();
        for (i, t) in tensors.iter().enumerate().take(inputs) {
            if t.rank() <= max {
                continue;
            }
            let entry = level.and_then(|l| self.entry(l, member));
            let at = entry
                .and_then(|e| e.level)
                .map(|l| format!(" at feature level {l}"))
                .unwrap_or_default()
                + &entry.map(|e| self.when_text(e, member)).unwrap_or_default();
            let of_entry = |e: &SupportEntry| {
                e.tensors
                    .iter()
                    .find(|r| r.tensor == i)
                    .map(|r| r.ranks.unwrap_or(e.ranks))
            };
            let ranks = match entry {
                Some(e) => of_entry(e),
                None => self
                    .entries
                    .iter()
                    .filter_map(of_entry)
                    .reduce(|(a, b), (c, d)| (a.min(c), b.max(d))),
            };
            self.check_rank(i, t, ranks.unwrap_or((0, max.min(255) as u8)), &at)?;
        }
        Ok(())
    }

    /// Tensor `i`'s dimension count against `(lo, hi)`, inclusive; `at`
    /// ends the rule (` at feature level 3.0`, or empty).
    fn check_rank(
        &self,
        i: usize,
        t: &TensorDesc,
        (lo, hi): (u8, u8),
        at: &str,
    ) -> Result<(), ValidationError> {
        let rank = t.rank();
        if rank >= lo as usize && rank <= hi as usize {
            return Ok(());
        }
        let allowed = if lo == hi {
            format!("{lo}")
        } else {
            format!("{lo} to {hi}")
        };
        Err(ValidationError {
            operator: self.operator,
            rule: format!(
                "{}.DimensionCount must be {allowed}{at}",
                self.seed_names[i]
            ),
            detail: format!("`rank({})` is {rank}", self.tensor_names[i]),
        })
    }

    /// The lowest known level at which [`SupportTable::check`] passes.
    pub fn min_level(&self, member: Option<u32>, tensors: &[&TensorDesc]) -> Option<FeatureLevel> {
        FeatureLevel::ALL
            .into_iter()
            .find(|&l| self.check(l, member, tensors).is_ok())
    }
}
