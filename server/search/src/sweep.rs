//! A sweep: run every seed of a range on `-j` workers, merged in seed order.
use crate::pool;
use crate::seeds::SeedRange;
use seedfall_sim::{run, Outcome, Program, RunOptions, Schedule, Verdict};
use serde::{Deserialize, Serialize};
use std::sync::atomic::AtomicBool;
use std::time::Instant;

#[derive(Clone, Debug)]
pub struct SweepOptions {
    pub seeds: SeedRange,
    pub jobs: usize,
    /// Measure host-call time (benchmarks).
    pub profile: bool,
    /// Weaken one durability guarantee (`seedfall mutate`).
    pub mutation: Option<seedfall_sim::disk::Mutation>,
    /// Stop once this many batches in a row added no signal or function.
    pub novelty: Option<Novelty>,
    /// `run -from`: every seed shares this prefix (`prefix_point`), and
    /// re-keys every stream by itself from there.
    pub prefix: Option<seedfall_sim::schedule::Prefix>,
    /// `run -faults FILE`: every seed runs exactly these faults instead of
    /// drawing them from the config's rates.
    pub faults: Option<Vec<seedfall_sim::schedule::Fault>>,
    /// `run -profile FILE`: every run's guest stacks are sampled into this.
    pub guest_profile: Option<std::sync::Arc<std::sync::Mutex<seedfall_sim::guest_profile::GuestProfile>>>,
}

/// Where a `-from` sweep starts: `moment` of seed `prefix_seed`'s run, as
/// a schedule's prefix. For `AfterSetup` that needs the run up to setup
/// (from a snapshot when `snapshots` is given, else in this process).
pub fn prefix_point(program: &Program, prefix_seed: u64, moment: crate::snapshots::Moment, snapshots: Option<&crate::snapshots::Snapshots>) -> Result<seedfall_sim::schedule::Prefix, String> {
    use crate::snapshots::Moment;
    let duration = program.config.duration.nanos();
    match moment {
        Moment::At(t) if t >= duration => Err(format!("-from {}: the config's runs last {} (duration)", seedfall_sim::VTime(t), seedfall_sim::VTime(duration))),
        Moment::At(t) => {
            // A moment past the prefix run's end leaves nothing to vary:
            // every seed would be that run again, passing or failing alike.
            let o = run(program, &Schedule::seed(prefix_seed), &RunOptions::default());
            if o.end_time.nanos() < t {
                return Err(format!(
                    "-from {}: seed {prefix_seed}'s run ends at {} ({}), before it: every seed would be that run again; choose an earlier moment, or another -prefix-seed",
                    seedfall_sim::VTime(t),
                    o.end_time,
                    end_name(o.end)
                ));
            }
            Ok(seedfall_sim::schedule::Prefix { seed: prefix_seed, at_ns: t, setup: false })
        }
        Moment::AfterSetup => {
            let base = Schedule::seed(prefix_seed);
            let at_ns = match snapshots.map(|s| s.after_setup(&base)) {
                Some(Ok(at_ns)) => at_ns,
                // No snapshot said (none asked, the run ended first, or the
                // runner is gone): the run itself says.
                Some(Err(_)) | None => {
                    let o = run(program, &base, &RunOptions::default());
                    let Some(s) = o.setup_complete_ns else {
                        return Err(format!("-from setup: seed {prefix_seed}'s run ended at {} ({}) and no workload reported setup complete (sim.SetupComplete, or the Antithesis SDK's lifecycle call)", o.end_time, end_name(o.end)));
                    };
                    s + 1
                }
            };
            if at_ns >= duration {
                return Err(format!("-from setup: seed {prefix_seed}'s setup completed at the end of its run"));
            }
            Ok(seedfall_sim::schedule::Prefix { seed: prefix_seed, at_ns, setup: true })
        }
    }
}

fn end_name(e: seedfall_sim::outcome::EndReason) -> &'static str {
    use seedfall_sim::outcome::EndReason;
    match e {
        EndReason::Duration => "duration reached",
        EndReason::WorkloadDone => "every workload node exited 0",
        EndReason::Idle => "nothing left to happen",
        EndReason::Failure => "it failed",
    }
}

#[derive(Clone, Copy, Debug)]
pub struct Novelty {
    pub rounds: u32,
    pub batch: u64,
}

/// One row of the growth table of `run -until-novelty`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct GrowthRow {
    pub round: u32,
    pub runs: u64,
    pub new_signals: usize,
    pub signals: usize,
    pub new_functions: usize,
    pub functions: usize,
}

/// Totals of a sweep. Rates use the sweep's wall time.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct SweepSummary {
    pub runs: u64,
    pub failures: u64,
    pub wall_ns: u64,
    pub virtual_ns: u64,
    pub steps: u64,
    /// Sums over runs of each run's own costs.
    pub run_real_ns: u64,
    pub instantiate_ns: u64,
    pub host_ns: u64,
    pub host_calls: u64,
    /// Runs that ended because their duration was reached (not because
    /// every workload node exited 0, nor on a failure).
    pub ended_at_duration: u64,
    pub seeds_per_second: f64,
    pub virtual_seconds_per_wall_second: f64,
    /// With `-until-novelty`: the growth table and why the sweep stopped.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub growth: Vec<GrowthRow>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
}

