//! `explore`: feedback-guided search. Keep the runs that reached something
//! new (a signal: a property outcome, a fault, a function) in a corpus, and
//! spend further runs going deeper from them instead of starting over.
//!
//! Round 1 runs the seed range and every corpus entry left by earlier
//! explorations. Each later round draws `batch` children from the corpus
//! (`children`), runs them on the workers, and merges results in child
//! order, so the same corpus and flags give the same rounds at any `-j`.
pub mod children;
pub mod corpus;
pub mod signals;

use crate::target::run_each;
use crate::seeds::SeedRange;
use corpus::Entry;
use seedfall_sim::{Outcome, Program, Schedule, Verdict};
use serde::Serialize;
use signals::Signal;
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

/// Bound on rounds when no other limit is given.
pub const ROUNDS_MAX: u32 = 100_000;
/// New function names kept per round for display.
pub const NEW_FUNCTION_NAMES_MAX: usize = 8;
/// Failing outcomes kept (with traces) per exploration.
pub const FAILURES_KEPT_MAX: usize = 32;

#[derive(Clone, Debug)]
pub struct ExploreOptions {
    pub seeds: SeedRange,
    pub rounds: Option<u32>,
    pub batch: usize,
    pub budget: Option<Duration>,
    pub until_novelty: u32,
    pub keep_going: bool,
    pub explore_seed: u64,
    pub jobs: usize,
    pub corpus_dir: PathBuf,
}

#[derive(Clone, Debug, Serialize)]
pub struct Round {
    pub round: u32,
    pub runs: u64,
    pub new_signals: Vec<String>,
    pub signals: usize,
    pub new_functions: usize,
    /// Names of some of the new functions (`node: name`), for display.
    pub new_function_names: Vec<String>,
    pub functions: usize,
    pub corpus: usize,
    pub failures: usize,
    pub elapsed_ms: u64,
}

pub struct ExploreResult {
    pub rounds: Vec<Round>,
    /// Every property over every run of the exploration.
    pub properties: crate::properties::PropertyTable,
    pub stop: String,
    pub failures: Vec<Outcome>,
    pub stale: Vec<String>,
    pub runs: u64,
}

#[derive(Default)]
pub struct Growth {
    pub known: BTreeSet<Signal>,
    pub counts: BTreeMap<Signal, u64>,
    /// Discovery order of non-function signals.
    pub order: BTreeMap<Signal, u32>,
    pub functions: usize,
}

impl Growth {
    /// Folds one run's signals in; returns the new ones (functions included).
    ///
    /// A branched child replays its parent up to the branch: what it reached
    /// before that moment is inherited, not found again, so it does not make
    /// those signals look common.
    pub fn add(&mut self, outcome: &Outcome) -> Vec<signals::Reached> {
        let reached = signals::of(outcome);
        let fresh_from = outcome.schedule.branches.iter().map(|b| b.at_ns).max().unwrap_or(0);
        let mut new = Vec::new();
        for r in &reached {
            if r.at_ns.is_none_or(|t| t >= fresh_from) {
                *self.counts.entry(r.signal.clone()).or_insert(0) += 1;
            }
            if self.known.insert(r.signal.clone()) {
                if r.signal.is_function() {
                    self.functions += 1;
                } else {
                    let n = self.order.len() as u32;
                    self.order.insert(r.signal.clone(), n);
                }
                new.push(r.clone());
            }
        }
        new
    }

    pub fn signals(&self) -> usize {
        self.known.len() - self.functions
    }
}

pub fn explore(program: &Program, opts: &ExploreOptions, stop: &AtomicBool, on_round: &mut dyn FnMut(&Round)) -> ExploreResult {
    assert!(opts.batch > 0 && opts.jobs > 0);
    let config = &program.config;
    let started = Instant::now();
    let (mut entries, stale) = corpus::load(&opts.corpus_dir, config);
    let mut growth = Growth::default();
    let mut chooser = children::Chooser::new(opts.explore_seed);
    let mut failures: Vec<Outcome> = Vec::new();
    let mut properties = crate::properties::PropertyTable::with_catalog(&program.catalog);
    let (mut rounds, mut runs, mut quiet) = (Vec::new(), 0u64, 0u32);
    let round_limit = opts.rounds.unwrap_or(ROUNDS_MAX);
    let mut stop_reason = format!("rounds limit reached ({round_limit})");
    for round in 1..=round_limit {
        let schedules: Vec<Schedule> = if round == 1 {
            let mut s: Vec<Schedule> = (0..opts.seeds.len()).map(|i| Schedule::seed(opts.seeds.nth(i))).collect();
            s.extend(entries.iter().map(Entry::schedule));
            s
        } else {
            if entries.is_empty() {
                stop_reason = "nothing to explore from: no run reached a signal".into();
                break;
            }
            (0..opts.batch).map(|_| chooser.child(&entries, &growth.counts, &growth.order, config)).collect()
        };
        let (signals_before, functions_before) = (growth.signals(), growth.functions);
        let mut new_signals = Vec::new();
        let mut new_function_names = Vec::new();
        run_each(program, &schedules, opts.jobs, true, stop, |o| {
            runs += 1;
            properties.add(&o);
            let new = growth.add(&o);
            new_signals.extend(new.iter().filter(|r| !r.signal.is_function()).map(|r| r.signal.describe()));
            for r in &new {
                if let (Signal::Function { node, index }, true) = (&r.signal, new_function_names.len() < NEW_FUNCTION_NAMES_MAX) {
                    let name = program.function_names.get(node).and_then(|m| m.get(index)).map(|n| seedfall_sim::failure::demangle(n)).unwrap_or_else(|| format!("#{index}"));
                    new_function_names.push(format!("{node}: {name}"));
                }
            }
            if o.verdict == Verdict::Fail {
                if failures.len() < FAILURES_KEPT_MAX {
                    failures.push(o);
                }
                return;
            }
            if new.is_empty() {
                return;
            }
            let entry = Entry::new(&config.name, &crate::target::exact(&o), o.end_time.nanos(), signals::of(&o));
            if !entries.iter().any(|e| e.id == entry.id) && entries.len() < corpus::ENTRIES_MAX {
                // A corpus that cannot be written still guides this exploration.
                let _ = corpus::write(&opts.corpus_dir, &entry);
                entries.push(entry);
            }
        });
        let report = Round {
            round,
            runs,
            new_signals,
            signals: growth.signals(),
            new_functions: growth.functions - functions_before,
            new_function_names,
            functions: growth.functions,
            corpus: entries.len(),
            failures: failures.len(),
            elapsed_ms: started.elapsed().as_millis() as u64,
        };
        let novel = growth.signals() > signals_before || growth.functions > functions_before;
        quiet = if novel { 0 } else { quiet + 1 };
        on_round(&report);
        rounds.push(report);
        if !failures.is_empty() && !opts.keep_going {
            stop_reason = "failure found".into();
            break;
        }
        if stop.load(std::sync::atomic::Ordering::Relaxed) {
            stop_reason = "stopped".into();
            break;
        }
        if quiet >= opts.until_novelty {
            stop_reason = format!("no novelty for {quiet} rounds");
            break;
        }
        if opts.budget.is_some_and(|b| started.elapsed() >= b) {
            stop_reason = "budget spent".into();
            break;
        }
    }
    ExploreResult { rounds, properties, stop: stop_reason, failures, stale, runs }
}
