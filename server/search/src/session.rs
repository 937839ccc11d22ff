//! A sweep session: the bookkeeping of one sweep, the same whether its
//! runs happen here (`seedfall run` feeds each `Outcome`) or on other
//! machines (`seedfall merge` feeds the failing runs of shard results).
//!
//! It owns what a sweep decides rather than prints: the findings and their
//! shortest runs, the property table, which failure folders it keeps, which
//! older ones it prunes, the failures index and last-run. The caller adds
//! what it renders for the terminal (failure blocks, places) to `result`,
//! and `finish` settles the folders and hands the facts back.
//!
//! Folder order matters when a sweep is killed: folders this sweep finds it
//! no longer needs (a seed that passes now, a run a shorter one displaced)
//! go only after the index is rewritten, so a sweep killed before its end
//! never leaves the index naming a folder it removed (docs/failures.md).
use crate::finding::{Added, Signature};
use crate::kept;
use crate::shard_result::FailedRun;
use crate::sweep_result::SweepResult;
use seedfall_sim::{Config, Outcome, Verdict};
use std::collections::BTreeSet;
use std::path::Path;

/// Where a session's failing runs come from, which decides which folders
/// are its to remove.
enum Feed {
    /// Runs of this process. A shard (`sharded`) leaves the failures folder
    /// to the merge: other shards' folders may share it, and only the merge
    /// knows which runs are the shortest. `independent`: a passing run says
    /// that the seed's own run passes (not so under `-from` or `-faults`).
    Runs { sharded: bool, independent: bool, had_folders: BTreeSet<u64>, claim: Option<kept::Claim>, started: std::time::SystemTime },
    /// Shard results. Shards kept their own few shortest runs of each
    /// finding; of those, only the sweep's shortest stay.
    Shards,
}

pub struct SweepSession {
    /// The config, when it is here (a merge may run elsewhere).
    config: Option<Config>,
    feed: Feed,
    /// The facts so far; the caller adds what it renders.
    pub result: SweepResult,
    /// Failing runs as `FailedRun`s: a shard's result and a merge need them.
    pub runs: Vec<FailedRun>,
    passing_with_folders: BTreeSet<u64>,
    displaced: Vec<(u64, Signature)>,
}

impl SweepSession {
    /// A session for a sweep run here. `result` holds what the caller knows
    /// before the first run (header, pins, the catalog's table).
    pub fn for_runs(config: &Config, result: SweepResult, sharded: bool, independent: bool) -> SweepSession {
        // Folders this sweep writes are its own until it ends: another sweep
        // of this config, beside it, leaves them alone (kept.rs).
        let started = std::time::SystemTime::now();
        let claim = (!sharded).then(|| kept::Claim::new(config));
        let had_folders = crate::artifacts::seeds_with_folders(config);
        let feed = Feed::Runs { sharded, independent, had_folders, claim, started };
        SweepSession { config: Some(config.clone()), feed, result, runs: Vec::new(), passing_with_folders: BTreeSet::new(), displaced: Vec::new() }
    }

    /// A session merging shard results of a sweep of `config` (None when it
    /// is not here: folders, the index and last-run are left as the shards
    /// wrote them).
    pub fn for_shards(config: Option<Config>, result: SweepResult) -> SweepSession {
        SweepSession { config, feed: Feed::Shards, result, runs: Vec::new(), passing_with_folders: BTreeSet::new(), displaced: Vec::new() }
    }

    /// Adds a run's outcome (in seed order). For a failing run, returns what
    /// its finding made of it: `keep` says it gets a folder
    /// (`kept_folder` then claims it).
    pub fn add(&mut self, outcome: &Outcome) -> Option<Added> {
        let Feed::Runs { independent, had_folders, .. } = &self.feed else { panic!("a merge session is fed failed runs") };
        self.result.table.add(outcome);
        if outcome.verdict == Verdict::Pass && *independent && had_folders.contains(&outcome.seed) {
            self.passing_with_folders.insert(outcome.seed);
            crate::artifacts::kill_point("passed");
        }
        if outcome.verdict != Verdict::Fail {
            return None;
        }
        let failure = outcome.failure.as_ref().expect("a failing run");
        Some(self.add_failed(outcome.seed, outcome.stats.steps, failure))
    }

