//! The failure a tool is chasing, and how to tell a run reproduces it:
//! the same property (by message), or the same node instance and message.
use seedfall_sim::failure::{Failure, FailureKind};
use seedfall_sim::{Outcome, Program, RunOptions, Schedule, Verdict};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Target {
    pub kind: FailureKind,
    pub node: String,
    pub message: String,
}

impl Target {
    pub fn of(f: &Failure) -> Target {
        Target { kind: f.kind, node: f.node.clone(), message: f.message.clone() }
    }

    pub fn matches(&self, outcome: &Outcome) -> bool {
        match &outcome.failure {
            None => false,
            Some(f) if self.kind == FailureKind::Property => f.kind == FailureKind::Property && f.message == self.message,
            Some(f) => f.kind == self.kind && f.node == self.node && f.message == self.message,
        }
    }

    pub fn describe(&self) -> String {
        match self.kind {
            FailureKind::Property => format!("property \"{}\"", self.message),
            _ => format!("{}: {}", self.node, self.message),
        }
    }
}

/// Runs many schedules on `jobs` workers and hands each outcome to `each` in
/// input order. Traces are dropped to bound memory, except a failing run's
/// when `keep_failing_traces` (explore keeps those to report and shrink).
pub fn run_each(program: &Program, schedules: &[Schedule], jobs: usize, keep_failing_traces: bool, stop: &std::sync::atomic::AtomicBool, mut each: impl FnMut(Outcome)) {
    crate::pool::run_ordered(
        schedules.len() as u64,
        jobs,
        stop,
        |i| {
            let mut o = seedfall_sim::run(program, &schedules[i as usize], &RunOptions::default());
            if !(keep_failing_traces && failed(&o)) {
                o.trace = Vec::new();
            } else {
                crate::durability::check(program, &mut o, &RunOptions::default());
            }
            o
        },
        |_, o| each(o),
    );
}

/// Runs many schedules on `jobs` workers; outcomes (without traces) come
/// back in input order.
pub fn run_all(program: &Program, schedules: &[Schedule], jobs: usize, stop: &std::sync::atomic::AtomicBool, mut on_done: impl FnMut()) -> Vec<Outcome> {
    let mut out = Vec::with_capacity(schedules.len());
    run_each(program, schedules, jobs, false, stop, |o| {
        on_done();
        out.push(o);
    });
    out
}

/// The schedule that replays a run exactly: its seed, every fault it
/// applied, its branches.
pub fn exact(outcome: &Outcome) -> Schedule {
    let mut s = outcome.schedule.clone();
    if s.faults.is_none() {
        s.faults = Some(Vec::new());
    }
    s
}

pub fn failed(o: &Outcome) -> bool {
    o.verdict == Verdict::Fail
}
