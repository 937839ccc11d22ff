//! `cause`: which faults the failure needs, and when it became certain.
//!
//! First the schedule's faults are tested (`faults`): each one before the
//! failure is removed, and the necessary ones (without which the failure
//! goes away) are moved earlier and later. Then the failing run is branched
//! at many moments after the last necessary fault: each child replays the
//! run exactly up to the moment, then re-keys every stream and lives a
//! different future (its faults stay as scheduled). The fraction of
//! children that still fail the same way says how settled the failure was
//! at each moment; the window where it reaches (near) 1 and stays there is
//! where it became certain, and the parent's events in that window say what
//! happened. When no moment has even half its children failing, no moment
//! made the failure likely, and no window is claimed.
//!
//! Moments start after the last necessary fault, and after the schedule's
//! own last branch: a child re-keyed before one of the parent's branches is
//! re-keyed back to the parent's future there. Every child is an ordinary
//! schedule (seed, faults, branches) that replays.
pub mod faults;

use crate::target::{run_all, Target};
use faults::FaultTests;
use seedfall_sim::streams::Stream;
use seedfall_sim::trace::TraceEvent;
use seedfall_sim::{Branch, Program, Schedule};
use serde::Serialize;
use std::sync::atomic::AtomicBool;

/// The fraction of failing children from which the failure counts as certain.
pub const CERTAIN: f64 = 0.9;
/// The fraction of failing children from which the failure counts as likely.
pub const LIKELY: f64 = 0.5;
pub const MOMENTS_MAX: usize = 1_000;
pub const CHILDREN_MAX: usize = 1_000;
const WINDOW_EVENTS_MAX: usize = 60;

#[derive(Clone, Debug, Serialize)]
pub struct Moment {
    pub at_ns: u64,
    pub children: u32,
    pub failing: u32,
}

impl Moment {
    fn fraction(&self) -> f64 {
        self.failing as f64 / self.children.max(1) as f64
    }
}

/// Where the moments start.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MomentsAfter {
    /// The start of the run: no fault is necessary and the schedule has no branch.
    Start,
    /// The last necessary fault.
    LastNecessaryFault,
    /// The schedule's own last branch (after the last necessary fault).
    LastBranch,
}

/// What the moments say.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Became {
    /// From some moment on, at least `CERTAIN` of the children fail.
    Certain,
    /// From some moment on, at least `LIKELY` of them fail, never `CERTAIN`
    /// of every later moment.
    Likely,
    /// Some moments reach `LIKELY`, but a later one falls below it again.
    NotForGood,
    /// No moment reaches `LIKELY`: no window is claimed.
    NeverLikely,
}

/// How `cause` spends its runs.
#[derive(Clone, Copy, Debug)]
pub struct CauseOptions {
    pub moments: usize,
    pub children: usize,
    pub jobs: usize,
}

#[derive(Clone, Debug, Serialize)]
pub struct CauseReport {
    pub target: Target,
    pub failure_ns: u64,
    /// Faults without which the failure goes away, in schedule order.
    pub necessary_faults: Vec<faults::FaultTest>,
    /// Faults without which it still happens.
    pub incidental_faults: Vec<faults::FaultTest>,
    /// Faults before the failure not tested (beyond `FAULTS_TESTED_MAX`).
    pub faults_untested: usize,
    /// The run without any fault (null when the schedule has none before
    /// the failure).
    pub without_any_fault: Option<faults::Rerun>,
    /// Whether the failure needs some fault: false when the schedule has
    /// none, or it fails without all of them.
    pub depends_on_faults: bool,
    pub fault_runs: u64,
    pub moments_after: MomentsAfter,
    pub moments_after_ns: u64,
    pub moments: Vec<Moment>,
    pub became: Became,
    /// (after, until]: where the failure became certain (or, if it never
    /// did, likely); null when no moment made it likely for good.
    pub window: Option<(u64, u64)>,
    pub window_events: Vec<TraceEvent>,
    #[serde(skip)]
    pub children: Vec<(usize, usize, Schedule)>,
    /// Whether each child (same order as `children`) failed the same way.
    #[serde(skip)]
    pub child_fails: Vec<bool>,
    #[serde(skip)]
    pub schedule_without_any: Option<Schedule>,
}

