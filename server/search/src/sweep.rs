//! A sweep: run every seed of a range on `-j` workers, merged in seed order.
use crate::pool;
use crate::seeds::SeedRange;
use seedfall_sim::{run, Outcome, Program, RunOptions, Schedule, Verdict};
use serde::Serialize;
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
}

/// Totals of a sweep. Rates use the sweep's wall time.
#[derive(Clone, Debug, Default, Serialize)]
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
    pub seeds_per_second: f64,
    pub virtual_seconds_per_wall_second: f64,
}

/// Runs the seeds; `on_outcome` sees each outcome in seed order. Traces of
/// passing runs are dropped on the worker to keep memory flat.
pub fn sweep(program: &Program, options: &SweepOptions, stop: &AtomicBool, mut on_outcome: impl FnMut(&Outcome)) -> SweepSummary {
    let started = Instant::now();
    let run_options = RunOptions { profile: options.profile, mutation: options.mutation };
    let mut summary = SweepSummary::default();
    pool::run_ordered(
        options.seeds.len(),
        options.jobs,
        stop,
        |i| {
            let mut outcome = run(program, &Schedule::seed(options.seeds.nth(i)), &run_options);
            if outcome.verdict == Verdict::Pass {
                outcome.trace = Vec::new();
            }
            outcome
        },
        |_, outcome| {
            summary.runs += 1;
            summary.failures += u64::from(outcome.verdict == Verdict::Fail);
            summary.virtual_ns += outcome.stats.virtual_ns;
            summary.steps += outcome.stats.steps;
            summary.run_real_ns += outcome.stats.real_ns;
            summary.instantiate_ns += outcome.stats.instantiate_ns;
            summary.host_ns += outcome.stats.host_ns;
            summary.host_calls += outcome.stats.host_calls;
            on_outcome(&outcome);
        },
    );
    summary.wall_ns = started.elapsed().as_nanos().max(1) as u64;
    let wall_s = summary.wall_ns as f64 / 1e9;
    summary.seeds_per_second = summary.runs as f64 / wall_s;
    summary.virtual_seconds_per_wall_second = summary.virtual_ns as f64 / 1e9 / wall_s;
    summary
}
