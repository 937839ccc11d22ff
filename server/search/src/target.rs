//! The failure a tool is chasing, and how to tell a run reproduces it: the
//! same finding (`finding::Signature`): the same property, or the same
//! panic at the same place with the same message up to its numbers, or the
//! same kind of exit on the same node.
use crate::finding::Signature;
use seedfall_sim::failure::{Failure, FailureKind};
use seedfall_sim::{Outcome, Program, RunOptions, Schedule, Verdict};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Target {
    pub kind: FailureKind,
    pub node: String,
    pub message: String,
    /// Where it failed, when the guest said (pins written before findings
    /// have none, and then match at any location).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub location: Option<String>,
}

impl Target {
    pub fn of(f: &Failure) -> Target {
        Target { kind: f.kind, node: f.node.clone(), message: f.message.clone(), location: f.location.clone() }
    }

    fn signature(&self) -> Signature {
        Signature::of(&Failure { kind: self.kind, node: self.node.clone(), message: self.message.clone(), location: self.location.clone(), details: None, hint: None, time_ns: 0, step: 0 })
    }

    /// The run fails with the same finding.
    pub fn matches(&self, outcome: &Outcome) -> bool {
        outcome.failure.as_ref().is_some_and(|f| self.matches_failure(f))
    }

    pub fn matches_failure(&self, f: &Failure) -> bool {
        let (want, got) = (self.signature(), Signature::of(f));
        let location_agrees = self.location.is_none() || want.location == got.location;
        want.kind == got.kind && want.node == got.node && want.template == got.template && location_agrees
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
    run_each_from(program, None, schedules, jobs, keep_failing_traces, stop, |o| {
        each(o);
        true
    })
}

/// Where runs may start from snapshots: the runner, and each schedule's
/// parent (None: no parent, from scratch).
#[derive(Clone, Copy)]
pub struct Parents<'a> {
    pub snapshots: &'a crate::snapshots::Snapshots,
    pub of: &'a [Option<Schedule>],
}

/// `run_each`, continuing each schedule that has a parent from a snapshot
/// of its parent when one serves (the outcome is the same either way), and
/// ending after the first outcome `each` returns false for (nothing after
/// it in input order is run to the end or handed over).
pub fn run_each_from(program: &Program, parents: Option<Parents>, schedules: &[Schedule], jobs: usize, keep_failing_traces: bool, stop: &std::sync::atomic::AtomicBool, mut each: impl FnMut(Outcome) -> bool) {
    if let Some(p) = parents {
        assert_eq!(p.of.len(), schedules.len(), "a parent (or None) per schedule");
    }
    crate::pool::run_ordered_while(
        schedules.len() as u64,
        jobs,
        stop,
        |i| {
            let schedule = &schedules[i as usize];
            let mut o = match parents.and_then(|p| p.of[i as usize].as_ref().map(|base| (p.snapshots, base))) {
                Some((snapshots, base)) => snapshots.run(program, base, schedule, keep_failing_traces),
                None => seedfall_sim::run(program, schedule, &RunOptions::default()),
            };
            trim_trace(&mut o, keep_failing_traces);
            if keep_failing_traces && failed(&o) {
                crate::durability::check(program, &mut o, &RunOptions::default());
            }
            o
        },
        |_, o| each(o),
    );
}

/// What a run keeps of its trace, from the start or from a snapshot alike:
/// all of it when it failed and failing traces were asked for, what
/// explore's signals read when it passed (`keep_signal_events`), nothing
/// otherwise.
pub fn trim_trace(o: &mut Outcome, failing_trace: bool) {
    if !failing_trace {
        o.trace = Vec::new();
    } else if !failed(o) {
        keep_signal_events(&mut o.trace);
    }
}

/// The events explore reads signals from: every crash (its losses), and
/// the first of each network event per node and kind
/// (`explore::signals::net_event`): a client that reconnects a thousand
/// times keeps one line, not a thousand.
pub fn keep_signal_events(trace: &mut Vec<seedfall_sim::trace::TraceEvent>) {
    use seedfall_sim::trace::EventKind;
    let mut seen = std::collections::BTreeSet::new();
    trace.retain(|e| match &e.kind {
        EventKind::Crash { .. } => true,
        EventKind::Net { text } => seen.insert((e.node.clone(), crate::explore::signals::net_event(text))),
        _ => false,
    });
    trace.shrink_to_fit();
}

/// Runs many schedules on `jobs` workers; outcomes (without traces) come
/// back in input order.
pub fn run_all(program: &Program, schedules: &[Schedule], jobs: usize, stop: &std::sync::atomic::AtomicBool, on_done: impl FnMut()) -> Vec<Outcome> {
    run_all_from(program, None, schedules, jobs, stop, on_done)
}

/// `run_all`, from snapshots of the parents (`run_each_from`).
pub fn run_all_from(program: &Program, parents: Option<Parents>, schedules: &[Schedule], jobs: usize, stop: &std::sync::atomic::AtomicBool, mut on_done: impl FnMut()) -> Vec<Outcome> {
    let mut out = Vec::with_capacity(schedules.len());
    run_each_from(program, parents, schedules, jobs, false, stop, |o| {
        on_done();
        out.push(o);
        true
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

#[cfg(test)]
mod tests {
    use super::*;

    fn failure(kind: FailureKind, node: &str, message: &str, location: Option<&str>) -> Failure {
        Failure { kind, node: node.into(), message: message.into(), location: location.map(str::to_string), details: None, hint: None, time_ns: 0, step: 0 }
    }

    #[test]
    fn a_target_matches_its_finding_not_its_numbers() {
        let t = Target::of(&failure(FailureKind::Panic, "c#1", "counter is 22", Some("main.go:9")));
        assert!(t.matches_failure(&failure(FailureKind::Panic, "c#2", "counter is 21", Some("main.go:9"))));
        assert!(!t.matches_failure(&failure(FailureKind::Panic, "c#1", "counter is 22", Some("main.go:10"))), "another line is another finding");
        assert!(!t.matches_failure(&failure(FailureKind::Panic, "d", "counter is 22", Some("main.go:9"))));
        assert!(!t.matches_failure(&failure(FailureKind::Panic, "c", "queue is 22", Some("main.go:9"))));
        // A pin written before findings has no location: any location.
        let old = Target { location: None, ..t.clone() };
        assert!(old.matches_failure(&failure(FailureKind::Panic, "c", "counter is 3", Some("main.go:10"))));
        let exit = Target::of(&failure(FailureKind::Exit, "c#1", "exited with code 3", None));
        assert!(exit.matches_failure(&failure(FailureKind::Exit, "c#3", "exited with code 4", None)), "exits group by node and kind");
        let prop = Target::of(&failure(FailureKind::Property, "a", "acknowledged writes survive", Some("m.go:5")));
        assert!(prop.matches_failure(&failure(FailureKind::Property, "b", "acknowledged writes survive", Some("m.go:5"))), "a property on any node");
    }
}
