//! Seed ranges as users write them: `17`, `1-200`.
use std::fmt;

/// Bound on seeds in one sweep.
pub const SEEDS_MAX: u64 = 100_000_000;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SeedRange {
    pub first: u64,
    /// Inclusive.
    pub last: u64,
    /// `-shard i/n`: only this shard's share of the range (`shard.rs`).
    /// `Display` still shows the whole range: it names the work.
    pub shard: Option<crate::shard::Shard>,
}

impl SeedRange {
    pub fn parse(text: &str) -> Result<SeedRange, String> {
        let bad = || format!("expected a seed like 17 or a range like 1-200, found \"{text}\"");
        let (a, b) = match text.split_once('-') {
            Some((a, b)) => (a.trim(), b.trim()),
            None => (text.trim(), text.trim()),
        };
        let first: u64 = a.parse().map_err(|_| bad())?;
        let last: u64 = b.parse().map_err(|_| bad())?;
        if last < first {
            return Err(format!("the seed range {text} is empty: {last} is below {first}"));
        }
        if last - first >= SEEDS_MAX {
            return Err(format!("the seed range {text} holds more than {SEEDS_MAX} seeds"));
        }
        Ok(SeedRange { first, last, shard: None })
    }

    /// Whether this range runs `seed` (with a shard: whether it is the
    /// shard's).
    pub fn contains(&self, seed: u64) -> bool {
        self.first <= seed && seed <= self.last && self.shard.is_none_or(|s| s.owns(seed - self.first))
    }

    /// Seeds this range runs (the shard's share, with a shard).
    pub fn len(&self) -> u64 {
        match self.shard {
            None => self.total(),
            Some(s) => s.len_of(self.total()),
        }
    }

    /// Seeds of the whole range, shards or not.
    pub fn total(&self) -> u64 {
        self.last - self.first + 1
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn nth(&self, i: u64) -> u64 {
        assert!(i < self.len());
        match self.shard {
            None => self.first + i,
            Some(s) => self.first + s.offset(i),
        }
    }

    /// The `k`-th seed after the range that this shard would own if the
    /// range went on: where explore's fresh seeds continue a sweep.
    pub fn after(&self, k: u64) -> u64 {
        let past = self.last.saturating_add(1);
        match self.shard {
            None => past.saturating_add(k),
            Some(s) => past.saturating_add(s.offset(k)),
        }
    }

    pub fn with_shard(self, shard: Option<crate::shard::Shard>) -> SeedRange {
        SeedRange { shard, ..self }
    }
}

impl fmt::Display for SeedRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.first == self.last {
            write!(f, "{}", self.first)
        } else {
            write!(f, "{}-{}", self.first, self.last)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses() {
        assert_eq!(SeedRange::parse("1-200").unwrap(), SeedRange { first: 1, last: 200, shard: None });
        let third = SeedRange::parse("1-10").unwrap().with_shard(Some(crate::shard::Shard { index: 3, count: 4 }));
        assert_eq!((0..third.len()).map(|i| third.nth(i)).collect::<Vec<_>>(), vec![3, 7]);
        assert_eq!(third.to_string(), "1-10");
        assert_eq!(SeedRange::parse("17").unwrap().len(), 1);
        assert!(SeedRange::parse("5-1").is_err());
        assert!(SeedRange::parse("x").is_err());
    }
}
