//! `cause`'s fault tests: which of the schedule's faults the failure needs.
//!
//! Each fault applied before the failure is removed, one at a time: it is
//! **necessary** when the run without it no longer fails the same way
//! (`Target::matches`), **incidental** when it still does. One run per fault
//! suffices, because a run is a pure function of its schedule. One more run
//! drops every fault, which tells "the failure needs no fault" from "any of
//! several faults causes it" when no single one is necessary.
//!
//! Each necessary fault is then moved a little earlier and later (in virtual
//! time, or by its disk operation, fsync, call, read or write number, for the
//! faults placed by count), which says whether the failure needs it exactly
//! where it hit. Every run here is an ordinary schedule that replays.
use crate::target::{run_all, Target};
use seedfall_sim::{Fault, Outcome, Program, Schedule};
use serde::Serialize;
use std::sync::atomic::AtomicBool;

/// Bound on the faults tested one by one: those nearest the failure are
/// tested, earlier ones are counted as untested.
pub const FAULTS_TESTED_MAX: usize = 256;
/// Bound on the moved variants tried per necessary fault.
pub const MOVES_PER_FAULT_MAX: usize = 4;
/// The small move in time: a fault that matters only where it hit escapes
/// the failure this much earlier or later.
const MOVE_NS: u64 = 1_000_000;

/// What a run with a changed schedule did, compared with the target.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Rerun {
    /// It fails the same way.
    Fails,
    /// It passes.
    Passes,
    /// It fails, but not the same way (see `failure`).
    FailsOtherwise,
}

impl Rerun {
    fn of(target: &Target, outcome: &Outcome) -> (Rerun, Option<String>) {
        match &outcome.failure {
            _ if target.matches(outcome) => (Rerun::Fails, None),
            None => (Rerun::Passes, None),
            Some(f) => (Rerun::FailsOtherwise, Some(Target::of(f).describe())),
        }
    }

    pub fn text(self) -> &'static str {
        match self {
            Rerun::Fails => "fails",
            Rerun::Passes => "passes",
            Rerun::FailsOtherwise => "fails otherwise",
        }
    }
}

/// One necessary fault, moved.
#[derive(Clone, Debug, Serialize)]
pub struct Move {
    /// Where it was moved to: `t=265.488716ms`, `disk op #177`, `fsync #4`.
    pub to: String,
    pub fault: Fault,
    pub rerun: Rerun,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure: Option<String>,
    #[serde(skip)]
    pub schedule: Schedule,
}

/// One fault of the schedule, tested.
#[derive(Clone, Debug, Serialize)]
pub struct FaultTest {
    /// Its index in the schedule's fault list.
    pub index: usize,
    pub fault: Fault,
    pub necessary: bool,
    /// The run without it.
    pub without: Rerun,
    /// The failure the run without it shows instead, when it fails otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub without_failure: Option<String>,
    /// Moved earlier and later (necessary faults only).
    pub moved: Vec<Move>,
    #[serde(skip)]
    pub schedule_without: Schedule,
}

/// Every fault test of one cause.
#[derive(Clone, Debug)]
pub struct FaultTests {
    /// The faults before the failure that were tested, in schedule order.
    pub tested: Vec<FaultTest>,
    /// Faults before the failure beyond `FAULTS_TESTED_MAX`, not tested.
    pub untested: usize,
    /// The run without any fault; `None` when the schedule has none before
    /// the failure (then the failure plainly needs none).
    pub without_any: Option<Rerun>,
    pub schedule_without_any: Option<Schedule>,
    pub runs: u64,
}

impl FaultTests {
    pub fn necessary(&self) -> impl Iterator<Item = &FaultTest> {
        self.tested.iter().filter(|t| t.necessary)
    }

    /// The time of the last necessary fault, if any.
    pub fn last_necessary_ns(&self) -> Option<u64> {
        self.necessary().map(|t| t.fault.at_ns()).max()
    }
}

fn with_faults(parent: &Schedule, faults: Vec<Fault>) -> Schedule {
    Schedule { faults: Some(faults), ..parent.clone() }
}

