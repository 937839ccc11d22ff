//! The trace of a run: what every node did, in order, with a hash.
//!
//! The hash covers every scheduler step (which node ran, at what virtual
//! time) and every recorded event, so two runs with equal hashes made the same
//! decisions. Events are kept up to `EVENTS_MAX`; past that they are still
//! hashed, and counted as dropped, so a chatty guest cannot exhaust memory.
use crate::vtime::VTime;
use serde::{Deserialize, Serialize};

pub const EVENTS_MAX: usize = 200_000;
/// Room past `EVENTS_MAX` for notes (one per node instance and stream).
pub const NOTES_MAX: usize = 4096;

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct TraceEvent {
    pub step: u64,
    pub time_ns: u64,
    /// The node instance, `None` for events of the world itself.
    pub node: Option<String>,
    #[serde(flatten)]
    pub kind: EventKind,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum EventKind {
    Start,
    Output { stream: Stdio, text: String },
    Exit { code: i32 },
    Trap { message: String },
    /// The first use of a host call this run does not implement.
    Unsupported { call: String },
    Failure { message: String },
    End { reason: String },
    /// A property's first hit, and each first true / first false after it.
    Property { kind: crate::props::PropertyKind, message: String, cond: bool, location: Option<String> },
    SetupComplete,
    Fault { fault: crate::schedule::Fault },
    Branch { streams: Vec<String> },
    /// The node lost power: dirty sectors lost, and kept by torn writes, and
    /// what vanished (or came back), path by path (at most
    /// `disk::LOSSES_MAX`; `lost_more` counts the rest).
    Crash {
        sectors_lost: u64,
        sectors_torn_kept: u64,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        lost: Vec<crate::disk::Loss>,
        #[serde(default, skip_serializing_if = "is_zero")]
        lost_more: u64,
        /// A process kill: the machine, and every write, stayed.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        kill: bool,
    },
    Restart,
    /// A node instance's output on `stream` passed `limits.output_mb`: the
    /// rest was hashed but not kept. Written once, at the end of the trace,
    /// and not hashed (the cap does not change what a run did).
    OutputCapped { stream: Stdio, cap_bytes: u64, dropped_bytes: u64, dropped_lines: u64 },
    /// An fsync of a file or a folder (`dir`), and whether it succeeded.
    Fsync { ok: bool, path: String, dir: bool },
    /// A change of names or sizes on the node's disk.
    Disk {
        op: DiskOp,
        path: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        to: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        size: Option<u64>,
    },
    /// An `op` (write, truncate, create, mkdir) on `path` the disk had no room
    /// for: ENOSPC, or for a write `done` of the `asked` bytes (a short
    /// write). `free` is the room left; `full`: a `disk_full` fault holds it at 0.
    NoSpace {
        op: String,
        path: String,
        /// A write's number (what a `write_error` fault names), else 0.
        #[serde(default, skip_serializing_if = "is_zero")]
        write: u64,
        #[serde(default, skip_serializing_if = "is_zero")]
        asked: u64,
        #[serde(default, skip_serializing_if = "is_zero")]
        done: u64,
        free: u64,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        full: bool,
    },
    /// Fault families switched on for this run (swarm mode).
    Families { families: Vec<String> },
    /// A connection-level event on the simulated network (refused, reset,
    /// timed out) or a partition healing.
    Net { text: String },
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum DiskOp {
    Create,
    Mkdir,
    Rename,
    Unlink,
    Rmdir,
    Truncate,
}

impl DiskOp {
    pub fn name(self) -> &'static str {
        match self {
            DiskOp::Create => "create",
            DiskOp::Mkdir => "mkdir",
            DiskOp::Rename => "rename",
            DiskOp::Unlink => "unlink",
            DiskOp::Rmdir => "rmdir",
            DiskOp::Truncate => "truncate",
        }
    }
}

#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Stdio {
    Stdout,
    Stderr,
}

#[derive(Debug, Default)]
pub struct Trace {
    pub events: Vec<TraceEvent>,
    pub events_dropped: u64,
    hash: crate::hash::Fnv1a,
}

impl Trace {
    pub fn step(&mut self, node_idx: usize, time: VTime) {
        self.hash.write(b"S");
        self.hash.write_u64(node_idx as u64);
        self.hash.write_u64(time.nanos());
    }

    pub fn record(&mut self, step: u64, time: VTime, node: Option<&str>, kind: EventKind) {
        self.hash.write(b"E");
        self.hash.write_u64(step);
        self.hash.write_u64(time.nanos());
        self.hash.write(node.unwrap_or("").as_bytes());
        // The serialised event is a canonical encoding: field order is fixed.
        let encoded = serde_json::to_vec(&kind).expect("trace events serialise");
        self.hash.write(&encoded);
        if self.events.len() < EVENTS_MAX {
            self.events.push(TraceEvent { step, time_ns: time.nanos(), node: node.map(str::to_string), kind });
        } else {
            self.events_dropped += 1;
        }
    }

    /// A line of output, kept or not (see [`EventKind::OutputCapped`]). It is
    /// hashed the same either way, and without serialising it: a guest may
    /// print gigabytes.
    pub fn output(&mut self, step: u64, time: VTime, node: &str, stream: Stdio, text: String, keep: bool) {
        self.hash.write(b"O");
        self.hash.write_u64(step);
        self.hash.write_u64(time.nanos());
        self.hash.write(node.as_bytes());
        self.hash.write(&[stream as u8]);
        self.hash.write_u64(text.len() as u64);
        self.hash.write(text.as_bytes());
        if keep && self.events.len() < EVENTS_MAX {
            self.events.push(TraceEvent { step, time_ns: time.nanos(), node: Some(node.to_string()), kind: EventKind::Output { stream, text } });
        } else if keep {
            self.events_dropped += 1;
        }
    }

    /// An event that is kept but not hashed: a note about the trace itself.
    pub fn note(&mut self, step: u64, time: VTime, node: Option<&str>, kind: EventKind) {
        if self.events.len() < EVENTS_MAX + NOTES_MAX {
            self.events.push(TraceEvent { step, time_ns: time.nanos(), node: node.map(str::to_string), kind });
        }
    }

    pub fn hash(&self) -> u64 {
        self.hash.value()
    }
}

