//! The world of one run: the virtual clock, the event queue, the streams,
//! every node instance's scheduling state and disk, and the trace.
//!
//! The world is the only shared state of a run. Host calls reach it through
//! `NodeCtx::world`; the scheduler between steps. It is never touched by two
//! threads: a run is single-threaded from start to end.
use crate::config::Limits;
use crate::failure::{Failure, FailureKind};
use crate::props::{Evaluation, PropertyKind, RunProperties};
use crate::schedule::{Branch, Fault};
use crate::streams::Stream;
use crate::disk::Disk;
use crate::events::{Event, EventQueue};
use crate::streams::Streams;
use crate::trace::{EventKind, Stdio, Trace};
use crate::vtime::VTime;
use std::collections::{BTreeMap, BTreeSet, VecDeque};

/// How many recent stderr lines a node keeps for explaining its failure.
pub const STDERR_TAIL_LINES_MAX: usize = 64;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    Runnable,
    /// Inside a blocking host call; woken by an event or another node.
    Blocked,
    Exited(i32),
    Failed,
}

pub struct NodeState {
    pub name: String,
    pub workload: bool,
    pub status: Status,
    /// Numbers each blocking wait, so a stale wake-up is recognised.
    pub wait_id: u64,
    /// Fuel consumed since the watchdog was last reset and already charged
    /// as virtual time.
    pub fuel_charged: u64,
    pub stderr_tail: VecDeque<String>,
}

pub struct World {
    pub seed: u64,
    pub now: VTime,
    pub step: u64,
    pub streams: Streams,
    pub events: EventQueue,
    pub nodes: Vec<NodeState>,
    pub disks: Vec<Disk>,
    pub trace: Trace,
    pub limits: Limits,
    /// Measure wall time spent in host calls (for benchmarks; costs ~40ns a call).
    pub profile: bool,
    pub host_calls: u64,
    pub host_ns: u64,
    /// A failure the world itself detected (a bound hit), ending the run.
    pub fault: Option<String>,
    /// A property failure, ending the run after the current step.
    pub property_failure: Option<Failure>,
    pub props: RunProperties,
    /// Faults applied so far, in order: the run's schedule.
    pub faults_applied: Vec<Fault>,
    /// `Some` when replaying a schedule: apply exactly these, draw none.
    pub faults_planned: Option<Vec<Fault>>,
    /// Branches not yet applied, earliest first.
    pub branches_pending: VecDeque<Branch>,
    pub setup_complete_ns: Option<u64>,
    /// Per (node, site): enabled for this run, and calls so far.
    buggify_sites: BTreeMap<(usize, String), (bool, u64)>,
    unsupported_seen: BTreeSet<String>,
}

/// Bound on distinct buggify sites per run.
pub const BUGGIFY_SITES_MAX: usize = 10_000;

impl World {
    pub fn new(seed: u64, limits: Limits, nodes: Vec<NodeState>, profile: bool) -> World {
        let disks = nodes.iter().map(|_| Disk::new()).collect();
        World {
            seed,
            now: VTime::ZERO,
            step: 0,
            streams: Streams::new(seed),
            events: EventQueue::default(),
            nodes,
            disks,
            trace: Trace::default(),
            limits,
            profile,
            host_calls: 0,
            host_ns: 0,
            fault: None,
            property_failure: None,
            props: RunProperties::default(),
            faults_applied: Vec::new(),
            faults_planned: None,
            branches_pending: VecDeque::new(),
            setup_complete_ns: None,
            buggify_sites: BTreeMap::new(),
            unsupported_seen: BTreeSet::new(),
        }
    }

