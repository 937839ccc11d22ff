//! Snapshots, as one run sees them: a moment between scheduler steps where
//! the run may stop a while, and how a stopped run becomes the run of
//! another schedule from there on.
//!
//! The scheduler offers the top of every loop (after the end checks, before
//! branches due are applied and due events fire) to a [`Pause`]. What the
//! caller does there is its own business: `seedfall-search` forks the
//! process, so each child continues this very world. A child calls
//! [`World::retarget`] to carry on as `child` instead of `base`.
//!
//! Why that is exact: `child` differs from `base` only in branches, all at
//! or after `T` = [`divergence`]. A branch draws nothing and schedules no
//! event, so up to the first loop top at or after `T` the two runs make the
//! same steps, fire the same events and draw the same numbers; and that
//! loop top is exactly where `child`'s first own branch applies. Schedules
//! that differ in faults get no snapshot: a fault is an event, and a fault
//! one of them has and the other has not moves where the clock stops.
use crate::schedule::Schedule;
use crate::world::World;

/// Bound on pauses reached at one loop top (moments the clock passed in
/// one step).
pub const PAUSES_AT_ONCE_MAX: usize = 100_000;

/// A run's stops between scheduler steps.
pub trait Pause {
    /// Whether the run stops here (`w.now` is the loop top's time).
    fn due(&mut self, w: &World) -> bool;
    /// The run stopped: `w` is the whole world. Must make `due` false, or
    /// true for a later moment only.
    fn reached(&mut self, w: &mut World);
    /// Due events fired and crashed instances restarted; the next step is
    /// not picked yet. A finer point than `due` for a pause that only looks
    /// (a snapshot forks at `due` only: branches due are applied by now).
    fn looked(&mut self, _w: &mut World) {}
    /// The run ended (after its last step, before its instances go).
    fn ended(&mut self, _w: &mut World) {}
}

/// The latest time `T` such that a run of `base` stopped at its first loop
/// top at or after `T` can continue as `child`: the earliest branch that
/// one of them has and the other has not (a prefix's re-key counts as a
/// branch). None when their streams start from other seeds or their faults
/// differ (no snapshot serves), or when they do not differ at all.
pub fn divergence(base: &Schedule, child: &Schedule) -> Option<u64> {
    if base.world_seed() != child.world_seed() || base.faults != child.faults {
        return None;
    }
    let (b, c) = (base.applied_branches(), child.applied_branches());
    let first_apart = b.iter().zip(&c).position(|(x, y)| x != y).unwrap_or(b.len().min(c.len()));
    match (b.get(first_apart), c.get(first_apart)) {
        (None, None) => None,
        (Some(x), None) => Some(x.at_ns),
        (None, Some(y)) => Some(y.at_ns),
        (Some(x), Some(y)) => Some(x.at_ns.min(y.at_ns)),
    }
}

impl World {
    /// Continues this run as `child` from now on: its branches not yet due
    /// replace this run's. `child` must agree with the run's schedule on
    /// everything that happened so far (`divergence` at or after now), and
    /// the clock starts again for the host figures.
    pub fn retarget(&mut self, config: &crate::config::Config, child: &Schedule) {
        assert_eq!(child.world_seed(), self.seed, "a snapshot serves only runs of its own streams");
        let sorted = child.applied_branches();
        let applied = self.branches_applied;
        assert!(applied <= sorted.len(), "the child lacks a branch the run applied");
        let mine = Schedule { seed: self.name_seed, faults: None, branches: self.branches.clone(), prefix: self.prefix }.applied_branches();
        assert!(sorted[..applied] == mine[..applied], "the child disagrees with a branch the run applied");
        self.branches_pending = sorted[applied..].to_vec().into();
        self.branches = child.branches.clone();
        self.name_seed = child.seed;
        self.prefix = child.prefix;
        if child.faults.is_none() && !sorted.is_empty() && self.faults.rates.is_none() {
            self.faults.rates = Some(std::sync::Arc::new(config.clone()));
        }
        self.real_start = std::time::Instant::now();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schedule::Branch;

    fn branch(at_ns: u64, key: u64) -> Branch {
        Branch { at_ns, streams: vec!["sched".into()], key }
    }

    #[test]
    fn divergence_is_the_first_branch_apart() {
        let base = Schedule { seed: 3, faults: Some(Vec::new()), branches: vec![branch(50, 1), branch(10, 2)], prefix: None };
        let mut child = base.clone();
        child.branches.push(branch(30, 9));
        assert_eq!(divergence(&base, &child), Some(30), "after the branch at 10, before the one at 50");
        child.branches.push(branch(5, 9));
        assert_eq!(divergence(&base, &child), Some(5));
        assert_eq!(divergence(&base, &base), None, "the same schedule");
        let other_faults = Schedule { faults: None, ..child.clone() };
        assert_eq!(divergence(&base, &other_faults), None, "faults differ: no snapshot");
        let other_seed = Schedule { seed: 4, ..base.clone() };
        assert_eq!(divergence(&base, &other_seed), None);
        // A base branch the child lacks diverges at that branch.
        let fewer = Schedule { branches: vec![branch(10, 2)], ..base.clone() };
        assert_eq!(divergence(&base, &fewer), Some(50));
        // A prefix: seed 9's run of seed 3's streams re-keyed at 40.
        let plain = Schedule::seed(3);
        let from = Schedule { seed: 9, faults: None, branches: Vec::new(), prefix: Some(crate::schedule::Prefix { seed: 3, at_ns: 40, setup: false }) };
        assert_eq!(divergence(&plain, &from), Some(40));
        assert_eq!(divergence(&Schedule::seed(9), &from), None, "other streams");
    }
}
