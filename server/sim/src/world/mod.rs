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
use std::sync::Arc;
use std::collections::{BTreeMap, BTreeSet, VecDeque};

mod faults;
pub(crate) mod storage;
pub mod threads;

/// Bound on the missing folders a node remembers for a hint.
pub const MISSING_DIRS_MAX: usize = 16;

/// How many recent stderr lines a node keeps for explaining its failure.
pub const STDERR_TAIL_LINES_MAX: usize = 64;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    Runnable,
    /// Inside a blocking host call; woken by an event or another node.
    Blocked,
    Exited(i32),
    Failed,
    /// Crashed by a fault; it may restart.
    Crashed,
}

#[derive(Clone, Copy, Debug, Default)]
pub struct OutputTally {
    pub kept: u64,
    pub dropped_bytes: u64,
    pub dropped_lines: u64,
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
    /// What the node's host work was when it last trapped (`wasi::work`).
    pub work_summary: String,
    /// Output kept and dropped, per stream (stdout, stderr), over all the
    /// node's lives.
    pub output: [OutputTally; 2],
    pub stderr_tail: VecDeque<String>,
    pub clock: crate::clockmodel::NodeClock,
    /// The node makes no progress before this time (a pause fault).
    pub paused_until: Option<VTime>,
    /// Crashes so far; a restart event for an older crash is stale.
    pub generation: u64,
    /// Set by every `block`: the wait is for a socket (in poll_oneoff or a
    /// blocking socket call), so network activity for this node wakes it to
    /// look again. Meaningful only while the node is blocked.
    pub wants_net: bool,
    /// Folders whose absence made a path operation fail with ENOENT (for
    /// the hint of a failure; the first `MISSING_DIRS_MAX`).
    pub missing_dirs: Vec<String>,
    /// Host calls this node made that seedfall does not provide (for the
    /// hint of a failure; the first `MISSING_DIRS_MAX`).
    pub unsupported: Vec<String>,
    /// The instance's descriptors as of its last host call, kept only when
    /// a run is asked for a moment (`World::keep_handles`): the table itself
    /// lives in the instance's store, out of the scheduler's reach.
    pub handles: Vec<crate::moment::Handle>,
    /// Spawned guest threads and their futexes (`threads`); empty for a
    /// guest without threads.
    pub threads: threads::NodeThreads,
    skew_id: u64,
}

impl NodeState {
    pub fn new(name: String, workload: bool) -> NodeState {
        NodeState {
            name,
            workload,
            status: Status::Runnable,
            wait_id: 0,
            fuel_charged: 0,
            stderr_tail: VecDeque::new(),
            work_summary: String::new(),
            output: [OutputTally::default(); 2],
            clock: crate::clockmodel::NodeClock::default(),
            paused_until: None,
            generation: 0,
            wants_net: false,
            missing_dirs: Vec::new(),
            unsupported: Vec::new(),
            handles: Vec::new(),
            threads: threads::NodeThreads::default(),
            skew_id: 0,
        }
    }

    /// Running or able to run (not exited, failed or crashed).
    pub fn alive(&self) -> bool {
        matches!(self.status, Status::Runnable | Status::Blocked)
    }

    /// Some thread of it can run now: the main thread (a guest without
    /// threads has only that one) or a spawned one, and it is not paused.
    pub fn schedulable(&self, now: VTime) -> bool {
        let runnable = self.status == Status::Runnable || (self.alive() && self.threads.runnable().next().is_some());
        runnable && self.paused_until.is_none_or(|u| u <= now)
    }

    /// The threads that can run, main (0) first, by tid.
    pub fn runnable_tids(&self, out: &mut Vec<u32>) {
        out.clear();
        if self.status == Status::Runnable {
            out.push(0);
        }
        if self.alive() {
            out.extend(self.threads.runnable());
        }
    }

    /// A thread's status: the main thread's is the node's.
    pub fn thread_status(&self, tid: u32) -> Option<Status> {
        match tid {
            0 => Some(self.status),
            t => self.threads.threads.get(&t).map(|t| t.status),
        }
    }
}