    /// Adds a failing run of a shard (in seed order).
    pub fn add_failed_run(&mut self, run: FailedRun) -> Added {
        assert!(matches!(self.feed, Feed::Shards), "a sweep session is fed outcomes");
        let added = self.add_failed(run.seed, run.steps, &run.failure);
        self.runs.push(run);
        added
    }

    fn add_failed(&mut self, seed: u64, steps: u64, failure: &seedfall_sim::failure::Failure) -> Added {
        self.result.failed_seeds.push(seed);
        // A shard's runs go to its result; a merge keeps its own (and
        // finds what is displaced once all are in: `finish`).
        if let Feed::Runs { sharded: true, .. } = &self.feed {
            self.runs.push(FailedRun { seed, steps, failure: failure.clone() });
        }
        let added = self.result.found.add_run(seed, failure, steps);
        if let (Some(evicted), Feed::Runs { .. }) = (added.evicted, &self.feed) {
            self.displaced.push((evicted, Signature::of(failure)));
        }
        added
    }

    /// A folder this sweep wrote: its own until the sweep ends.
    pub fn kept_folder(&mut self, folder: &Path) {
        if let Feed::Runs { claim: Some(c), .. } = &mut self.feed {
            c.add(folder);
        }
    }

    /// Settles the failure folders (rewrites the index, prunes older
    /// folders, removes those no longer needed), saves last-run, and
    /// returns the facts and the failing runs. A shard's session leaves the
    /// folders it did not write to the merge.
    pub fn finish(mut self, summary: crate::SweepSummary) -> (SweepResult, Vec<FailedRun>) {
        self.result.summary = summary;
        let Some(config) = self.config.take() else {
            eprintln!("seedfall merge: {} is not here: failure folders, the failures index and last-run are left as the shards wrote them", self.result.config);
            self.result.drop_gone_folders();
            return (self.result, self.runs);
        };
        // Only a whole sweep (or its merge) knows which folders to keep.
        let whole = !matches!(self.feed, Feed::Runs { sharded: true, .. });
        if let Feed::Shards = self.feed {
            // Every run that is not among its finding's shortest had its
            // folder only in its shard's view: it goes (not as pruned).
            let found = &self.result.found;
            self.displaced = self.runs.iter().map(|run| (run.seed, &found.by_id[&Signature::of(&run.failure).id()])).filter(|(seed, f)| !f.shortest.iter().any(|s| s.seed == *seed)).map(|(seed, f)| (seed, f.signature.clone())).collect();
        }
        if whole {
            let started = match &self.feed {
                Feed::Runs { started, .. } => *started,
                Feed::Shards => std::time::SystemTime::now(),
            };
            let names: BTreeSet<String> = match self.feed {
                Feed::Shards => self.displaced.iter().filter_map(|(seed, s)| Some(kept::folder(&config, *seed, s).file_name()?.to_string_lossy().into_owned())).collect(),
                Feed::Runs { .. } => BTreeSet::new(),
            };
            let passing = &self.passing_with_folders;
            let spare = |seed: u64, name: &str| passing.contains(&seed) || names.contains(name);
            let r = &self.result;
            self.result.pruned = kept::settle(&config, &r.seeds, r.summary.runs, r.summary.failures, &r.found, started, &spare);
        }
        for seed in &self.passing_with_folders {
            crate::artifacts::clear_passing(&config, *seed);
        }
        for (seed, signature) in &self.displaced {
            kept::remove(&config, *seed, signature);
        }
        if let Feed::Runs { claim, .. } = &mut self.feed {
            drop(claim.take());
        }
        // A failure whose folder a shorter run displaced has none.
        self.result.drop_gone_folders();
        if whole {
            if let Err(e) = self.result.save_last_run(&config) {
                eprintln!("seedfall: {e}");
            }
        }
        (self.result, self.runs)
    }
}
