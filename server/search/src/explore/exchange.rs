//! Parallel exploration across machines (`explore -shard i/n -sync DIR`),
//! in AFL++'s manner: every shard explores with its own exploration seed
//! and, at round boundaries, hands the other shards the corpus entries it
//! found and runs theirs.
//!
//! After round `r`, shard `i` writes `DIR/shard-<i>/round-<r>.json`: the
//! entries that joined its corpus in that round (atomically, so a reader
//! sees all of them or none). It then reads the other shards' round files
//! it has not read, in shard order and then round order, and runs their
//! entries at the start of its next round, where they join its corpus like
//! any run that reaches something. A shard that stops writes
//! `DIR/shard-<i>/done.json`.
//!
//! What a shard imports is a function of the files it reads, never of the
//! order they appeared in. With `lockstep`, a shard waits after round `r`
//! until every other shard has written its round `r` (or stopped) and
//! imports exactly rounds up to `r`: the whole exploration is then the same
//! on every repetition, at any speed of any machine. Without it a shard
//! takes what is there, which never waits on a slow or queued shard; it is
//! then deterministic for a given set of files read.
use super::corpus::{Entry, CORPUS_VERSION};
use crate::cache::write_atomic;
use crate::shard::Shard;
use seedfall_sim::Config;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

pub const EXCHANGE_VERSION: u32 = 1;
/// Bound on entries imported at one boundary.
pub const IMPORT_MAX: usize = 10_000;
/// How often a waiting shard looks for the others' files.
const POLL: Duration = Duration::from_millis(5);

#[derive(Clone, Debug)]
pub struct Exchange {
    pub dir: PathBuf,
    pub shard: Shard,
    pub lockstep: bool,
    /// How long a lockstep shard waits for another before going on without
    /// it (and saying so).
    pub wait_max: Duration,
}

#[derive(Serialize, Deserialize)]
struct RoundFile {
    version: u32,
    shard: u32,
    round: u32,
    entries: Vec<Entry>,
}

#[derive(Serialize, Deserialize)]
struct DoneFile {
    version: u32,
    shard: u32,
    rounds: u32,
}

/// One shard's side of the exchange.
pub struct Exchanger {
    ex: Exchange,
    /// Entries that joined the corpus this round, by id.
    fresh: BTreeMap<String, Entry>,
    /// Per other shard: the last round read, and whether it is done.
    read: BTreeMap<u32, (u32, bool)>,
    /// Every entry id seen (its own and imported): nothing runs twice.
    seen: BTreeSet<String>,
    /// Shards no longer waited for.
    given_up: BTreeSet<u32>,
    pub imported: u64,
    pub notes: Vec<String>,
}

impl Exchanger {
    pub fn new(ex: Exchange) -> Exchanger {
        let read = (1..=ex.shard.count).filter(|&j| j != ex.shard.index).map(|j| (j, (0, false))).collect();
        Exchanger { ex, fresh: BTreeMap::new(), read, seen: BTreeSet::new(), given_up: BTreeSet::new(), imported: 0, notes: Vec::new() }
    }

    fn shard_dir(&self, j: u32) -> PathBuf {
        self.ex.dir.join(format!("shard-{j:05}"))
    }

    fn round_path(&self, j: u32, round: u32) -> PathBuf {
        self.shard_dir(j).join(format!("round-{round:06}.json"))
    }

    fn done_path(&self, j: u32) -> PathBuf {
        self.shard_dir(j).join("done.json")
    }

    /// An entry joined (or replaced one in) this shard's corpus.
    pub fn note(&mut self, e: &Entry) {
        self.seen.insert(e.id.clone());
        self.fresh.insert(e.id.clone(), e.clone());
    }

    /// Writes this round's entries for the others.
    pub fn publish(&mut self, round: u32) -> Result<(), String> {
        let entries = std::mem::take(&mut self.fresh).into_values().collect();
        let file = RoundFile { version: EXCHANGE_VERSION, shard: self.ex.shard.index, round, entries };
        let path = self.round_path(self.ex.shard.index, round);
        write_atomic(&path, &serde_json::to_vec(&file).unwrap()).map_err(|e| format!("cannot write {}: {e}", path.display()))
    }

    /// Says this shard explores no more (after its last round's `publish`).
    pub fn finish(&self, rounds: u32) {
        let path = self.done_path(self.ex.shard.index);
        let file = DoneFile { version: EXCHANGE_VERSION, shard: self.ex.shard.index, rounds };
        let _ = write_atomic(&path, &serde_json::to_vec(&file).unwrap());
    }

    /// The other shards' entries to run next, after round `round`.
    pub fn collect(&mut self, round: u32, config: &Config) -> Vec<Entry> {
        if self.ex.lockstep {
            self.wait_for(round);
        }
        let mut out = Vec::new();
        let others: Vec<u32> = self.read.keys().copied().collect();
        for j in others {
            let (mut last, _) = self.read[&j];
            let done = self.done_path(j).is_file();
            // Lockstep reads exactly up to this round; otherwise whatever is there.
            let upto = if self.ex.lockstep { round } else { u32::MAX };
            while last < upto && out.len() < IMPORT_MAX {
                let path = self.round_path(j, last + 1);
                let Ok(text) = seedfall_sim::files::read_text(&path, seedfall_sim::files::JSON_BYTES_MAX, "the exchange file") else { break };
                match serde_json::from_str::<RoundFile>(&text) {
                    Ok(f) if f.version == EXCHANGE_VERSION && f.round == last + 1 => {
                        for e in f.entries {
                            if e.version != CORPUS_VERSION || !self.seen.insert(e.id.clone()) {
                                continue;
                            }
                            match seedfall_sim::check_fits(&e.faults, &e.branches, config) {
                                Ok(()) => out.push(e),
                                Err(err) => self.notes.push(format!("{}: an entry {} no longer fits the config: {err}", path.display(), e.id)),
                            }
                        }
                    }
                    Ok(_) => self.notes.push(format!("{}: not an exchange file of version {EXCHANGE_VERSION} for round {}; skipped", path.display(), last + 1)),
                    Err(e) => self.notes.push(format!("{}: unreadable ({e}); skipped", path.display())),
                }
                last += 1;
            }
            self.read.insert(j, (last, done));
        }
        self.imported += out.len() as u64;
        out
    }

    /// Waits until every other shard wrote round `round` or stopped.
    fn wait_for(&mut self, round: u32) {
        let started = Instant::now();
        loop {
            let waiting: Vec<u32> = self
                .read
                .keys()
                .copied()
                .filter(|j| !self.given_up.contains(j))
                .filter(|&j| !self.round_path(j, round).is_file() && !self.done_path(j).is_file())
                .collect();
            if waiting.is_empty() {
                return;
            }
            if started.elapsed() >= self.ex.wait_max {
                for j in waiting {
                    self.notes.push(format!("shard {j}/{} wrote no round {round} within {:?}: going on without waiting for it again (this exploration is no longer lockstep)", self.ex.shard.count, self.ex.wait_max));
                    self.given_up.insert(j);
                }
                return;
            }
            std::thread::sleep(POLL);
        }
    }
}

/// The corpus folder of shard `i` under a sync folder.
pub fn shard_corpus(dir: &Path, shard: Shard) -> PathBuf {
    dir.join(format!("shard-{:05}", shard.index)).join("corpus")
}