impl SweepSummary {
    /// Counts one run.
    pub fn add_outcome(&mut self, outcome: &Outcome) {
        self.runs += 1;
        self.failures += u64::from(outcome.verdict == Verdict::Fail);
        self.virtual_ns += outcome.stats.virtual_ns;
        self.steps += outcome.stats.steps;
        self.run_real_ns += outcome.stats.real_ns;
        self.instantiate_ns += outcome.stats.instantiate_ns;
        self.host_ns += outcome.stats.host_ns;
        self.host_calls += outcome.stats.host_calls;
        self.ended_at_duration += u64::from(outcome.end == seedfall_sim::outcome::EndReason::Duration);
    }

    /// Adds one shard's totals. Shards run side by side: the merged wall
    /// time is the longest shard's, and rates are over it.
    pub fn add(&mut self, s: &SweepSummary) {
        self.runs += s.runs;
        self.failures += s.failures;
        self.wall_ns = self.wall_ns.max(s.wall_ns);
        self.virtual_ns += s.virtual_ns;
        self.steps += s.steps;
        self.run_real_ns += s.run_real_ns;
        self.instantiate_ns += s.instantiate_ns;
        self.host_ns += s.host_ns;
        self.host_calls += s.host_calls;
        self.ended_at_duration += s.ended_at_duration;
    }

    /// The rates, over the wall time.
    pub fn finish_rates(&mut self) {
        let wall_s = self.wall_ns.max(1) as f64 / 1e9;
        self.seeds_per_second = self.runs as f64 / wall_s;
        self.virtual_seconds_per_wall_second = self.virtual_ns as f64 / 1e9 / wall_s;
    }
}

/// Runs the seeds; `on_outcome` sees each outcome in seed order. Traces of
/// passing runs are dropped on the worker to keep memory flat.
///
/// With a prefix and `snapshots`, every seed continues from one snapshot of
/// the prefix seed's run instead of running the prefix again.
pub fn sweep(program: &Program, options: &SweepOptions, snapshots: Option<&crate::snapshots::Snapshots>, stop: &AtomicBool, mut on_outcome: impl FnMut(&Outcome)) -> SweepSummary {
    let started = Instant::now();
    let run_options = RunOptions { profile: options.profile, mutation: options.mutation, guest_profile: options.guest_profile.clone(), ..RunOptions::default() };
    let mut summary = SweepSummary::default();
    // Without -until-novelty the whole range is one batch.
    let batch = options.novelty.map_or(options.seeds.len(), |n| n.batch.max(1));
    let mut growth = crate::explore::Growth::default();
    let (mut quiet, mut done) = (0u32, 0u64);
    let mut found_new = false;
    let mut round = 0u32;
    while done < options.seeds.len() {
        let count = batch.min(options.seeds.len() - done);
        let first = done;
        round += 1;
        let (signals_before, functions_before) = (growth.signals(), growth.functions);
        pool::run_ordered(
        count,
        options.jobs,
        stop,
        |i| {
            let seed = options.seeds.nth(first + i);
            let mut outcome = match (options.prefix, snapshots) {
                (Some(prefix), Some(s)) if options.mutation.is_none() && !options.profile => {
                    assert!(options.faults.is_none(), "-from and -faults are exclusive (checked by the CLI)");
                    s.run(program, &Schedule::seed(prefix.seed), &Schedule { prefix: Some(prefix), ..Schedule::seed(seed) }, true)
                }
                (prefix, _) => run(program, &Schedule { prefix, faults: options.faults.clone(), ..Schedule::seed(seed) }, &run_options),
            };
            if outcome.verdict == Verdict::Pass {
                outcome.trace = Vec::new();
            } else if options.mutation.is_none() {
                crate::durability::check(program, &mut outcome, &run_options);
            }
            outcome
        },
        |_, outcome| {
            if options.novelty.is_some() && !growth.add(&outcome).is_empty() {
                found_new = true;
            }
            summary.add_outcome(&outcome);
            on_outcome(&outcome);
        },
        );
        done += count;
        let Some(novelty) = options.novelty else { continue };
        // A beaten watermark is new too, though it adds no signal.
        let novel = std::mem::take(&mut found_new);
        summary.growth.push(GrowthRow {
            round,
            runs: done,
            new_signals: growth.signals() - signals_before,
            signals: growth.signals(),
            new_functions: growth.functions - functions_before,
            functions: growth.functions,
        });
        quiet = if novel { 0 } else { quiet + 1 };
        if quiet >= novelty.rounds {
            summary.stop_reason = Some(format!("no novelty for {quiet} batches"));
            break;
        }
        if stop.load(std::sync::atomic::Ordering::Relaxed) {
            break;
        }
    }
    if options.novelty.is_some() && summary.stop_reason.is_none() {
        summary.stop_reason = Some("seed range finished".into());
    }
    summary.wall_ns = started.elapsed().as_nanos().max(1) as u64;
    summary.finish_rates();
    summary
}
