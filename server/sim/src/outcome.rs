//! What a run returns: the verdict, the failure if any, the trace and stats.
use crate::failure::Failure;
use crate::trace::TraceEvent;
use crate::vtime::VTime;
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Pass,
    Fail,
}

/// Why the run stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EndReason {
    /// The configured virtual duration passed.
    Duration,
    /// Every workload node exited 0.
    WorkloadDone,
    /// Nothing could ever happen again (all nodes blocked with no timers).
    Idle,
    Failure,
}

/// Costs of a run on this machine. Wall-clock figures are observations of
/// the host, never inputs to the simulation.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Stats {
    pub steps: u64,
    pub virtual_ns: u64,
    pub real_ns: u64,
    pub instantiate_ns: u64,
    /// Real time inside host calls (only measured with `RunOptions::profile`).
    pub host_ns: u64,
    pub host_calls: u64,
    pub fuel: u64,
}

/// Serialized whole (but for `disk_trees`) when a snapshot child reports
/// back to the process that asked for it (`seedfall-search` snapshots).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Outcome {
    pub seed: u64,
    /// The schedule as applied: the seed, every fault that happened, the
    /// branches. Running it again reproduces this outcome exactly.
    pub schedule: crate::schedule::Schedule,
    /// Every property this run evaluated, by message.
    pub properties: std::collections::BTreeMap<String, crate::props::PropertyRun>,
    /// Numeric guidance: per guided value (name and direction), the run's
    /// best value and when it was first reached, over every node instance;
    /// sorted by (name, maximize). Explore climbs these toward their bounds.
    pub watermarks: Vec<crate::props::Watermark>,
    /// Guidance for new names past `props::WATERMARKS_MAX`, ignored.
    pub watermarks_dropped: u64,
    pub setup_complete_ns: Option<u64>,
    /// Functions reached, per config node, with when each was first entered
    /// (sorted by function index; empty unless instrumented).
    pub coverage: std::collections::BTreeMap<String, Vec<crate::coverage::FirstEntry>>,
    /// Edge (index, bucket) pairs reached, per config node (merged over its
    /// replicas), each with the earliest time and step any instance reached
    /// it; sorted by (index, bucket). Empty unless instrumented with
    /// `coverage::Mode::Edges`.
    pub edges: std::collections::BTreeMap<String, Vec<crate::coverage::EdgeEntry>>,
    /// Draws from each random stream, in `streams::Stream` order.
    pub stream_draws: [u64; crate::streams::Stream::ALL.len()],
    pub verdict: Verdict,
    pub end: EndReason,
    pub failure: Option<Failure>,
    pub end_time: VTime,
    pub trace: Vec<TraceEvent>,
    pub trace_events_dropped: u64,
    pub trace_hash: u64,
    pub stats: Stats,
    /// The file-system model of each node instance's disk, in instance order.
    pub disk_models: Vec<crate::disk::FsModel>,
    /// With `RunOptions::disk_trees`: each instance's disk after every crash
    /// and at the end (not part of the trace, so not of its hash).
    #[serde(skip)]
    pub disk_trees: Vec<DiskTree>,
    /// With `RunOptions::crash_states`: per instance, every tree a crash
    /// could have left it, in instance order (not part of the trace).
    #[serde(skip)]
    pub crash_states: Vec<crate::disk::CrashStates>,
    /// For a failure: whether it holds under the other file-system model
    /// (set by `seedfall-search`, which re-runs it).
    pub model_check: Option<ModelCheck>,
}

/// A failure re-checked under the other file-system model.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct ModelCheck {
    /// `ext4`, `posix`, ..., or `ext4+posix` when the disks differ.
    pub found_under: String,
    /// Each model the failure was run under (every disk under it), in
    /// `FsModel::ALL` order; empty when no crash happened.
    #[serde(default)]
    pub models: Vec<ModelVerdict>,
    /// "holds on ext4, xfs and btrfs", "holds on ext4; not on xfs or btrfs", ...
    pub label: String,
}

/// Whether a failure's schedule fails with every disk under one model.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelVerdict {
    pub model: String,
    pub fails: bool,
    /// It fails there, but with another finding: `node: message`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub differently: Option<String>,
}

/// What one node instance's disk held at a moment.
#[derive(Clone, Debug, Serialize)]
pub struct DiskTree {
    pub node: String,
    pub time_ns: u64,
    /// `crash` (what survived it) or `end`.
    pub after: &'static str,
    pub entries: Vec<crate::disk::TreeEntry>,
}