fn without(parent: &Schedule, index: usize) -> Schedule {
    let mut faults = parent.faults.clone().unwrap_or_default();
    assert!(index < faults.len());
    faults.remove(index);
    with_faults(parent, faults)
}

fn replaced(parent: &Schedule, index: usize, fault: Fault) -> Schedule {
    let mut faults = parent.faults.clone().unwrap_or_default();
    assert!(index < faults.len());
    faults[index] = fault;
    with_faults(parent, faults)
}

/// Counts around `n`: a little and a tenth earlier and later, at least 1.
fn counts_around(n: u64) -> Vec<u64> {
    let far = (n / 10).max(2);
    let mut out: Vec<u64> = [n.saturating_sub(far), n.saturating_sub(1), n + 1, n + far].into_iter().filter(|&c| c >= 1 && c != n).collect();
    out.dedup();
    out
}

/// Times around `at_ns`: a millisecond and a tenth of the time earlier and later.
fn times_around(at_ns: u64) -> Vec<u64> {
    let far = (at_ns / 10).max(MOVE_NS);
    let mut out: Vec<u64> = [at_ns.checked_sub(far), at_ns.checked_sub(MOVE_NS), Some(at_ns + MOVE_NS), Some(at_ns + far)].into_iter().flatten().collect();
    out.dedup();
    out
}

/// The fault moved earlier and later, with where it went, earliest first.
pub fn moves(fault: &Fault) -> Vec<(String, Fault)> {
    let by_count = |n: u64, label: &str, set: &dyn Fn(u64) -> Fault| -> Vec<(String, Fault)> { counts_around(n).into_iter().map(|c| (format!("{label}{c}"), set(c))).collect() };
    let out = match fault.clone() {
        Fault::Crash { node, at_ns, disk_op: Some(op), restart_after_ns, torn, kill } => {
            by_count(op, "disk op #", &|c| Fault::Crash { node: node.clone(), at_ns, disk_op: Some(c), restart_after_ns, torn, kill })
        }
        Fault::FsyncEio { node, sync, at_ns } => by_count(sync, "fsync #", &|c| Fault::FsyncEio { node: node.clone(), sync: c, at_ns }),
        Fault::Buggify { node, site, call, at_ns } => by_count(call, "call ", &|c| Fault::Buggify { node: node.clone(), site: site.clone(), call: c, at_ns }),
        Fault::CorruptRead { node, read, at_ns, byte, bit, path } => {
            by_count(read, "read #", &|c| Fault::CorruptRead { node: node.clone(), read: c, at_ns, byte, bit, path: path.clone() })
        }
        Fault::LatentSectorError { node, read, at_ns, sector, path } => {
            by_count(read, "read #", &|c| Fault::LatentSectorError { node: node.clone(), read: c, at_ns, sector, path: path.clone() })
        }
        Fault::MisdirectedWrite { node, write, at_ns, to_sector, path } => {
            by_count(write, "write #", &|c| Fault::MisdirectedWrite { node: node.clone(), write: c, at_ns, to_sector, path: path.clone() })
        }
        Fault::LostWrite { node, write, at_ns, path } => by_count(write, "write #", &|c| Fault::LostWrite { node: node.clone(), write: c, at_ns, path: path.clone() }),
        Fault::WriteError { node, write, at_ns, errno, path } => {
            by_count(write, "write #", &|c| Fault::WriteError { node: node.clone(), write: c, at_ns, errno, path: path.clone() })
        }
        timed => times_around(timed.at_ns()).into_iter().map(|t| (format!("t={}", seedfall_sim::VTime(t)), timed.clone().at(t))).collect(),
    };
    assert!(out.len() <= MOVES_PER_FAULT_MAX);
    out
}