    /// Records a property evaluation; returns true when it fails the run.
    pub fn evaluate(&mut self, node_idx: usize, e: Evaluation) -> bool {
        let before = self.props.by_message.get(&e.message).map(|p| (p.hits, p.trues));
        self.props.record(&e, self.now.nanos());
        let after = self.props.by_message.get(&e.message).map(|p| (p.hits, p.trues));
        let truth = match e.kind {
            PropertyKind::Reachable => true,
            PropertyKind::Unreachable => false,
            _ => e.cond,
        };
        // Trace the first hit and the first of each outcome, not every call:
        // a property inside a hot loop would drown the timeline.
        let first_hit = before.is_none();
        let first_true = truth && before.map_or(true, |(_, t)| t == 0);
        let first_false = !truth && before.map_or(true, |(h, t)| h == t);
        if after.is_some() && (first_hit || first_true || first_false) {
            self.record(
                Some(node_idx),
                EventKind::Property { kind: e.kind, message: e.message.clone(), cond: truth, location: e.location.clone() },
            );
        }
        if !e.kind.fails_run(e.cond) || self.property_failure.is_some() {
            return e.kind.fails_run(e.cond);
        }
        let what = match e.kind {
            PropertyKind::Unreachable => "reached",
            _ => "false",
        };
        let mut message = e.message.clone();
        if !e.details.is_empty() && e.details != "{}" && e.details != "null" {
            message = format!("{message} {}", e.details);
        }
        self.record(Some(node_idx), EventKind::Failure { message: format!("{} property {what}: {}", e.kind.name(), e.message) });
        self.nodes[node_idx].status = Status::Failed;
        self.property_failure = Some(Failure {
            kind: FailureKind::Property,
            node: self.nodes[node_idx].name.clone(),
            message,
            location: e.location,
            time_ns: self.now.nanos(),
            step: self.step,
        });
        true
    }

    pub fn setup_complete(&mut self, node_idx: usize, _details: String) {
        if self.setup_complete_ns.is_none() {
            self.setup_complete_ns = Some(self.now.nanos());
            self.record(Some(node_idx), EventKind::SetupComplete);
        }
    }

    /// FoundationDB buggify: a site is switched on for the run with p=1/4 on
    /// its first evaluation, then fires with p=1/4 per call. With a planned
    /// schedule, it fires exactly on the recorded calls.
    pub fn buggify(&mut self, node_idx: usize, site: &str) -> bool {
        let key = (node_idx, site.to_string());
        if !self.buggify_sites.contains_key(&key) && self.buggify_sites.len() >= BUGGIFY_SITES_MAX {
            return false;
        }
        let planned = self.faults_planned.is_some();
        let enabled_draw = planned || self.streams.below(Stream::Faults, 4) == 0;
        let state = self.buggify_sites.entry(key).or_insert((enabled_draw, 0));
        state.1 += 1;
        let (enabled, call) = *state;
        let node = self.nodes[node_idx].name.clone();
        let fires = match &self.faults_planned {
            Some(plan) => plan.iter().any(|f| matches!(f, Fault::Buggify { node: n, site: s, call: c, .. } if *n == node && s == site && *c == call)),
            None => enabled && self.streams.below(Stream::Faults, 4) == 0,
        };
        if fires {
            let fault = Fault::Buggify { node, site: site.to_string(), call, at_ns: self.now.nanos() };
            self.record(Some(node_idx), EventKind::Fault { fault: fault.clone() });
            self.faults_applied.push(fault);
        }
        fires
    }

    /// Applies every branch due at the current time (at a scheduler step).
    pub fn apply_due_branches(&mut self) {
        while self.branches_pending.front().is_some_and(|b| b.at_ns <= self.now.nanos()) {
            let b = self.branches_pending.pop_front().unwrap();
            for s in b.parsed_streams() {
                self.streams.rekey(s, self.seed, b.key);
            }
            self.record(None, EventKind::Branch { streams: b.streams.clone() });
        }
    }