/// The branch key of child `k` at moment `i`: distinct, and never zero.
fn key(i: usize, k: usize) -> u64 {
    ((i as u64) << 32 | k as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1
}

pub fn child(parent: &Schedule, at_ns: u64, i: usize, k: usize) -> Schedule {
    let mut s = parent.clone();
    let streams = Stream::ALL.iter().map(|s| s.name().to_string()).collect();
    s.branches.push(Branch { at_ns, streams, key: key(i, k) });
    s
}

/// The most runs a cause spends on a schedule with `n_faults` faults.
pub fn runs_max(n_faults: usize, options: &CauseOptions) -> u64 {
    let tested = n_faults.min(faults::FAULTS_TESTED_MAX) as u64;
    let fault_runs = if tested == 0 { 0 } else { tested + 1 + tested * faults::MOVES_PER_FAULT_MAX as u64 };
    fault_runs + (options.moments * options.children) as u64
}

/// Where the moments start: after the last necessary fault and the
/// schedule's last branch, else at 0.
fn moments_start(tests: &FaultTests, parent: &Schedule, failure_ns: u64) -> (MomentsAfter, u64) {
    let fault = tests.last_necessary_ns();
    let branch = parent.applied_branches().iter().map(|b| b.at_ns).filter(|&t| t < failure_ns).max();
    match (fault, branch) {
        (None, None) => (MomentsAfter::Start, 0),
        (Some(f), Some(b)) if b > f => (MomentsAfter::LastBranch, b),
        (None, Some(b)) => (MomentsAfter::LastBranch, b),
        (Some(f), _) => (MomentsAfter::LastNecessaryFault, f),
    }
}

/// `moments` times in [start, failure): from 0 when starting at the run's
/// start, else from just after `start_ns` (the fault or branch has happened).
fn moment_times(start_ns: u64, failure_ns: u64, moments: usize) -> Vec<u64> {
    assert!(start_ns <= failure_ns && moments >= 1);
    let first = if start_ns == 0 { 0 } else { (start_ns + 1).min(failure_ns) };
    let span = failure_ns - first;
    (0..moments as u64).map(|i| first + span * i / moments as u64).collect()
}

/// What the moments say, and the window: the one before the earliest moment
/// from which every later moment reaches the threshold.
fn judge(table: &[Moment], start_ns: u64) -> (Became, Option<(u64, u64)>) {
    let tail_from = |threshold: f64| {
        let n = table.iter().rev().take_while(|m| m.fraction() >= threshold).count();
        (n > 0).then(|| table.len() - n)
    };
    let window = |i: usize| match i {
        0 if start_ns == 0 => (0, 0),
        0 => (start_ns, table[0].at_ns),
        i => (table[i - 1].at_ns, table[i].at_ns),
    };
    if let Some(i) = tail_from(CERTAIN) {
        return (Became::Certain, Some(window(i)));
    }
    if let Some(i) = tail_from(LIKELY) {
        return (Became::Likely, Some(window(i)));
    }
    if table.iter().any(|m| m.fraction() >= LIKELY) {
        return (Became::NotForGood, None);
    }
    (Became::NeverLikely, None)
}

/// The failing run cause explains.
#[derive(Clone, Copy, Debug)]
pub struct Failing<'a> {
    /// The schedule that replays it exactly (`target::exact`).
    pub schedule: &'a Schedule,
    pub trace: &'a [TraceEvent],
    pub target: &'a Target,
    pub failure_ns: u64,
}

