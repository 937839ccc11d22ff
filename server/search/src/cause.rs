//! `cause`: when did the failure become inevitable?
//!
//! The failing run is branched at many moments: each child replays the run
//! exactly up to the moment, then re-keys every stream and lives a different
//! future (its faults stay as scheduled). The fraction of children that still
//! fail the same way rises as the moment nears the point of no return; the
//! window where it jumps to (near) 1 is where the failure became inevitable,
//! and the parent's events in that window say what happened there. Every
//! child is an ordinary schedule (seed, faults, branches) that replays.
use crate::target::{run_all, Target};
use seedfall_sim::streams::Stream;
use seedfall_sim::trace::TraceEvent;
use seedfall_sim::{Branch, Program, Schedule};
use serde::Serialize;
use std::sync::atomic::AtomicBool;

/// The fraction of failing children from which the failure counts as inevitable.
pub const INEVITABLE: f64 = 0.9;
pub const MOMENTS_MAX: usize = 1_000;
pub const CHILDREN_MAX: usize = 1_000;

#[derive(Clone, Debug, Serialize)]
pub struct Moment {
    pub at_ns: u64,
    pub children: u32,
    pub failing: u32,
}

#[derive(Clone, Debug, Serialize)]
pub struct CauseReport {
    pub target: Target,
    pub failure_ns: u64,
    pub moments: Vec<Moment>,
    /// (after, until]: the failure became inevitable in this window.
    pub window: Option<(u64, u64)>,
    pub window_events: Vec<TraceEvent>,
    #[serde(skip)]
    pub children: Vec<(usize, usize, Schedule)>,
    /// Whether each child (same order as `children`) failed the same way.
    #[serde(skip)]
    pub child_fails: Vec<bool>,
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

#[allow(clippy::too_many_arguments)]
pub fn cause(
    program: &Program,
    parent: &Schedule,
    parent_trace: &[TraceEvent],
    target: &Target,
    failure_ns: u64,
    moments: usize,
    children: usize,
    jobs: usize,
    stop: &AtomicBool,
    on_run: &mut dyn FnMut(),
) -> CauseReport {
    assert!((1..=MOMENTS_MAX).contains(&moments) && (1..=CHILDREN_MAX).contains(&children));
    let times: Vec<u64> = (0..moments).map(|i| failure_ns * i as u64 / moments as u64).collect();
    let mut all = Vec::with_capacity(moments * children);
    for (i, &t) in times.iter().enumerate() {
        for k in 0..children {
            all.push((i, k, child(parent, t, i, k)));
        }
    }
    let schedules: Vec<Schedule> = all.iter().map(|(_, _, s)| s.clone()).collect();
    let outcomes = run_all(program, &schedules, jobs, stop, on_run);
    let mut table: Vec<Moment> = times.iter().map(|&at_ns| Moment { at_ns, children: 0, failing: 0 }).collect();
    for ((i, _, _), o) in all.iter().zip(&outcomes) {
        table[*i].children += 1;
        table[*i].failing += u32::from(target.matches(o));
    }
    let frac = |m: &Moment| m.failing as f64 / m.children.max(1) as f64;
    // The earliest moment from which every later moment is inevitable.
    let mut first = None;
    for i in (0..table.len()).rev() {
        if frac(&table[i]) >= INEVITABLE {
            first = Some(i);
        } else {
            break;
        }
    }
    let window = match first {
        Some(0) => Some((0, 0)),
        Some(i) => Some((table[i - 1].at_ns, table[i].at_ns)),
        None => table.last().map(|m| (m.at_ns, failure_ns)),
    };
    const WINDOW_EVENTS_MAX: usize = 60;
    let window_events = match window {
        Some((a, b)) => parent_trace.iter().filter(|e| e.time_ns > a && e.time_ns <= b.max(a)).take(WINDOW_EVENTS_MAX).cloned().collect(),
        None => Vec::new(),
    };
    let child_fails = outcomes.iter().map(|o| target.matches(o)).collect();
    CauseReport { target: target.clone(), failure_ns, moments: table, window, window_events, children: all, child_fails }
}
