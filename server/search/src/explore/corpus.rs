//! The corpus: runs that reached something new, kept as schedules on disk
//! (`.seedfall/corpus/<config>/<seed>-<id>.json`, or `-corpus DIR`) so the
//! next exploration starts where this one stopped.
//!
//! Each entry is written atomically. An entry that cannot be read, or whose
//! faults no longer fit the config (a node was renamed), is skipped and
//! counted as stale, never fatal.
use super::signals::Reached;
use crate::cache::{hash_hex, write_atomic};
use seedfall_sim::{check_fits, Branch, Config, Fault, Schedule};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

pub const CORPUS_VERSION: u32 = 1;
/// Bound on corpus entries loaded or kept.
pub const ENTRIES_MAX: usize = 100_000;

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    pub version: u32,
    pub config: String,
    pub id: String,
    pub seed: u64,
    pub faults: Vec<Fault>,
    #[serde(default)]
    pub branches: Vec<Branch>,
    /// Virtual time the run ended (re-keying picks moments before it).
    pub end_ns: u64,
    /// What the run reached, with times where known (functions excluded:
    /// they are re-derived by running).
    pub reached: Vec<Reached>,
}

impl Entry {
    pub fn new(config: &str, schedule: &Schedule, end_ns: u64, reached: Vec<Reached>) -> Entry {
        let faults = schedule.faults.clone().unwrap_or_default();
        let key = serde_json::to_vec(&(schedule.seed, &faults, &schedule.branches)).unwrap();
        let id = hash_hex(&[&key])[..12].to_string();
        let reached = reached.into_iter().filter(|r| !r.signal.is_function()).collect();
        Entry { version: CORPUS_VERSION, config: config.to_string(), id, seed: schedule.seed, faults, branches: schedule.branches.clone(), end_ns, reached }
    }

    pub fn schedule(&self) -> Schedule {
        Schedule { seed: self.seed, faults: Some(self.faults.clone()), branches: self.branches.clone() }
    }

    pub fn file_name(&self) -> String {
        format!("{}-{}.json", self.seed, self.id)
    }
}

pub fn default_dir(config: &Config) -> PathBuf {
    config.dir().join(".seedfall").join("corpus").join(&config.name)
}

pub fn write(dir: &Path, entry: &Entry) -> Result<PathBuf, String> {
    let path = dir.join(entry.file_name());
    write_atomic(&path, &serde_json::to_vec_pretty(entry).unwrap()).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(path)
}

/// Loads every entry in name order; returns the entries and the stale count.
pub fn load(dir: &Path, config: &Config) -> (Vec<Entry>, Vec<String>) {
    let Ok(read) = std::fs::read_dir(dir) else { return (Vec::new(), Vec::new()) };
    let mut paths: Vec<PathBuf> = read.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "json")).collect();
    paths.sort();
    let (mut entries, mut stale) = (Vec::new(), Vec::new());
    for p in paths.into_iter().take(ENTRIES_MAX) {
        let checked = seedfall_sim::files::read_text(&p, seedfall_sim::files::JSON_BYTES_MAX, "the corpus entry").and_then(|text| {
            let e: Entry = serde_json::from_str(&text).map_err(|e| format!("unreadable: {e}"))?;
            if e.version != CORPUS_VERSION {
                return Err(format!("version {} is not supported", e.version));
            }
            check_fits(&e.faults, &e.branches, config).map_err(|err| format!("no longer fits the config: {err}"))?;
            Ok(e)
        });
        match checked {
            Ok(e) => entries.push(e),
            Err(why) => stale.push(format!("{}: {why}", p.display())),
        }
    }
    (entries, stale)
}