/// What the run knows about faults beyond the time-based plan.
#[derive(Default)]
pub struct FaultState {
    pub families: crate::faults::Families,
    pub plan: Vec<crate::faults::Planned>,
    pub eio_probability: f64,
    pub eio_targets: Vec<bool>,
    /// Rates mode: a crash waiting for the node's next disk op (restart delay).
    /// Crashes due inside a node's next disk op: restart delay, and kill.
    pub crash_armed: BTreeMap<usize, (Option<u64>, bool)>,
    /// Schedule mode: crashes at (node, disk op number).
    pub crash_at_op: Vec<Fault>,
    /// Schedule mode: (node, fsync number) that fail.
    pub eio_at_sync: Vec<(usize, u64)>,
    pub io_latency_ns: u64,
    pub fsync_latency_ns: u64,
    pub media: storage::MediaFaultState,
    /// Rates mode with branches: the config, to draw the time-based faults
    /// again when a branch re-keys the `faults` stream.
    pub rates: Option<std::sync::Arc<crate::config::Config>>,
    /// Rates mode with `faults.after_setup`, before setup completed: no
    /// fault is planned or drawn yet.
    pub waiting_setup: bool,
}

pub struct World {
    pub seed: u64,
    pub now: VTime,
    /// The run's end (its configured duration): the clock stops there.
    pub end: VTime,
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
    /// The node instance `fault` is about, when it is about one.
    pub fault_node: Option<usize>,
    /// The host memory the run holds, against `limits.run_memory_bytes`.
    pub meter: Arc<crate::memory::Meter>,
    /// A property failure, ending the run after the current step.
    pub property_failure: Option<Failure>,
    pub props: RunProperties,
    /// Faults applied so far, in order: the run's schedule.
    pub faults_applied: Vec<Fault>,
    /// `Some` when replaying a schedule: apply exactly these, draw none.
    pub faults_planned: Option<Vec<Fault>>,
    /// Branches not yet applied, earliest first.
    pub branches_pending: VecDeque<Branch>,
    /// How many branches have been applied (those before `branches_pending`).
    pub branches_applied: usize,
    /// The schedule's branches as it lists them (the outcome's schedule).
    pub branches: Vec<Branch>,
    /// The schedule's seed, which names the run (`seed` is the streams':
    /// the prefix's, when the run has one), and its prefix.
    pub name_seed: u64,
    pub prefix: Option<crate::schedule::Prefix>,
    /// When this run started on the host (`Stats::real_ns`; a snapshot
    /// child starts its own clock when it is forked).
    pub real_start: std::time::Instant,
    pub setup_complete_ns: Option<u64>,
    pub faults: FaultState,
    pub net: crate::net::Net,
    /// Functions reached, per node instance, with when each was first entered.
    pub coverage: Vec<crate::coverage::Reached>,
    /// Edge (index, bucket) pairs reached, per node instance, with when each
    /// was first seen (`coverage::Mode::Edges` only; sized like `coverage`).
    pub edges: Vec<crate::coverage::EdgesReached>,
    /// The test oracle: workload memory that survives every node's crashes.
    pub oracle: BTreeMap<String, Vec<u8>>,
    /// Nodes crashed since the scheduler last looked: their stores must go.
    pub crashed_now: Vec<usize>,
    /// Per (node, site): enabled for this run, and calls so far.
    buggify_sites: BTreeMap<(usize, String), (bool, u64)>,
    unsupported_seen: BTreeSet<String>,
    /// Keep every disk's tree after each crash (`RunOptions::disk_trees`).
    pub keep_disk_trees: bool,
    /// Mirror every instance's descriptors into `NodeState::handles` after
    /// each host call (`RunOptions::handles`, for a moment's report).
    pub keep_handles: bool,
    pub disk_trees: Vec<crate::outcome::DiskTree>,
    /// Per node instance, every tree a crash could have left so far
    /// (`RunOptions::crash_states`); `None` when not asked for.
    pub crash_states: Option<Vec<crate::disk::CrashStates>>,
    /// Advisory file locks of every node.
    pub locks: crate::locks::Locks,
}

