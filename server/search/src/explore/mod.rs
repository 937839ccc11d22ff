//! `explore`: feedback-guided search. Keep the runs that reached something
//! new, or reached it earlier (a signal: a property outcome, a fault, a
//! function, a watermark) in a corpus, and spend further runs going deeper
//! from them instead of starting over. docs/explore.md has the algorithm.
//!
//! Round 1 runs the seed range and every corpus entry left by earlier
//! explorations. Each later round shares `batch` children among the
//! operators (`operators`: fresh seeds continuing the range, and branching,
//! re-keying and fault mutation from the corpus) by what each has yielded so
//! far, makes them (`children`), runs them on the workers, and merges
//! results in child order, so the same corpus and flags give the same
//! rounds at any `-j`.
pub mod children;
pub mod corpus;
pub mod exchange;
pub mod growth;
pub mod operators;
pub mod signals;
pub mod stop;

use crate::seeds::SeedRange;
use corpus::{Corpus, Entry};
pub use growth::Growth;
use operators::{Operator, Yields};
use seedfall_sim::{Outcome, Program, Schedule, Verdict};
use serde::Serialize;
use signals::Signal;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

/// Bound on rounds when no other limit is given.
pub const ROUNDS_MAX: u32 = 100_000;
/// New function names kept per round for display.
pub const NEW_FUNCTION_NAMES_MAX: usize = 8;
/// New function names looked at per round to choose those shown.
pub const NEW_FUNCTION_NAMES_SEEN_MAX: usize = 10_000;

/// 0 for a function of the program's own code (`operators::Code::Own`), 1
/// for the language's runtime and libraries.
fn own_code_first(name: &str) -> u8 {
    u8::from(operators::code_of(name) != operators::Code::Own)
}
/// Failing outcomes kept (with traces) per exploration.
pub const FAILURES_KEPT_MAX: usize = 32;

#[derive(Clone, Debug)]
pub struct ExploreOptions {
    pub seeds: SeedRange,
    pub rounds: Option<u32>,
    pub batch: usize,
    pub budget: Option<Duration>,
    /// Given explicitly: stop after this many rounds with nothing new, even
    /// before `rounds`. None: `stop`'s rules.
    pub until_novelty: Option<u32>,
    pub keep_going: bool,
    pub explore_seed: u64,
    /// Added to every fresh seed: `children::fresh_offset` of the user's
    /// exploration seed (shards share it and split the seeds after it).
    pub fresh_offset: u64,
    pub jobs: usize,
    pub corpus_dir: PathBuf,
    /// Children use snapshots when round 1's median run took at least this
    /// long on the host (`snapshots::WORTH_RUN_NS`; 0: always).
    pub snapshot_worth_ns: u64,
    /// `-shard i/n -sync DIR`: trade corpus entries with the other shards
    /// at round boundaries (`exchange`).
    pub exchange: Option<exchange::Exchange>,
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
    /// Edge (index, bucket) pairs reached so far (`-coverage edges`).
    pub edges: usize,
    pub corpus: usize,
    pub failures: usize,
    /// Entries of other shards run in this round (`-sync`).
    pub imported: usize,
    /// Per operator that made children this round: its share, and what its
    /// children yielded (round 1's seed range counts as fresh).
    pub operators: Vec<OperatorRound>,
    pub elapsed_ms: u64,
}

#[derive(Clone, Debug, Serialize)]
pub struct OperatorRound {
    pub operator: Operator,
    /// Its share of the round, in millionths, as the bandit set it.
    pub share_ppm: u64,
    #[serde(flatten)]
    pub yielded: operators::Yield,
}

pub struct ExploreResult {
    pub rounds: Vec<Round>,
    /// Every property over every run of the exploration.
    pub properties: crate::properties::PropertyTable,
    pub stop: String,
    pub failures: Vec<Outcome>,
    pub stale: Vec<String>,
    pub runs: u64,
    /// The number of the run (in merge order, from 1) that failed first.
    pub first_failure_run: Option<u64>,
    /// Failures seen under edge probes that did not happen again on the
    /// ordinary program (`confirm`): they replay under edge probes only.
    pub unconfirmed: Vec<Outcome>,
    /// What the exchange with other shards skipped or gave up on.
    pub exchange_notes: Vec<String>,
    /// What each operator's children yielded over the whole exploration.
    pub operators: Vec<(Operator, operators::Yield)>,
}

