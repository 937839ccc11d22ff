//! Shards: one machine's deterministic share of a sweep, an exploration or
//! a mutation run (`-shard i/n`), and what makes shard results mergeable.
//!
//! A sweep's seeds are dealt round-robin: shard `i` of `n` runs the seeds
//! whose offset in the range is `i-1` modulo `n`. Every seed's cost is drawn
//! from the same distribution (a seed is a random key, not a size), so
//! dealing them one by one gives every shard the same expected work and
//! shares that differ by at most one seed, wherever in the range slow seeds
//! happen to cluster. A contiguous split would hand one shard a whole
//! cluster.
//!
//! A shard's result names everything it must agree on with the other
//! shards before a merge may add them up (`Identity`): the binary, the
//! program (config, modules, seeded disks) and the options that change what
//! a run does. `seedfall merge` refuses a set that disagrees on any.
use serde::{Deserialize, Serialize};
use std::fmt;

/// Bound on shards of one piece of work.
pub const SHARDS_MAX: u32 = 100_000;

/// Shard `index` (from 1) of `count`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Shard {
    pub index: u32,
    pub count: u32,
}

impl Shard {
    /// `2/8`: the second of eight shards.
    pub fn parse(text: &str) -> Result<Shard, String> {
        let bad = || format!("expected i/n such as 2/8 (shard i of n, i from 1 to n), found \"{text}\"");
        let (i, n) = text.split_once('/').ok_or_else(bad)?;
        let index: u32 = i.trim().parse().map_err(|_| bad())?;
        let count: u32 = n.trim().parse().map_err(|_| bad())?;
        if count == 0 || count > SHARDS_MAX {
            return Err(format!("expected 1 to {SHARDS_MAX} shards, found {count} in \"{text}\""));
        }
        if index == 0 || index > count {
            return Err(format!("shard {index} of {count} does not exist: shards are numbered 1 to {count} (found \"{text}\")"));
        }
        Ok(Shard { index, count })
    }

    /// How many of `total` items (by offset) are this shard's.
    pub fn len_of(&self, total: u64) -> u64 {
        let first = u64::from(self.index - 1);
        if total <= first { 0 } else { (total - first - 1) / u64::from(self.count) + 1 }
    }

    /// The offset in the whole of this shard's `i`-th item.
    pub fn offset(&self, i: u64) -> u64 {
        u64::from(self.index - 1) + i * u64::from(self.count)
    }

    /// Whether the item at `offset` of the whole is this shard's.
    pub fn owns(&self, offset: u64) -> bool {
        offset % u64::from(self.count) == u64::from(self.index - 1)
    }

