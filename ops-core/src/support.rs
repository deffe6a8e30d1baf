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
    /// The level from which the entry applies, until the next higher entry.
    pub level: Option<FeatureLevel>,
    /// Admitted dimension counts, inclusive.
    pub ranks: (u8, u8),
    /// The tensors' rows.
    pub tensors: &'static [TensorSupport],
}

/// A whole table, highest level first.
#[derive(Debug)]
pub struct SupportTable {
    /// The operator's name.
    pub operator: &'static str,
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
    /// The entry that applies at `level`.
    pub fn entry(&self, level: FeatureLevel) -> Option<&'static SupportEntry> {
        self.entries
            .iter()
            .find(|e| e.level.is_none_or(|l| l <= level))
    }

    /// Checks every tensor against the entry for `level`.
    pub fn check(
        &self,
        level: FeatureLevel,
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
        let Some(entry) = self.entry(level) else {
            return Err(fail(
                format!(
                    "{} has no tensor support table at feature level {level}",
                    self.operator
                ),
                format!("the requested feature level is {level}"),
            ));
        };
        let at = entry
            .level
            .map(|l| format!(" at feature level {l}"))
            .unwrap_or_default();
        for row in entry.tensors {
            let t = tensors[row.tensor];
            let seed = self.seed_names[row.tensor];
            let name = self.tensor_names[row.tensor];
            let (lo, hi) = row.ranks.unwrap_or(entry.ranks);
            let rank = t.rank();
            if rank < lo as usize || rank > hi as usize {
                let allowed = if lo == hi {
                    format!("{lo}")
                } else {
                    format!("{lo} to {hi}")
                };
                return Err(fail(
                    format!("{seed}.DimensionCount must be {allowed}{at}"),
                    format!("`rank({name})` is {rank}"),
                ));
            }
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

    /// The lowest known level at which [`SupportTable::check`] passes.
    pub fn min_level(&self, tensors: &[&TensorDesc]) -> Option<FeatureLevel> {
        FeatureLevel::ALL
            .into_iter()
            .find(|&l| self.check(l, tensors).is_ok())
    }
}
