//! The corpus: runs that reached something new, kept as schedules on disk
//! (`.seedfall/corpus/<config>/<seed>-<id>.json`, or `-corpus DIR`) so the
//! next exploration starts where this one stopped.
//!
//! Each entry is written atomically. An entry that cannot be read, or whose
//! faults no longer fit the config (a node was renamed), is skipped and
//! counted as stale, never fatal.
//!
//! In memory, the corpus also knows each signal's **best branch point**: the
//! entry that reached it earliest in virtual time (as early with fewer
//! faults; for a watermark, the best value, then the earliest). A run joins
//! the corpus when it becomes the best branch point of at least one signal
//! (a signal no run reached before always does), and a later run that does
//! better takes that signal over. Entries loaded from disk are run again in
//! round 1 and join like any other run, so what they reach is measured, not
//! trusted.
use super::signals::{beats, Reached, Signal};
use std::collections::BTreeMap;
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
    /// The run's faults were drawn from the config's rates: its schedule
    /// leaves them out (they come again from the seed), so a child that
    /// re-keys the faults stream draws the faults after that moment again.
    /// `faults` still lists what the run applied.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub drawn: bool,
    /// What the run reached, with times where known (functions excluded:
    /// they are re-derived by running).
    pub reached: Vec<Reached>,
    /// Draws the run made from each stream (`Stream` order); not stored:
    /// a loaded entry is run again before it is used.
    #[serde(skip)]
    pub stream_draws: Vec<u64>,
}

impl Entry {
    /// An entry for the run of `schedule` (its input: faults left out when
    /// they were drawn from the rates) that applied `applied` faults.
    pub fn new(config: &str, schedule: &Schedule, applied: &[Fault], end_ns: u64, reached: &[Reached]) -> Entry {
        let drawn = schedule.faults.is_none();
        let faults = applied.to_vec();
        let key = serde_json::to_vec(&(schedule.seed, &faults, &schedule.branches)).unwrap();
        let id = hash_hex(&[&key])[..12].to_string();
        let reached = reached.iter().filter(|r| !r.signal.is_coverage()).cloned().collect();
        Entry { version: CORPUS_VERSION, config: config.to_string(), id, seed: schedule.seed, faults, branches: schedule.branches.clone(), end_ns, drawn, reached, stream_draws: Vec::new() }
    }

    pub fn schedule(&self) -> Schedule {
        let faults = if self.drawn { None } else { Some(self.faults.clone()) };
        Schedule { seed: self.seed, faults, branches: self.branches.clone(), prefix: None }
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

/// Where a signal is best branched from.
#[derive(Clone, Debug, PartialEq)]
pub struct Best {
    pub entry: usize,
    pub at_ns: u64,
    pub faults: usize,
    pub value: Option<f64>,
}

impl Best {
    /// Whether reaching the signal at `at_ns` with `faults` faults (and
    /// `value`, for a watermark) is a better branch point than this one.
    fn beaten_by(&self, signal: &Signal, at_ns: u64, faults: usize, value: Option<f64>) -> bool {
        if let (Some(v), Some(best)) = (value, self.value) {
            if beats(signal, v, best) {
                return true;
            }
            if v != best {
                return false;
            }
        }
        (at_ns, faults) < (self.at_ns, self.faults)
    }
}

/// The entries of this exploration and each signal's best branch point.
#[derive(Default)]
pub struct Corpus {
    pub entries: Vec<Entry>,
    pub best: BTreeMap<Signal, Best>,
    /// Entry index by id.
    ids: BTreeMap<String, usize>,
}

impl Corpus {
    fn better<'a>(&self, reached: &'a [Reached], faults: usize) -> impl Iterator<Item = &'a Reached> + use<'a, '_> {
        reached
            .iter()
            .filter(|r| r.at_ns.is_some())
            .filter(move |r| self.best.get(&r.signal).is_none_or(|b| b.beaten_by(&r.signal, r.at_ns.unwrap(), faults, r.value)))
    }

    /// Whether a run with `faults` faults that reached `reached` would join
    /// (checked before an entry is built: most runs do not).
    pub fn improves(&self, reached: &[Reached], faults: usize) -> bool {
        self.better(reached, faults).next().is_some()
    }

