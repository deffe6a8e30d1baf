//! DirectML feature levels.

use std::fmt;

/// A DirectML feature level such as `3.0`; ordered as the levels are.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FeatureLevel {
    /// Major version.
    pub major: u8,
    /// Minor version.
    pub minor: u8,
}

impl FeatureLevel {
    /// Feature level 1.0.
    pub const FL1_0: FeatureLevel = FeatureLevel::new(1, 0);
    /// Feature level 2.0.
    pub const FL2_0: FeatureLevel = FeatureLevel::new(2, 0);
    /// Feature level 2.1.
    pub const FL2_1: FeatureLevel = FeatureLevel::new(2, 1);
    /// Feature level 3.0.
    pub const FL3_0: FeatureLevel = FeatureLevel::new(3, 0);
    /// Feature level 3.1.
    pub const FL3_1: FeatureLevel = FeatureLevel::new(3, 1);
    /// Feature level 4.0.
    pub const FL4_0: FeatureLevel = FeatureLevel::new(4, 0);
    /// Feature level 4.1.
    pub const FL4_1: FeatureLevel = FeatureLevel::new(4, 1);
    /// Feature level 5.0.
    pub const FL5_0: FeatureLevel = FeatureLevel::new(5, 0);
    /// Feature level 5.1.
    pub const FL5_1: FeatureLevel = FeatureLevel::new(5, 1);
    /// Feature level 5.2.
    pub const FL5_2: FeatureLevel = FeatureLevel::new(5, 2);
    /// Feature level 6.0.
    pub const FL6_0: FeatureLevel = FeatureLevel::new(6, 0);

    /// Every level the project knows, lowest first.
    pub const ALL: [FeatureLevel; 11] = [
        FeatureLevel::FL1_0,
        FeatureLevel::FL2_0,
        FeatureLevel::FL2_1,
        FeatureLevel::FL3_0,
        FeatureLevel::FL3_1,
        FeatureLevel::FL4_0,
        FeatureLevel::FL4_1,
        FeatureLevel::FL5_0,
        FeatureLevel::FL5_1,
        FeatureLevel::FL5_2,
        FeatureLevel::FL6_0,
    ];

    /// The highest level the project knows.
    pub const HIGHEST: FeatureLevel = FeatureLevel::FL6_0;

    /// A level from its two numbers.
    pub const fn new(major: u8, minor: u8) -> FeatureLevel {
        FeatureLevel { major, minor }
    }

    /// Parses `"3.0"`, `"3_0"` or `"FL3_0"` (only levels in [`FeatureLevel::ALL`]).
    pub fn parse(s: &str) -> Option<FeatureLevel> {
        let s = s.trim();
        let s = s
            .strip_prefix("FL")
            .or_else(|| s.strip_prefix("fl"))
            .unwrap_or(s);
        let (a, b) = s.split_once(['.', '_'])?;
        let level = FeatureLevel::new(a.parse().ok()?, b.parse().ok()?);
        FeatureLevel::ALL.contains(&level).then_some(level)
    }
}

impl fmt::Display for FeatureLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_order() {
        assert_eq!(FeatureLevel::parse("3.0"), Some(FeatureLevel::FL3_0));
        assert_eq!(FeatureLevel::parse("FL4_1"), Some(FeatureLevel::FL4_1));
        assert_eq!(FeatureLevel::parse("3.7"), None);
        assert!(FeatureLevel::FL2_1 < FeatureLevel::FL3_0);
        assert!(FeatureLevel::ALL.windows(2).all(|w| w[0] < w[1]));
    }
}
