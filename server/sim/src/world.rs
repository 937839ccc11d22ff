//! The world of one run: the virtual clock, the event queue, the streams,
//! every node instance's scheduling state and disk, and the trace.
//!
//! The world is the only shared state of a run. Host calls reach it through
//! `NodeCtx::world`; the scheduler between steps. It is never touched by two
//! threads: a run is single-threaded from start to end.
use crate::config::Limits;
use crate::disk::Disk;
use crate::events::{Event, EventQueue};
use crate::streams::Streams;
use crate::trace::{EventKind, Stdio, Trace};
use crate::vtime::VTime;
use std::collections::{BTreeSet, VecDeque};

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
    unsupported_seen: BTreeSet<String>,
}

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
            unsupported_seen: BTreeSet::new(),
        }
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