    /// One JSON line the Antithesis SDK wrote to its local output file.
    pub fn antithesis_line(&mut self, node_idx: usize, line: &str) {
        let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else { return };
        if v.get("antithesis_setup").is_some() {
            self.setup_complete(node_idx, String::new());
            return;
        }
        let Some(a) = v.get("antithesis_assert") else { return };
        if a["hit"] != true {
            return; // a catalog entry from instrumentation, not an evaluation
        }
        let kind = match a["display_type"].as_str() {
            Some("Always") => PropertyKind::Always,
            Some("AlwaysOrUnreachable") => PropertyKind::AlwaysOrUnreachable,
            Some("Sometimes") => PropertyKind::Sometimes,
            Some("Reachable") => PropertyKind::Reachable,
            Some("Unreachable") => PropertyKind::Unreachable,
            _ => return,
        };
        let Some(message) = a["message"].as_str() else { return };
        let location = a["location"]["file"].as_str().map(|f| match a["location"]["begin_line"].as_u64() {
            Some(line) => format!("{f}:{line}"),
            None => f.to_string(),
        });
        let details = a.get("details").map(|d| d.to_string()).unwrap_or_default();
        let e = Evaluation { kind, cond: a["condition"] == true, message: message.to_string(), details, location };
        self.evaluate(node_idx, e);
    }

    /// Charges the compute a node did since its last charge as virtual time:
    /// the cluster shares one simulated CPU, so a node that spins on the
    /// clock sees time pass and others' timers come due.
    pub fn charge_compute(&mut self, node_idx: usize, fuel_left: u64) {
        let consumed = self.limits.watchdog_instructions.saturating_sub(fuel_left);
        let node = &mut self.nodes[node_idx];
        let fresh = consumed.saturating_sub(node.fuel_charged);
        node.fuel_charged = node.fuel_charged.max(consumed);
        self.now = self.now.saturating_add(fresh.saturating_mul(self.limits.ns_per_instruction));
    }

    /// A fuel-yield ended the step without a host call: charge the quantum.
    pub fn charge_quantum(&mut self, node_idx: usize, fuel: u64) {
        self.nodes[node_idx].fuel_charged += fuel;
        self.now = self.now.saturating_add(fuel.saturating_mul(self.limits.ns_per_instruction));
    }

    pub fn record(&mut self, node_idx: Option<usize>, kind: EventKind) {
        let name = node_idx.map(|i| self.nodes[i].name.as_str());
        self.trace.record(self.step, self.now, name, kind);
    }

    pub fn output(&mut self, node_idx: usize, stream: Stdio, line: String) {
        if stream == Stdio::Stderr {
            let tail = &mut self.nodes[node_idx].stderr_tail;
            if tail.len() == STDERR_TAIL_LINES_MAX {
                tail.pop_front();
            }
            tail.push_back(line.clone());
        }
        self.record(Some(node_idx), EventKind::Output { stream, text: line });
    }

    /// Logs the first use of a host call this simulator does not implement.
    pub fn unsupported(&mut self, node_idx: usize, call: &str) {
        if self.unsupported_seen.insert(call.to_string()) {
            self.record(Some(node_idx), EventKind::Unsupported { call: call.to_string() });
        }
    }

    /// Blocks a node until `deadline` (or forever, until something wakes it).
    /// Returns the wait's id.
    pub fn block(&mut self, node_idx: usize, deadline: Option<VTime>) -> u64 {
        let node = &mut self.nodes[node_idx];
        assert_eq!(node.status, Status::Runnable, "only a running node can block");
        node.wait_id += 1;
        node.status = Status::Blocked;
        node.fuel_charged = 0;
        let wait_id = node.wait_id;
        if let Some(at) = deadline {
            let at = at.max(self.now);
            if self.events.push(at, Event::Wake { node_idx, wait_id }).is_err() {
                self.fault.get_or_insert_with(|| "the event queue is full (a timer storm?)".to_string());
            }
        }
        wait_id
    }

    pub fn wake(&mut self, node_idx: usize, wait_id: u64) {
        let node = &mut self.nodes[node_idx];
        if node.status == Status::Blocked && node.wait_id == wait_id {
            node.status = Status::Runnable;
        }
    }
}