/// Tests each fault of `parent` applied at or before `failure_ns`: without
/// it, and (the necessary ones) moved.
pub fn test_faults(program: &Program, parent: &Schedule, target: &Target, failure_ns: u64, jobs: usize, stop: &AtomicBool, on_run: &mut dyn FnMut()) -> FaultTests {
    let faults = parent.faults.clone().unwrap_or_default();
    let before: Vec<usize> = (0..faults.len()).filter(|&i| faults[i].at_ns() <= failure_ns).collect();
    let untested = before.len().saturating_sub(FAULTS_TESTED_MAX);
    let chosen = &before[untested..];
    if chosen.is_empty() {
        return FaultTests { tested: Vec::new(), untested: 0, without_any: None, schedule_without_any: None, runs: 0 };
    }
    // Without each, then without any.
    let mut schedules: Vec<Schedule> = chosen.iter().map(|&i| without(parent, i)).collect();
    let none = with_faults(parent, faults.iter().filter(|f| f.at_ns() > failure_ns).cloned().collect());
    schedules.push(none.clone());
    let n_schedules = schedules.len();
    let outcomes = run_all(program, &schedules, jobs, stop, &mut *on_run);
    let mut runs = outcomes.len() as u64;
    let mut tested: Vec<FaultTest> = chosen
        .iter()
        .zip(&outcomes)
        .zip(schedules)
        .map(|((&index, o), schedule_without)| {
            let (without, without_failure) = Rerun::of(target, o);
            FaultTest { index, fault: faults[index].clone(), necessary: without != Rerun::Fails, without, without_failure, moved: Vec::new(), schedule_without }
        })
        .collect();
    // Stopped early, the last outcome is not the run without any fault.
    let without_any = outcomes.last().filter(|_| outcomes.len() == n_schedules).map(|o| Rerun::of(target, o).0);
    // The necessary ones, moved.
    let mut owners = Vec::new();
    let mut moved = Vec::new();
    for (t_idx, t) in tested.iter().enumerate().filter(|(_, t)| t.necessary) {
        for (to, fault) in moves(&t.fault) {
            owners.push((t_idx, to, fault.clone()));
            moved.push(replaced(parent, t.index, fault));
        }
    }
    let outcomes = run_all(program, &moved, jobs, stop, &mut *on_run);
    runs += outcomes.len() as u64;
    for (((t_idx, to, fault), o), schedule) in owners.into_iter().zip(&outcomes).zip(moved) {
        let (rerun, failure) = Rerun::of(target, o);
        tested[t_idx].moved.push(Move { to, fault, rerun, failure, schedule });
    }
    assert!(tested.iter().all(|t| t.moved.len() <= MOVES_PER_FAULT_MAX));
    FaultTests { tested, untested, without_any, schedule_without_any: Some(none), runs }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_move_a_little_and_a_tenth_and_stay_positive() {
        assert_eq!(counts_around(178), [161, 177, 179, 195]);
        assert_eq!(counts_around(1), [2, 3]);
        assert_eq!(counts_around(2), [1, 3, 4]);
    }

    #[test]
    fn times_move_a_millisecond_and_a_tenth_and_stay_at_or_after_zero() {
        assert_eq!(times_around(266_000_000), [239_400_000, 265_000_000, 267_000_000, 292_600_000]);
        assert_eq!(times_around(500_000), [1_500_000]);
        assert_eq!(times_around(5_000_000), [4_000_000, 6_000_000]);
    }

    #[test]
    fn a_disk_op_crash_moves_by_its_op_and_keeps_the_rest() {
        let crash = Fault::Crash { node: "kv".into(), at_ns: 7, disk_op: Some(20), restart_after_ns: Some(5), torn: true, kill: false };
        let m = moves(&crash);
        assert_eq!(m.iter().map(|(to, _)| to.as_str()).collect::<Vec<_>>(), ["disk op #18", "disk op #19", "disk op #21", "disk op #22"]);
        assert_eq!(m[0].1, Fault::Crash { node: "kv".into(), at_ns: 7, disk_op: Some(18), restart_after_ns: Some(5), torn: true, kill: false });
        let timed = Fault::Pause { node: "kv".into(), at_ns: 20_000_000, duration_ns: 3 };
        assert_eq!(moves(&timed)[0].1.at_ns(), 18_000_000);
    }
}