/// With `snapshots`, the moments' children continue from snapshots of the
/// failing run, taken in one run of it, instead of each running its prefix.
pub fn cause(program: &Program, failing: &Failing, options: &CauseOptions, snapshots: Option<&crate::snapshots::Snapshots>, stop: &AtomicBool, on_run: &mut dyn FnMut()) -> CauseReport {
    let Failing { schedule: parent, trace: parent_trace, target, failure_ns } = *failing;
    let (moments, children) = (options.moments, options.children);
    assert!((1..=MOMENTS_MAX).contains(&moments) && (1..=CHILDREN_MAX).contains(&children));
    let tests = faults::test_faults(program, parent, target, failure_ns, options.jobs, stop, &mut *on_run);
    let (moments_after, start_ns) = moments_start(&tests, parent, failure_ns);
    let times = moment_times(start_ns, failure_ns, moments);
    let mut all = Vec::with_capacity(moments * children);
    for (i, &t) in times.iter().enumerate() {
        for k in 0..children {
            all.push((i, k, child(parent, t, i, k)));
        }
    }
    let schedules: Vec<Schedule> = all.iter().map(|(_, _, s)| s.clone()).collect();
    let outcomes = match snapshots {
        Some(s) => {
            s.prepare(parent, &times);
            let of = vec![Some(parent.clone()); schedules.len()];
            crate::target::run_all_from(program, Some(crate::target::Parents { snapshots: s, of: &of }), &schedules, options.jobs, stop, &mut *on_run)
        }
        None => run_all(program, &schedules, options.jobs, stop, &mut *on_run),
    };
    let mut table: Vec<Moment> = times.iter().map(|&at_ns| Moment { at_ns, children: 0, failing: 0 }).collect();
    let child_fails: Vec<bool> = outcomes.iter().map(|o| target.matches(o)).collect();
    for ((i, _, _), &fails) in all.iter().zip(&child_fails) {
        table[*i].children += 1;
        table[*i].failing += u32::from(fails);
    }
    let (became, window) = judge(&table, start_ns);
    let window_events = match window {
        Some((0, 0)) | None => Vec::new(),
        Some((a, b)) => parent_trace.iter().filter(|e| e.time_ns >= a && e.time_ns <= b).take(WINDOW_EVENTS_MAX).cloned().collect(),
    };
    let depends_on_faults = tests.without_any.is_some_and(|r| r != faults::Rerun::Fails);
    let (necessary_faults, incidental_faults) = tests.tested.iter().cloned().partition(|t| t.necessary);
    CauseReport {
        target: target.clone(),
        failure_ns,
        necessary_faults,
        incidental_faults,
        faults_untested: tests.untested,
        without_any_fault: tests.without_any,
        depends_on_faults,
        fault_runs: tests.runs,
        moments_after,
        moments_after_ns: start_ns,
        moments: table,
        became,
        window,
        window_events,
        children: all,
        child_fails,
        schedule_without_any: tests.schedule_without_any,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(fails: &[u32]) -> Vec<Moment> {
        fails.iter().enumerate().map(|(i, &failing)| Moment { at_ns: 10 * i as u64, children: 8, failing }).collect()
    }

    #[test]
    fn the_window_is_before_the_certain_tail() {
        assert_eq!(judge(&table(&[0, 3, 8, 8]), 0), (Became::Certain, Some((10, 20))));
        assert_eq!(judge(&table(&[8, 8]), 0), (Became::Certain, Some((0, 0))));
        // Certain from the first moment after a necessary fault at t=5.
        let after_fault: Vec<Moment> = table(&[8, 8]).into_iter().map(|m| Moment { at_ns: m.at_ns + 6, ..m }).collect();
        assert_eq!(judge(&after_fault, 5), (Became::Certain, Some((5, 6))));
    }

    #[test]
    fn no_likely_moment_claims_no_window() {
        assert_eq!(judge(&table(&[0, 1, 0, 3]), 0), (Became::NeverLikely, None));
        assert_eq!(judge(&table(&[5, 1, 0, 0]), 0), (Became::NotForGood, None));
        assert_eq!(judge(&table(&[0, 4, 5, 7]), 0), (Became::Likely, Some((0, 10))));
    }

    #[test]
    fn moments_start_just_after_a_fault_and_at_zero_otherwise() {
        assert_eq!(moment_times(0, 160, 4), [0, 40, 80, 120]);
        assert_eq!(moment_times(100, 161, 3), [101, 121, 141]);
        assert_eq!(moment_times(160, 160, 2), [160, 160]);
    }
}