    /// Offers a run that reached `reached`: when it is a better branch point
    /// for any signal, it joins (once per schedule) and takes those signals
    /// over. Returns the entry's index and whether it is new. At
    /// `ENTRIES_MAX` entries, it takes the place of one others have beaten
    /// on every signal; with none such, it is left out.
    pub fn offer(&mut self, entry: Entry, reached: &[Reached]) -> Option<(usize, bool)> {
        let faults = entry.faults.len();
        let better: Vec<&Reached> = self.better(reached, faults).collect();
        if better.is_empty() {
            return None;
        }
        let (idx, fresh) = match self.ids.get(&entry.id) {
            Some(&i) => (i, false),
            None if self.entries.len() < ENTRIES_MAX => {
                self.ids.insert(entry.id.clone(), self.entries.len());
                self.entries.push(entry);
                (self.entries.len() - 1, true)
            }
            None => {
                let live: std::collections::BTreeSet<usize> = self.best.values().map(|b| b.entry).collect();
                let dead = (0..self.entries.len()).find(|i| !live.contains(i))?;
                self.ids.remove(&self.entries[dead].id);
                self.ids.insert(entry.id.clone(), dead);
                self.entries[dead] = entry;
                (dead, true)
            }
        };
        for r in better {
            self.best.insert(r.signal.clone(), Best { entry: idx, at_ns: r.at_ns.unwrap(), faults, value: r.value });
        }
        Some((idx, fresh))
    }

    /// Entries that are the best branch point of at least one signal.
    #[cfg(test)]
    pub fn live(&self) -> usize {
        self.best.values().map(|b| b.entry).collect::<std::collections::BTreeSet<_>>().len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(signal: &Signal, at_ns: u64, value: Option<f64>) -> Reached {
        Reached { signal: signal.clone(), at_ns: Some(at_ns), value }
    }

    fn entry(seed: u64, faults: usize) -> Entry {
        let f: Vec<Fault> = (0..faults).map(|i| Fault::Pause { node: "n".into(), at_ns: i as u64, duration_ns: 1 }).collect();
        Entry::new("c", &Schedule { seed, faults: Some(f.clone()), branches: Vec::new(), prefix: None }, &f, 100, &[])
    }

    #[test]
    fn an_earlier_or_leaner_run_becomes_the_branch_point() {
        let s = Signal::Function { node: "n".into(), index: 7 };
        let mut c = Corpus::default();
        assert_eq!(c.offer(entry(1, 2), &[at(&s, 50, None)]), Some((0, true)), "new: joins");
        assert_eq!(c.offer(entry(2, 0), &[at(&s, 60, None)]), None, "later, even with fewer faults: no");
        assert_eq!(c.offer(entry(3, 5), &[at(&s, 40, None)]), Some((1, true)), "earlier: takes over");
        assert_eq!(c.best[&s].entry, 1);
        assert_eq!(c.offer(entry(4, 1), &[at(&s, 40, None)]), Some((2, true)), "as early with fewer faults: takes over");
        assert_eq!(c.offer(entry(5, 1), &[at(&s, 40, None)]), None, "a tie keeps the first");
        assert_eq!((c.best[&s].entry, c.best[&s].at_ns, c.best[&s].faults), (2, 40, 1));
        assert_eq!(c.live(), 1, "entries 0 and 1 are nobody's best any more");
    }

    #[test]
    fn a_watermark_goes_to_the_best_value_then_the_earliest() {
        let w = Signal::Watermark { name: "x".into(), maximize: true };
        let mut c = Corpus::default();
        c.offer(entry(1, 0), &[at(&w, 50, Some(3.0))]);
        assert_eq!(c.offer(entry(2, 0), &[at(&w, 10, Some(2.0))]), None, "a lower maximum, even earlier: no");
        assert!(c.offer(entry(3, 0), &[at(&w, 90, Some(4.0))]).is_some(), "a higher maximum, even later");
        assert!(c.offer(entry(4, 0), &[at(&w, 80, Some(4.0))]).is_some(), "the same maximum earlier");
        assert_eq!((c.best[&w].entry, c.best[&w].value), (2, Some(4.0)));
    }

    #[test]
    fn a_full_corpus_reuses_the_place_of_an_entry_beaten_on_everything() {
        let f = |i: u32| Signal::Function { node: "n".into(), index: i };
        let mut c = Corpus::default();
        c.offer(entry(0, 0), &[at(&f(0), 50, None)]);
        c.offer(entry(1, 0), &[at(&f(0), 40, None)]);
        for i in 2..ENTRIES_MAX as u64 {
            c.offer(entry(i, 0), &[at(&f(i as u32), 10, None)]);
        }
        assert_eq!(c.entries.len(), ENTRIES_MAX);
        let s = f(u32::MAX);
        assert_eq!(c.offer(entry(u64::MAX, 0), &[at(&s, 10, None)]), Some((0, true)), "entry 0 was nobody's best");
        assert_eq!(c.entries[0].seed, u64::MAX);
        assert_eq!(c.offer(entry(u64::MAX - 1, 0), &[at(&f(u32::MAX - 1), 10, None)]), None, "no place left: every entry is someone's best");
    }
}
