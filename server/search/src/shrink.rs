//! `shrink`: the smallest schedule that still fails the same way.
//!
//! Delta debugging (ddmin) over the faults: try the schedule without each of
//! n chunks; keep the first (in chunk order) that still fails the same way;
//! refine until single faults cannot be removed. Then simplify what is left:
//! halve pause and skew windows and restart delays, and move faults later,
//! keeping each change that still fails. Candidates of one step run in
//! parallel, but the winner is always the lowest-numbered one that fails,
//! so the result does not depend on `-j`.
use crate::target::{run_all, Target};
use seedfall_sim::{Fault, Program, Schedule};
use std::sync::atomic::AtomicBool;

/// Restart delays are not shortened below this: a shorter one is no simpler.
const RESTART_NS_MIN: u64 = 1_000_000;

/// Bound on runs one shrink may spend.
pub const SHRINK_RUNS_MAX: u64 = 4_000;

pub struct ShrinkResult {
    pub original: Schedule,
    pub shrunk: Schedule,
    pub runs: u64,
    /// The virtual time of the failure in the shrunk run.
    pub failure_ns: u64,
    /// The shrunk run's failure message: the same finding as the original,
    /// its numbers may differ ("counter is 21" for "counter is 22").
    pub message: String,
}

struct Shrinker<'a> {
    program: &'a Program,
    target: &'a Target,
    jobs: usize,
    runs: u64,
    stop: &'a AtomicBool,
    on_run: &'a mut dyn FnMut(u64),
}

impl Shrinker<'_> {
    /// Index of the first candidate that still fails the same way.
    fn first_failing(&mut self, candidates: &[Vec<Fault>], base: &Schedule) -> Option<usize> {
        if candidates.is_empty() || self.runs >= SHRINK_RUNS_MAX {
            return None;
        }
        let room = (SHRINK_RUNS_MAX - self.runs) as usize;
        let candidates = &candidates[..candidates.len().min(room)];
        let schedules: Vec<Schedule> = candidates.iter().map(|f| Schedule { faults: Some(f.clone()), ..base.clone() }).collect();
        let runs = &mut self.runs;
        let on_run = &mut self.on_run;
        let outcomes = run_all(self.program, &schedules, self.jobs, self.stop, || {
            *runs += 1;
            on_run(*runs);
        });
        outcomes.iter().position(|o| self.target.matches(o))
    }

    fn ddmin(&mut self, mut faults: Vec<Fault>, base: &Schedule) -> Vec<Fault> {
        let mut n = 2usize;
        while faults.len() >= 2 {
            let chunk = faults.len().div_ceil(n);
            let candidates: Vec<Vec<Fault>> = (0..n)
                .map(|i| faults.iter().enumerate().filter(|(j, _)| j / chunk != i).map(|(_, f)| f.clone()).collect())
                .filter(|c: &Vec<Fault>| c.len() < faults.len())
                .collect();
            match self.first_failing(&candidates, base) {
                Some(i) => {
                    faults = candidates[i].clone();
                    n = (n - 1).max(2);
                }
                None if n >= faults.len() => break,
                None => n = (n * 2).min(faults.len()),
            }
            if self.runs >= SHRINK_RUNS_MAX {
                break;
            }
        }
        if faults.len() == 1 && self.first_failing(&[Vec::new()], base).is_some() {
            faults.clear();
        }
        faults
    }

    /// Shorter windows, shorter restart delays, later faults.
    fn simplify(&mut self, mut faults: Vec<Fault>, base: &Schedule, failure_ns: u64) -> Vec<Fault> {
        for round in 0..8 {
            let mut changed = false;
            for i in 0..faults.len() {
                let options = simpler(&faults[i], failure_ns);
                let candidates: Vec<Vec<Fault>> = options
                    .into_iter()
                    .map(|f| {
                        let mut c = faults.clone();
                        c[i] = f;
                        c
                    })
                    .collect();
                if let Some(k) = self.first_failing(&candidates, base) {
                    faults = candidates[k].clone();
                    changed = true;
                }
            }
            if !changed || round == 7 {
                break;
            }
        }
        faults
    }
}