/// Bound on distinct buggify sites per run.
pub const BUGGIFY_SITES_MAX: usize = 10_000;

impl World {
    pub fn new(seed: u64, limits: Limits, nodes: Vec<NodeState>, profile: bool) -> World {
        let disks = nodes.iter().map(|_| Disk::default()).collect();
        let names = nodes.iter().map(|n| n.name.clone()).collect();
        World {
            seed,
            now: VTime::ZERO,
            end: VTime(u64::MAX),
            step: 0,
            streams: Streams::new(seed),
            events: EventQueue::default(),
            nodes,
            disks,
            trace: Trace::default(),
            limits: limits.clone(),
            profile,
            host_calls: 0,
            host_ns: 0,
            fault: None,
            fault_node: None,
            meter: Arc::new(crate::memory::Meter::new(limits.run_memory_bytes, &limits.run_memory_source)),
            property_failure: None,
            props: RunProperties::default(),
            faults_applied: Vec::new(),
            faults_planned: None,
            branches_pending: VecDeque::new(),
            branches_applied: 0,
            name_seed: seed,
            prefix: None,
            branches: Vec::new(),
            real_start: std::time::Instant::now(),
            setup_complete_ns: None,
            faults: FaultState::default(),
            oracle: BTreeMap::new(),
            net: crate::net::Net::new(crate::config::NetConfig::default(), names),
            coverage: Vec::new(),
            edges: Vec::new(),
            crashed_now: Vec::new(),
            buggify_sites: BTreeMap::new(),
            unsupported_seen: BTreeSet::new(),
            keep_disk_trees: false,
            keep_handles: false,
            disk_trees: Vec::new(),
            crash_states: None,
            locks: crate::locks::Locks::default(),
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
        let message = e.message.clone();
        let details = (!e.details.is_empty() && e.details != "{}" && e.details != "null").then(|| e.details.clone());
        self.record(Some(node_idx), EventKind::Failure { message: format!("{} property {what}: {}", e.kind.name(), e.message) });
        self.nodes[node_idx].status = Status::Failed;
        self.property_failure = Some(Failure {
            kind: FailureKind::Property,
            node: self.nodes[node_idx].name.clone(),
            message,
            location: e.location,
            details,
            hint: None,
            time_ns: self.now.nanos(),
            step: self.step,
        });
        true
    }

    /// One guided value (numeric guidance), now: the run's watermark of
    /// `name` in that direction moves when `value` beats it.
    pub fn guide(&mut self, name: &str, maximize: bool, value: f64) {
        // Whichever way it came (the `guide` call, an Antithesis SDK line of
        // up to a whole output line), a name past the bound is ignored.
        if name.len() > crate::props::GUIDE_NAME_BYTES_MAX {
            return;
        }
        let (now, step) = (self.now.nanos(), self.step);
        self.props.watermarks.record(name, maximize, value, now, step);
    }

    pub fn setup_complete(&mut self, node_idx: usize, _details: String) {
        if self.faults.waiting_setup {
            // `faults.after_setup`: the faults start now.
            self.faults.waiting_setup = false;
            self.replan_faults();
        }
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

    /// One JSON line the Antithesis SDK wrote to its local output file
    /// (parsed by [`crate::antithesis`]).
    pub fn antithesis_line(&mut self, node_idx: usize, line: &str) {
        match crate::antithesis::parse(line) {
            Some(crate::antithesis::Line::Setup) => self.setup_complete(node_idx, String::new()),
            Some(crate::antithesis::Line::Guide { name, maximize, gap }) => self.guide(&name, maximize, gap),
            Some(crate::antithesis::Line::Assert(e)) => {
                self.evaluate(node_idx, e);
            }
            None => {}
        }
    }

    /// Charges the compute a node did since its last charge as virtual time:
    /// the cluster shares one simulated CPU, so a node that spins on the
    /// clock sees time pass and others' timers come due.
    pub fn charge_compute(&mut self, node_idx: usize, tid: u32, fuel_left: u64) {
        let consumed = self.limits.watchdog_instructions.saturating_sub(fuel_left);
        let Some(charged) = self.fuel_charged_mut(node_idx, tid) else { return };
        let fresh = consumed.saturating_sub(*charged);
        *charged = (*charged).max(consumed);
        self.advance(fresh.saturating_mul(self.limits.ns_per_instruction));
    }

    /// A threaded guest's thread `tid` gets its next quantum from the
    /// `sched` stream (`threads::THREAD_QUANTUM_MAX`).
    pub fn draw_quantum(&mut self, node_idx: usize, tid: u32) -> u64 {
        // Log-uniform: as likely under 16 instructions as between 4096 and
        // 8192, so a switch lands inside a short critical section often
        // enough to find a race there.
        let k = self.streams.below(Stream::Sched, threads::THREAD_QUANTUM_MAX.ilog2() as u64);
        let q = (1u64 << k) + self.streams.below(Stream::Sched, 1u64 << k);
        self.nodes[node_idx].threads.quanta.insert(tid, q);
        q
    }

    /// The fuel already charged as time for one thread: each thread's store
    /// has its own fuel, so each keeps its own count. None for a spawned
    /// thread that is gone: a crash inside its own host call (a disk
    /// operation, `faults.crash.during_disk_op`) ended every thread of the
    /// node, and its work no longer moves the clock.
    fn fuel_charged_mut(&mut self, node_idx: usize, tid: u32) -> Option<&mut u64> {
        let node = &mut self.nodes[node_idx];
        match tid {
            0 => Some(&mut node.fuel_charged),
            t => node.threads.threads.get_mut(&t).map(|t| &mut t.fuel_charged),
        }
    }

    /// Moves the clock forward by `ns` of a node's work (compute, a disk
    /// operation), never past the run's end: a node that computes or writes
    /// without blocking cannot take the run's clock beyond its duration.
    pub fn advance(&mut self, ns: u64) {
        self.now = self.now.saturating_add(ns).min(self.end.max(self.now));
    }

    /// Records functions node instance `idx` entered for the first time, at
    /// the current time and step.
    pub fn note_functions(&mut self, idx: usize, layout: crate::coverage::Layout, indices: &[u32]) {
        if indices.is_empty() {
            return;
        }
        let (now, step) = (self.now.nanos(), self.step);
        self.coverage[idx].note(layout, indices, now, step);
    }

    /// Records the (index, bucket) pairs of node instance `idx`'s edge map
    /// not seen before by that instance, at the current time and step.
    pub fn note_edges(&mut self, idx: usize, map: &[u8]) {
        let (now, step) = (self.now.nanos(), self.step);
        if let Some(reached) = self.edges.get_mut(idx) {
            reached.note(map, now, step);
        }
    }

    /// A fuel-yield ended the step without a host call: charge the quantum.
    pub fn charge_quantum(&mut self, node_idx: usize, tid: u32, fuel: u64) {
        let Some(charged) = self.fuel_charged_mut(node_idx, tid) else { return };
        *charged += fuel;
        self.advance(fuel.saturating_mul(self.limits.ns_per_instruction));
    }

    pub fn record(&mut self, node_idx: Option<usize>, kind: EventKind) {
        let name = node_idx.map(|i| self.nodes[i].name.as_str());
        self.trace.record(self.step, self.now, name, kind);
    }

    /// A line a node printed. Each node instance's stream keeps at most
    /// `limits.output_bytes` in the trace; past that lines are hashed and
    /// counted, and the trace ends with a note (`note_output_caps`).
    pub fn output(&mut self, node_idx: usize, stream: Stdio, line: String) {
        let node = &mut self.nodes[node_idx];
        if stream == Stdio::Stderr {
            let tail = &mut node.stderr_tail;
            if tail.len() == STDERR_TAIL_LINES_MAX {
                tail.pop_front();
            }
            tail.push_back(line.clone());
        }
        let out = &mut node.output[stream as usize];
        let keep = out.kept + line.len() as u64 <= self.limits.output_bytes;
        if keep {
            out.kept += line.len() as u64;
        } else {
            out.dropped_bytes += line.len() as u64;
            out.dropped_lines += 1;
        }
        self.trace.output(self.step, self.now, &node.name, stream, line, keep);
    }

    /// At the end of a run: a note for every stream that passed its cap.
    pub fn note_output_caps(&mut self) {
        for i in 0..self.nodes.len() {
            for stream in [Stdio::Stdout, Stdio::Stderr] {
                let o = self.nodes[i].output[stream as usize];
                if o.dropped_lines > 0 {
                    let kind = EventKind::OutputCapped { stream, cap_bytes: self.limits.output_bytes, dropped_bytes: o.dropped_bytes, dropped_lines: o.dropped_lines };
                    self.trace.note(self.step, self.now, Some(&self.nodes[i].name), kind);
                }
            }
        }
    }

    /// Logs the first use of a host call this simulator does not implement.
    pub fn unsupported(&mut self, node_idx: usize, call: &str) {
        let mine = &mut self.nodes[node_idx].unsupported;
        if mine.len() < MISSING_DIRS_MAX && !mine.iter().any(|c| c == call) {
            mine.push(call.to_string());
        }
        if self.unsupported_seen.insert(call.to_string()) {
            self.record(Some(node_idx), EventKind::Unsupported { call: call.to_string() });
        }
    }

    /// Blocks a node until `deadline` (or forever, until something wakes it);
    /// with `wants_net`, activity on its sockets wakes it too. Returns the
    /// wait's id.
    /// Thread `tid` of a node (0: main) waits until woken by `wait_id`, at
    /// `deadline` or by an event (network activity, with `wants_net`).
    pub fn block(&mut self, node_idx: usize, tid: u32, deadline: Option<VTime>, wants_net: bool) -> u64 {
        let node = &mut self.nodes[node_idx];
        let next = node.threads.next_wait_id(tid, node.wait_id + 1);
        let (status, wait, net, fuel) = match tid {
            0 => (&mut node.status, &mut node.wait_id, &mut node.wants_net, &mut node.fuel_charged),
            t => {
                node.threads.wait_seq = next;
                let t = node.threads.threads.get_mut(&t).expect("a running thread is alive");
                (&mut t.status, &mut t.wait_id, &mut t.wants_net, &mut t.fuel_charged)
            }
        };
        assert_eq!(*status, Status::Runnable, "only a running thread can block");
        *wait = next;
        *status = Status::Blocked;
        *net = wants_net;
        *fuel = 0;
        let wait_id = *wait;
        if let Some(at) = deadline {
            let at = at.max(self.now);
            if self.events.push(at, Event::Wake { node_idx, tid, wait_id }).is_err() {
                self.fault.get_or_insert_with(|| "the event queue is full (a timer storm?)".to_string());
            }
        }
        wait_id
    }

    pub fn wake(&mut self, node_idx: usize, tid: u32, wait_id: u64) {
        let node = &mut self.nodes[node_idx];
        let (status, wait) = match tid {
            0 => (&mut node.status, node.wait_id),
            t => match node.threads.threads.get_mut(&t) {
                Some(t) => (&mut t.status, t.wait_id),
                None => return,
            },
        };
        if *status == Status::Blocked && wait == wait_id {
            *status = Status::Runnable;
        }
    }

    /// Whether thread `tid` still waits in `wait_id`: until it is runnable
    /// again or in another wait. (A thread that is gone, or a node that is
    /// down, stays waiting: its future is dropped, never resumed.)
    pub fn waiting(&self, node_idx: usize, tid: u32, wait_id: u64) -> bool {
        let node = &self.nodes[node_idx];
        match tid {
            0 => !(node.status == Status::Runnable || node.wait_id != wait_id),
            t => node.threads.threads.get(&t).is_none_or(|t| !(t.status == Status::Runnable || t.wait_id != wait_id)),
        }
    }

    /// Carries out what a network operation caused: future events, wake-ups
    /// of nodes waiting on sockets, trace lines.
    pub fn net_effects(&mut self, fx: crate::net::Effects) {
        for (at, ev) in fx.events {
            self.push_event(at, Event::Net(ev));
        }
        for idx in fx.wake {
            let n = &mut self.nodes[idx];
            if n.wants_net && n.status == Status::Blocked {
                let wait_id = n.wait_id;
                self.wake(idx, 0, wait_id);
            }
            // Every thread of the node that waits on a socket looks again.
            let n = &mut self.nodes[idx];
            for t in n.threads.threads.values_mut() {
                if t.wants_net && t.status == Status::Blocked {
                    t.status = Status::Runnable;
                }
            }
        }
        for (idx, text) in fx.notes {
            self.record(Some(idx), EventKind::Net { text });
        }
    }

    pub fn net_event(&mut self, ev: crate::net::NetEvent) {
        let mut fx = crate::net::Effects::default();
        let nodes = &self.nodes;
        let host_up = |i: usize| nodes[i].status != Status::Crashed;
        self.net.on_event(ev, self.now, &mut self.streams, &host_up, &mut fx);
        if let crate::net::NetEvent::Heal { .. } = ev {
            self.record(None, EventKind::Net { text: "partition healed".into() });
        }
        self.net_effects(fx);
    }

    /// A node instance ended: its sockets close (exit) or reset (crash).
    pub fn net_node_down(&mut self, node_idx: usize, reset: bool) {
        let mut fx = crate::net::Effects::default();
        self.net.node_down(node_idx, reset, self.now, &mut self.streams, &mut fx);
        self.net_effects(fx);
    }
}

#[cfg(test)]
mod guidance_tests {
    use super::*;

    /// The Antithesis SDK's numeric guidance lines (antithesis-sdk-go
    /// `assert.AlwaysLessThan` and the others, written to
    /// ANTITHESIS_SDK_LOCAL_OUTPUT each time `left - right` improves) move
    /// the run's watermarks; boolean guidance, catalog lines and bad
    /// operands do not.
    #[test]
    fn antithesis_numeric_guidance_lines_become_watermarks() {
        let mut w = World::new(1, Limits::default(), vec![NodeState::new("app".into(), true)], false);
        let line = |left: &str, right: &str, maximize: bool, hit: bool| {
            format!(
                r#"{{"antithesis_guidance":{{"guidance_data":{{"left":{left},"right":{right}}},"location":{{"class":"main","function":"main","file":"/src/main.go","begin_line":24,"begin_column":0}},"guidance_type":"numeric","message":"x below 10","id":"x below 10|main.go|24","maximize":{maximize},"hit":{hit}}}}}"#
            )
        };
        w.now = VTime(100);
        w.step = 3;
        w.antithesis_line(0, &line("4", "10", true, true));
        w.now = VTime(200);
        w.step = 5;
        w.antithesis_line(0, &line("8", "10", true, true));
        w.antithesis_line(0, &line("6", "10", true, true));
        w.antithesis_line(0, &line("9", "10", true, false)); // a catalog entry, not a hit
        w.antithesis_line(0, &line("\"NaN\"", "10", true, true));
        w.antithesis_line(0, &line("2.5", "0.5", false, true));
        w.antithesis_line(0, r#"{"antithesis_guidance":{"guidance_data":{"a":true},"guidance_type":"boolean","message":"b","id":"b","maximize":true,"hit":true}}"#);
        // A name past 4096 bytes is ignored, as through the `guide` call.
        let long = "n".repeat(crate::props::GUIDE_NAME_BYTES_MAX + 1);
        w.antithesis_line(
            0,
            &line("4", "10", true, true).replace(
                "\"message\":\"x below 10\"",
                &format!("\"message\":\"{long}\""),
            ),
        );
        let got = std::mem::take(&mut w.props.watermarks).into_vec();
        let want = vec![
            crate::props::Watermark { name: "x below 10".into(), maximize: false, value: 2.0, at_ns: 200, step: 5 },
            crate::props::Watermark { name: "x below 10".into(), maximize: true, value: -2.0, at_ns: 200, step: 5 },
        ];
        assert_eq!(got, want);
        assert!(w.props.by_message.is_empty(), "guidance is not a property evaluation");
    }
}