    /// The exploration seed of this shard: its own stream of choices, the
    /// same for a given exploration seed and shard, and never the same as
    /// another shard's (or the unsharded exploration's, shard 1 aside:
    /// `-shard 1/1` explores exactly as no shard at all).
    pub fn explore_seed(&self, explore_seed: u64) -> u64 {
        if self.index == 1 {
            return explore_seed;
        }
        // splitmix64 of (seed, index): consecutive shards get unrelated streams.
        let mut z = explore_seed ^ (u64::from(self.index) << 40) ^ 0x9e37_79b9_7f4a_7c15;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// What every shard of one piece of work must share for a merge to be the
/// unsharded answer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Identity {
    /// `run`, `explore` or `mutate`.
    pub command: String,
    /// seedfall's version and a digest of its executable: two builds of
    /// one version may run differently.
    pub seedfall: String,
    /// `Project::digest`: the config, its modules and seeded disks.
    pub program: String,
    /// The options that change what runs do, in one canonical line.
    pub options: String,
}

/// seedfall's version and a digest of the running executable, computed once.
pub fn build_id() -> String {
    static ID: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    ID.get_or_init(|| {
        let digest = std::env::current_exe()
            .ok()
            .and_then(|p| seedfall_sim::files::read_bytes(&p, EXECUTABLE_BYTES_MAX, "the seedfall executable").ok())
            .map(|b| crate::cache::hash_hex(&[&b]))
            .unwrap_or_else(|| "unknown".into());
        format!("{} ({digest})", env!("CARGO_PKG_VERSION"))
    })
    .clone()
}

/// Bound on the executable read for its digest.
const EXECUTABLE_BYTES_MAX: u64 = 1 << 30;

/// Why a set of shard results cannot be merged, if it cannot: shards
/// missing or given twice, or results of different work. `shards` holds
/// each result's file name, shard and identity.
pub fn check_set(shards: &[(String, Shard, Identity)]) -> Result<(), String> {
    let Some((first_file, first, identity)) = shards.first() else {
        return Err("no shard results given".into());
    };
    for (file, shard, id) in shards {
        if shard.count != first.count {
            return Err(format!("{file} is shard {shard} and {first_file} is shard {first}: they are shards of different splits"));
        }
        for (what, a, b) in [
            ("command", &id.command, &identity.command),
            ("seedfall build", &id.seedfall, &identity.seedfall),
            ("program (config, modules or seeded disks)", &id.program, &identity.program),
            ("options", &id.options, &identity.options),
        ] {
            if a != b {
                return Err(format!("{file} and {first_file} differ in their {what}: {a:?} against {b:?}; merge only shards of one piece of work, run by one seedfall build"));
            }
        }
    }
    let mut by_index: std::collections::BTreeMap<u32, Vec<&str>> = std::collections::BTreeMap::new();
    for (file, shard, _) in shards {
        by_index.entry(shard.index).or_default().push(file);
    }
    let twice: Vec<String> = by_index.iter().filter(|(_, f)| f.len() > 1).map(|(i, f)| format!("shard {i}/{} in {}", first.count, f.join(" and "))).collect();
    if !twice.is_empty() {
        return Err(format!("given twice: {}", twice.join("; ")));
    }
    if let Some((i, _)) = by_index.iter().find(|(i, _)| **i == 0 || **i > first.count) {
        return Err(format!("shard {i}/{} cannot be: shards are numbered 1 to {}", first.count, first.count));
    }
    // Counted, not listed: a count is at most SHARDS_MAX, but a list of that
    // many missing shards says nothing the first few do not.
    let missing = first.count as usize - by_index.len();
    if missing > 0 {
        const SHOWN: usize = 20;
        let shown: Vec<String> = (1..=first.count).filter(|i| !by_index.contains_key(i)).take(SHOWN).map(|i| format!("{i}/{}", first.count)).collect();
        let more = if missing > SHOWN { format!(" and {} more", missing - SHOWN) } else { String::new() };
        return Err(format!("missing shard{} {}{more} (of {} given)", if missing == 1 { "" } else { "s" }, shown.join(", "), shards.len()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_partition_the_range_evenly() {
        for total in [0u64, 1, 7, 8, 9, 1000] {
            for count in [1u32, 2, 3, 8, 13] {
                let mut seen = vec![0u32; total as usize];
                let mut sizes = Vec::new();
                for index in 1..=count {
                    let s = Shard { index, count };
                    sizes.push(s.len_of(total));
                    for i in 0..s.len_of(total) {
                        let off = s.offset(i);
                        assert!(s.owns(off));
                        seen[off as usize] += 1;
                    }
                }
                assert!(seen.iter().all(|&n| n == 1), "total {total} count {count}");
                assert!(sizes.iter().max().unwrap() - sizes.iter().min().unwrap() <= 1);
            }
        }
    }

    #[test]
    fn parses_and_says_what_is_wrong() {
        assert_eq!(Shard::parse("2/8").unwrap(), Shard { index: 2, count: 8 });
        assert!(Shard::parse("0/8").unwrap_err().contains("numbered 1 to 8"));
        assert!(Shard::parse("9/8").unwrap_err().contains("does not exist"));
        assert!(Shard::parse("3").is_err());
        assert!(Shard::parse("1/0").is_err());
    }

    #[test]
    fn exploration_seeds_differ_by_shard() {
        let seeds: std::collections::BTreeSet<u64> = (1..=64).map(|i| Shard { index: i, count: 64 }.explore_seed(1)).collect();
        assert_eq!(seeds.len(), 64);
        assert_eq!(Shard { index: 1, count: 4 }.explore_seed(7), 7);
    }

    #[test]
    fn a_set_names_missing_duplicate_and_foreign_shards() {
        let id = |p: &str| Identity { command: "run".into(), seedfall: "0.1.0 (x)".into(), program: p.into(), options: "seeds=1-10".into() };
        let s = |i| Shard { index: i, count: 3 };
        let ok = vec![("a".to_string(), s(1), id("p")), ("b".to_string(), s(2), id("p")), ("c".to_string(), s(3), id("p"))];
        assert!(check_set(&ok).is_ok());
        assert!(check_set(&ok[..2]).unwrap_err().contains("missing shard 3/3"));
        let mut twice = ok.clone();
        twice.push(("d".into(), s(2), id("p")));
        assert!(check_set(&twice).unwrap_err().contains("shard 2/3 in b and d"));
        let mut foreign = ok.clone();
        foreign[2].2 = id("q");
        assert!(check_set(&foreign).unwrap_err().contains("c and a differ in their program"));
    }
}