/// Simpler variants of one fault, most aggressive first.
fn simpler(f: &Fault, failure_ns: u64) -> Vec<Fault> {
    let mut out = Vec::new();
    let later = |at: u64| (failure_ns > at + 1_000).then(|| at + (failure_ns - at) / 2);
    match f.clone() {
        Fault::Pause { node, at_ns, duration_ns } if duration_ns > 1_000 => {
            out.push(Fault::Pause { node, at_ns, duration_ns: duration_ns / 2 });
        }
        Fault::ClockSkew { node, at_ns, rate_ppm, duration_ns } if duration_ns > 1_000 => {
            out.push(Fault::ClockSkew { node, at_ns, rate_ppm, duration_ns: duration_ns / 2 });
        }
        Fault::DiskFull { node, at_ns, duration_ns } if duration_ns > 1_000 => {
            out.push(Fault::DiskFull { node, at_ns, duration_ns: duration_ns / 2 });
        }
        Fault::Partition { node, at_ns, duration_ns, peers, direction } => {
            if duration_ns > 1_000 {
                out.push(Fault::Partition { node: node.clone(), at_ns, duration_ns: duration_ns / 2, peers: peers.clone(), direction });
            }
            // One way is simpler than both ways.
            if direction == seedfall_sim::schedule::Direction::Both {
                for d in [seedfall_sim::schedule::Direction::Outbound, seedfall_sim::schedule::Direction::Inbound] {
                    out.push(Fault::Partition { node: node.clone(), at_ns, duration_ns, peers: peers.clone(), direction: d });
                }
            }
        }
        Fault::Crash { node, at_ns, disk_op, restart_after_ns: Some(d), torn, kill } => {
            if torn {
                out.push(Fault::Crash { node: node.clone(), at_ns, disk_op, restart_after_ns: Some(d), torn: false, kill });
            }
            if d >= 2 * RESTART_NS_MIN {
                out.push(Fault::Crash { node, at_ns, disk_op, restart_after_ns: Some(d / 2), torn, kill });
            }
        }
        Fault::Crash { node, at_ns, disk_op, restart_after_ns, torn: true, kill } => {
            out.push(Fault::Crash { node, at_ns, disk_op, restart_after_ns, torn: false, kill });
        }
        _ => {}
    }
    // Later, for faults placed by time (a disk-op crash is placed by its op).
    match f {
        Fault::Pause { at_ns, .. }
        | Fault::ClockSkew { at_ns, .. }
        | Fault::ClockJump { at_ns, .. }
        | Fault::Partition { at_ns, .. }
        | Fault::DiskFull { at_ns, .. }
        | Fault::Crash { at_ns, disk_op: None, .. } => {
            if let Some(t) = later(*at_ns) {
                out.push(f.clone().at(t));
            }
        }
        _ => {}
    }
    out
}

/// Shrinks `schedule`, whose run fails with `target`.
pub fn shrink(program: &Program, original: &Schedule, target: &Target, jobs: usize, stop: &AtomicBool, on_run: &mut dyn FnMut(u64)) -> ShrinkResult {
    let faults = original.faults.clone().unwrap_or_default();
    let mut s = Shrinker { program, target, jobs, runs: 0, stop, on_run };
    let reduced = s.ddmin(faults, original);
    let base = Schedule { faults: Some(reduced.clone()), ..original.clone() };
    let first = run_all(program, std::slice::from_ref(&base), 1, stop, || {});
    let failure_ns = first[0].failure.as_ref().map_or(0, |f| f.time_ns);
    let simplified = s.simplify(reduced, original, failure_ns);
    let candidate = Schedule { faults: Some(simplified), ..original.clone() };
    let last = run_all(program, std::slice::from_ref(&candidate), 1, stop, || {});
    assert!(target.matches(&last[0]), "a shrunk schedule must still fail the same way");
    // What the run really applied, with the times it applied them: faults that
    // never came into play drop out, and disk-op crashes get their true times.
    let shrunk = crate::target::exact(&last[0]);
    let check = run_all(program, std::slice::from_ref(&shrunk), 1, stop, || {});
    assert_eq!(check[0].trace_hash, last[0].trace_hash, "the applied faults replay the same run");
    let failure_ns = last[0].failure.as_ref().map_or(0, |f| f.time_ns);
    let message = last[0].failure.as_ref().map_or_else(String::new, |f| f.message.clone());
    ShrinkResult { original: original.clone(), shrunk, runs: s.runs + 3, failure_ns, message }
}