/// Explores `program`. With `confirm` (the ordinary program, when `program`
/// carries edge probes, whose fuel shifts virtual time), each failure is run
/// again there and kept only when the same finding happens: what is kept
/// always replays on the ordinary program.
///
/// With `snapshots`, when round 1's runs are long enough to pay for it
/// (`snapshots::WORTH_RUN_NS`), a child continues from a snapshot of its
/// parent entry's run at the moment it branches, instead of running the
/// prefix again.
pub fn explore(program: &Program, confirm: Option<&Program>, opts: &ExploreOptions, snapshots: Option<crate::snapshots::Starter>, stop: &AtomicBool, on_round: &mut dyn FnMut(&Round)) -> ExploreResult {
    assert!(opts.batch > 0 && opts.jobs > 0);
    let config = &program.config;
    let started = Instant::now();
    let (loaded, stale) = corpus::load(&opts.corpus_dir, config);
    let mut corpus = Corpus::default();
    let mut growth = Growth::default();
    let mut chooser = children::Chooser::new(opts.explore_seed, opts.seeds, opts.fresh_offset);
    let mut failures: Vec<Outcome> = Vec::new();
    let mut properties = crate::properties::PropertyTable::with_catalog(&program.catalog);
    let mut rounds = Vec::new();
    let mut progress = stop::Progress::default();
    let mut first_failure_run = None;
    let mut unconfirmed = Vec::new();
    let limits = stop::Limits { rounds: opts.rounds, budget: opts.budget, until_novelty: opts.until_novelty };
    let round_max = opts.rounds.unwrap_or(ROUNDS_MAX).min(ROUNDS_MAX);
    let mut stop_reason = String::new();
    let mut round1_real_ns = Vec::new();
    let mut use_snapshots = None;
    let mut exchanger = opts.exchange.clone().map(exchange::Exchanger::new);
    let mut imported: Vec<Entry> = Vec::new();
    let mut last_round = 0;
    let mut bandit = operators::Bandit::default();
    let mut totals = Yields::default();
    let mut credit = [0i64; 4];
    // A program that declares properties says what its progress is; one
    // without the SDK shows it only by the functions of its own code it
    // enters (a stage, a door). A program with properties enters new
    // functions of its own on its way through errors and warnings too.
    let functions_are_progress = program.catalog.is_empty();
    for round in 1..=round_max {
        // Per child: its parent (to continue from), its schedule, and the
        // operator that made it (None: an entry run whole).
        let mut shares = [0u64; 4];
        let (parents, schedules, made_by): (Vec<Option<Schedule>>, Vec<Schedule>, Vec<Option<Operator>>) = if round == 1 {
            let mut s: Vec<Schedule> = (0..opts.seeds.len()).map(|i| Schedule::seed(opts.seeds.nth(i))).collect();
            let mut by = vec![Some(Operator::Fresh); s.len()];
            shares[Operator::Fresh as usize] = operators::SHARE_ONE;
            s.extend(loaded.iter().map(Entry::schedule));
            by.resize(s.len(), None);
            (vec![None; s.len()], s, by)
        } else {
            let plan = children::Plan::new(&corpus, &growth);
            let from_corpus = !plan.is_empty();
            let usable = [true, from_corpus, from_corpus, from_corpus && children::Chooser::faults_usable(&corpus, config)];
            shares = bandit.shares(usable);
            let ops = operators::split(opts.batch, shares, &mut credit);
            let mut parents = Vec::with_capacity(ops.len() + imported.len());
            let mut children = Vec::with_capacity(ops.len() + imported.len());
            let mut by = Vec::with_capacity(ops.len() + imported.len());
            for op in ops {
                let (p, c, made) = chooser.child(op, &plan, &corpus, config);
                parents.push(p);
                children.push(c);
                by.push(Some(made));
            }
            // Other shards' entries run whole, like entries loaded in round 1.
            parents.extend(imported.iter().map(|_| None));
            children.extend(imported.iter().map(Entry::schedule));
            by.extend(imported.iter().map(|_| None));
            (parents, children, by)
        };
        let mut round_yields = Yields::default();
        let mut round_progress = 0u64;
        let mut progressed = false;
        let mut round1_progress: Vec<(Signal, u64)> = Vec::new();
        let mut child_idx = 0usize;
        let imported_now = std::mem::take(&mut imported).len();
        last_round = round;
        let functions_before = growth.functions;
        let mut new_signals = Vec::new();
        let mut new_function_names: Vec<(u8, String)> = Vec::new();
        let mut novel_at = None;
        let runs = &mut progress.runs;
        if round == 2 {
            round1_real_ns.sort_unstable();
            let median = round1_real_ns.get(round1_real_ns.len() / 2).copied().unwrap_or(0);
            use_snapshots = snapshots.filter(|_| median >= opts.snapshot_worth_ns).and_then(|start| start());
        }
        let parents = use_snapshots.map(|snapshots| crate::target::Parents { snapshots, of: &parents });
        crate::target::run_each_from(program, parents, &schedules, opts.jobs, true, stop, |o| {
            *runs += 1;
            let input = &schedules[child_idx];
            let op = made_by[child_idx];
            child_idx += 1;
            if round == 1 {
                round1_real_ns.push(o.stats.real_ns);
            }
            properties.add(&o);
            let reached = signals::of(&o);
            let new = growth.add_reached(&o, &reached);
            if !new.is_empty() {
                novel_at = Some(*runs);
            }
            let failed = o.verdict == Verdict::Fail;
            let worth = operators::worth(program, &new);
            if round == 1 {
                round1_progress.extend(operators::progress_of(program, &o, &new, false).map(|(s, w)| (s.clone(), w)));
            }
            if let Some(op) = op {
                let progress = round > 1 && operators::progress(program, &o, &new, functions_are_progress) > 0;
                progressed |= progress;
                if op == Operator::Fresh && progress {
                    // A fresh seed that made progress (a level, a stage, a
                    // better value) cannot make it again; the corpus can
                    // build on it. What it reached is credited to the corpus,
                    // not to fresh seeds, which would lead for many rounds
                    // on one lucky draw.
                    round_progress += operators::reward(worth, false);
                    round_yields.of(op).child_learning(new.len(), worth, 0, failed);
                } else {
                    round_yields.of(op).child(new.len(), worth, failed);
                }
            }
            new_signals.extend(new.iter().filter(|r| !r.signal.is_coverage()).map(|r| r.describe()));
            for r in &new {
                if let (Signal::Function { node, index }, true) = (&r.signal, new_function_names.len() < NEW_FUNCTION_NAMES_SEEN_MAX) {
                    let name = program.function_names.get(node).and_then(|m| m.get(index)).map(|n| seedfall_sim::failure::demangle(n)).unwrap_or_else(|| format!("#{index}"));
                    new_function_names.push((own_code_first(&name), format!("{node}: {name}")));
                }
            }
            if o.verdict == Verdict::Fail {
                first_failure_run.get_or_insert(*runs);
                if failures.len() + unconfirmed.len() < FAILURES_KEPT_MAX {
                    match confirm {
                        None => failures.push(o),
                        Some(plain) => match confirmed(plain, &o) {
                            Some(again) => failures.push(again),
                            None => unconfirmed.push(o),
                        },
                    }
                }
                // The first failure ends the exploration there, mid-round:
                // the children after it would only cost time (and the runs
                // counted are the runs it took).
                return opts.keep_going;
            }
            if !corpus.improves(&reached, o.schedule.faults.as_ref().map_or(0, Vec::len)) {
                return true;
            }
            let applied = o.schedule.faults.as_deref().unwrap_or(&[]);
            let mut entry = Entry::new(&config.name, &Schedule { faults: input.faults.clone(), ..o.schedule.clone() }, applied, o.end_time.nanos(), &reached);
            entry.stream_draws = o.stream_draws.to_vec();
            if let Some((idx, true)) = corpus.offer(entry, &reached) {
                // A corpus that cannot be written still guides this exploration.
                let _ = corpus::write(&opts.corpus_dir, &corpus.entries[idx]);
                if let Some(x) = &mut exchanger {
                    x.note(&corpus.entries[idx]);
                }
            }
            true
        });
        // Round 1 runs the seed range, where everything is new: it says
        // nothing of what fresh seeds yield once something has been reached,
        // only what progress the corpus starts from.
        let learned = if round > 1 { round_yields.clone() } else { Yields::default() };
        if round == 1 {
            // Round 1's progress is the corpus's when it is rare: a
            // `Sometimes` every run of the range reaches is no level.
            for (s, w) in &round1_progress {
                if growth.count(s) * 4 <= progress.runs {
                    round_progress += w;
                    progressed = true;
                }
            }
        }
        bandit.learn(&learned, round_progress.min(operators::WORTH_SIGNAL), progressed);
        totals.add(&round_yields);
        progress.round = round;
        progress.round_done(novel_at);
        if round == 1 {
            // Round 1 is the starting point: what it found, and the corpus
            // it replayed, are no novelty's cost.
            progress.last_novelty_run = progress.runs;
            progress.last_gap = progress.last_gap.min(opts.seeds.len());
        }
        let report = Round {
            round,
            runs: progress.runs,
            new_signals,
            signals: growth.signals(),
            new_functions: growth.functions - functions_before,
            new_function_names: {
                // The program's own functions first: `main.stageOne` says
                // more than the runtime functions printing it entered.
                new_function_names.sort_by_key(|(rank, _)| *rank);
                new_function_names.into_iter().take(NEW_FUNCTION_NAMES_MAX).map(|(_, n)| n).collect()
            },
            functions: growth.functions,
            edges: growth.edges,
            corpus: corpus.entries.len(),
            failures: failures.len() + unconfirmed.len(),
            imported: imported_now,
            operators: Operator::ALL
                .iter()
                .map(|&op| OperatorRound { operator: op, share_ppm: shares[op as usize], yielded: round_yields.0[op as usize] })
                .filter(|r| r.share_ppm > 0 || r.yielded.children > 0)
                .collect(),
            elapsed_ms: started.elapsed().as_millis() as u64,
        };
        on_round(&report);
        rounds.push(report);
        if let Some(x) = &mut exchanger {
            if let Err(e) = x.publish(round) {
                x.notes.push(e);
            }
        }
        let why = if !(failures.is_empty() && unconfirmed.is_empty()) && !opts.keep_going {
            Some("failure found".to_string())
        } else if stop.load(std::sync::atomic::Ordering::Relaxed) {
            Some("stopped".to_string())
        } else {
            limits.check(&progress, started.elapsed(), round_max)
        };
        if let Some(why) = why {
            stop_reason = why;
            break;
        }
        if let Some(x) = &mut exchanger {
            imported = x.collect(round, config);
        }
    }
    let exchange_notes = match exchanger {
        Some(mut x) => {
            x.finish(last_round);
            std::mem::take(&mut x.notes)
        }
        None => Vec::new(),
    };
    let operators = Operator::ALL.iter().map(|&op| (op, totals.0[op as usize])).collect();
    ExploreResult { rounds, properties, stop: stop_reason, failures, stale, runs: progress.runs, first_failure_run, unconfirmed, exchange_notes, operators }
}

/// The failure `o` (found under edge probes) run again on the ordinary
/// program, when the same finding happens there.
fn confirmed(plain: &Program, o: &Outcome) -> Option<Outcome> {
    let options = seedfall_sim::RunOptions::default();
    let mut again = seedfall_sim::run(plain, &crate::target::exact(o), &options);
    let same = match (&o.failure, &again.failure) {
        (Some(a), Some(b)) => crate::finding::Signature::of(a) == crate::finding::Signature::of(b),
        _ => false,
    };
    if !same {
        return None;
    }
    crate::durability::check(plain, &mut again, &options);
    Some(again)
}
