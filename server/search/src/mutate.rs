//! `seedfall mutate`: does the workload notice when durability breaks?
//!
//! The sweep runs once as configured (the baseline), then once per mutation
//! with one guarantee of the simulated disk weakened. A mutation is *killed*
//! when some seed that passed in the baseline fails under it: the workload's
//! checks caught the weaker disk. One that *survives* shows a class of bug
//! those checks would not notice.
use crate::seeds::SeedRange;
use crate::sweep::{sweep, SweepOptions};
use seedfall_sim::disk::Mutation;
use seedfall_sim::{Program, Verdict};
use serde::Serialize;
use std::sync::atomic::AtomicBool;

#[derive(Clone, Debug, Serialize)]
pub struct MutationResult {
    pub mutation: String,
    pub description: &'static str,
    pub failed_seeds: Vec<u64>,
    /// Seeds that passed in the baseline and fail under the mutation.
    pub new_failures: Vec<u64>,
    pub killed: bool,
}

#[derive(Clone, Debug, Serialize)]
pub struct MutateReport {
    pub seeds: String,
    pub baseline_failed_seeds: Vec<u64>,
    pub mutations: Vec<MutationResult>,
}

fn failing_seeds(program: &Program, seeds: SeedRange, jobs: usize, mutation: Option<Mutation>, stop: &AtomicBool, on_run: &mut dyn FnMut()) -> Vec<u64> {
    let mut failed = Vec::new();
    sweep(program, &SweepOptions { seeds, jobs, profile: false, mutation, novelty: None, prefix: None, faults: None, guest_profile: None }, None, stop, |o| {
        on_run();
        if o.verdict == Verdict::Fail {
            failed.push(o.seed);
        }
    });
    failed
}

/// The mutations that weaken something one of the program's disks promises
/// (`DirFsyncIgnored` means nothing under ext4, a journal mutation nothing
/// under posix).
pub fn applicable(program: &Program) -> Vec<Mutation> {
    let models = seedfall_sim::run::disk_models(&program.config, &seedfall_sim::RunOptions::default());
    Mutation::ALL.into_iter().filter(|m| models.iter().any(|&model| m.applies_to(model))).collect()
}

/// Runs the baseline and every mutation that applies to the program's disks; `on_phase` names each sweep as it
/// starts, `on_run` ticks once per run (for progress).
pub fn mutate(program: &Program, seeds: SeedRange, jobs: usize, stop: &AtomicBool, on_phase: &mut dyn FnMut(&str), on_run: &mut dyn FnMut()) -> MutateReport {
    on_phase("baseline");
    let baseline = failing_seeds(program, seeds, jobs, None, stop, on_run);
    let mut mutations = Vec::new();
    for m in applicable(program) {
        on_phase(m.describe());
        let failed = failing_seeds(program, seeds, jobs, Some(m), stop, on_run);
        let new_failures: Vec<u64> = failed.iter().copied().filter(|s| !baseline.contains(s)).collect();
        mutations.push(MutationResult {
            mutation: format!("{m:?}"),
            description: m.describe(),
            killed: !new_failures.is_empty(),
            failed_seeds: failed,
            new_failures,
        });
    }
    MutateReport { seeds: seeds.to_string(), baseline_failed_seeds: baseline, mutations }
}
