//! Signals: what a run reached, in the terms exploration rewards.
//!
//! - `property "msg" = true|false`, with `during crash,pause` when fault
//!   windows of those kinds were open when it first had that outcome;
//! - `fault <kind> <node>` for each fault applied (`buggify` with its site);
//! - `crash <node> <what it lost>` for each kind of loss a crash made on a
//!   path (a created file gone, a rename or unlink undone, a size reverted,
//!   unsynced data lost or torn), with digits in the path as `#`, so
//!   `msgs/12.blk` and `msgs/13.blk` are one signal: a crash that undid
//!   something new is a new state to build on;
//! - `net <node>: <what happened>` for each kind of connection event on the
//!   simulated network (a connect refused or timed out, a connection reset,
//!   a connection made), with the peer as its config node and an ephemeral
//!   port as `*`: a client that met a reset, or reached a server it never
//!   reached before, is in a new state;
//! - a function entered for the first time, per config node;
//! - a watermark: the best value so far of a guided number (a numeric
//!   property's `left - right`, or `sim.Maximize`/`Minimize`), new each time
//!   a run beats the best value any run reached.
//!
//! Every signal carries the virtual time it first happened in the run
//! (functions to the nearest host call), which is where exploration
//! branches.
use seedfall_sim::{Fault, Outcome};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(tag = "signal", rename_all = "snake_case")]
pub enum Signal {
    Property { message: String, cond: bool, during: Vec<String> },
    Fault { kind: String, node: String, site: Option<String> },
    Function { node: String, index: u32 },
    Watermark { name: String, maximize: bool },
    /// What a crash of `node` undid on its disk (`loss_event`).
    Disk { node: String, event: String },
    /// A basic-block edge with a hit-count bucket (`-coverage edges`).
    Edge { node: String, index: u32, bucket: u8 },
    /// A connection event of `node` on the simulated network (`net_event`).
    Net { node: String, event: String },
}

impl Signal {
    pub fn is_function(&self) -> bool {
        matches!(self, Signal::Function { .. })
    }

    /// Functions and edges: coverage, counted apart from other signals.
    pub fn is_coverage(&self) -> bool {
        matches!(self, Signal::Function { .. } | Signal::Edge { .. })
    }

    pub fn describe(&self) -> String {
        match self {
            Signal::Property { message, cond, during } if during.is_empty() => format!("property \"{message}\" = {cond}"),
            Signal::Property { message, cond, during } => format!("property \"{message}\" = {cond} during {}", during.join(",")),
            Signal::Fault { kind, node, site: Some(site) } => format!("fault {kind} {node} \"{site}\""),
            Signal::Fault { kind, node, site: None } => format!("fault {kind} {node}"),
            Signal::Function { node, index } => format!("function {node}#{index}"),
            Signal::Watermark { name, maximize: true } => format!("maximum of \"{name}\""),
            Signal::Watermark { name, maximize: false } => format!("minimum of \"{name}\""),
            Signal::Disk { node, event } => format!("crash {node}: {event}"),
            Signal::Edge { node, index, bucket } => format!("edge {node}#{index} bucket {bucket}"),
            Signal::Net { node, event } => format!("net {node}: {event}"),
        }
    }
}

/// A signal, the virtual time it happened, and for a watermark the value.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Reached {
    pub signal: Signal,
    pub at_ns: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<f64>,
}

impl Reached {
    /// For display: the signal, with a watermark's value.
    pub fn describe(&self) -> String {
        match self.value {
            Some(v) => format!("{} = {v}", self.signal.describe()),
            None => self.signal.describe(),
        }
    }
}

/// Fault kinds whose window is open at `t`: a crashed node not yet
/// restarted, a pause, a clock skew, a partition, a full disk.
fn open_windows(faults: &[Fault], t: u64) -> Vec<String> {
    let mut kinds = BTreeSet::new();
    for f in faults {
        let window = match f {
            Fault::Crash { at_ns, restart_after_ns, .. } => Some((*at_ns, restart_after_ns.map_or(u64::MAX, |d| at_ns + d))),
            Fault::Pause { at_ns, duration_ns, .. } | Fault::ClockSkew { at_ns, duration_ns, .. } | Fault::Partition { at_ns, duration_ns, .. } | Fault::DiskFull { at_ns, duration_ns, .. } => {
                Some((*at_ns, at_ns + duration_ns))
            }
            _ => None,
        };
        if let Some((a, b)) = window {
            if a <= t && t < b {
                kinds.insert(f.kind().to_string());
            }
        }
    }
    kinds.into_iter().collect()
}

/// Everything a run reached, one entry per signal (its first time), sorted
/// by signal.
pub fn of(outcome: &Outcome) -> Vec<Reached> {
    let faults = outcome.schedule.faults.as_deref().unwrap_or(&[]);
    let mut out = Vec::new();
    for (message, p) in &outcome.properties {
        if let Some(t) = p.first_true_ns {
            out.push(Reached { signal: Signal::Property { message: message.clone(), cond: true, during: open_windows(faults, t) }, at_ns: Some(t), value: None });
        }
        if p.hits > p.trues {
            let t = p.first_false_ns.unwrap_or(p.first_hit_ns);
            out.push(Reached { signal: Signal::Property { message: message.clone(), cond: false, during: open_windows(faults, t) }, at_ns: Some(t), value: None });
        }
    }
    for f in faults {
        let site = match f {
            Fault::Buggify { site, .. } => Some(site.clone()),
            _ => None,
        };
        out.push(Reached { signal: Signal::Fault { kind: f.kind().to_string(), node: f.node().to_string(), site }, at_ns: Some(f.at_ns()), value: None });
    }
    for e in &outcome.trace {
        match (&e.node, &e.kind) {
            (Some(node), seedfall_sim::trace::EventKind::Crash { lost, .. }) => {
                for loss in lost {
                    out.push(Reached { signal: Signal::Disk { node: config_node(node), event: loss_event(loss) }, at_ns: Some(e.time_ns), value: None });
                }
            }
            (Some(node), seedfall_sim::trace::EventKind::Net { text }) => {
                out.push(Reached { signal: Signal::Net { node: config_node(node), event: net_event(text) }, at_ns: Some(e.time_ns), value: None });
            }
            _ => {}
        }
    }
    for (node, entries) in &outcome.coverage {
        for e in entries {
            out.push(Reached { signal: Signal::Function { node: node.clone(), index: e.index }, at_ns: Some(e.at_ns), value: None });
        }
    }
    for (node, entries) in &outcome.edges {
        for e in entries {
            out.push(Reached { signal: Signal::Edge { node: node.clone(), index: e.index, bucket: e.bucket }, at_ns: Some(e.at_ns), value: None });
        }
    }
    for w in &outcome.watermarks {
        out.push(Reached { signal: Signal::Watermark { name: w.name.clone(), maximize: w.maximize }, at_ns: Some(w.at_ns), value: Some(w.value) });
    }
    // The earliest time of each signal (a fault kind can apply twice).
    out.sort_by(|a, b| a.signal.cmp(&b.signal).then(a.at_ns.cmp(&b.at_ns)));
    out.dedup_by(|later, first| later.signal == first.signal);
    out
}

/// A node instance's config node (`server#2` is `server`): the same loss
/// on two replicas of one config node is one signal, as functions are.
fn config_node(instance: &str) -> String {
    instance.split('#').next().unwrap_or(instance).to_string()
}

/// A network note (`connection with server#2:4222 reset`) as a signal's
/// event: each `host:port` with the host's node instance as its config node
/// and an ephemeral port (the far side of an accepted connection) as `*`,
/// so the same event between the same kinds of node is one signal.
pub fn net_event(text: &str) -> String {
    let words: Vec<String> = text
        .split(' ')
        .map(|w| match w.rsplit_once(':') {
            Some((host, port)) if !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit()) => {
                let port = match port.parse::<u32>() {
                    Ok(p) if p >= u32::from(seedfall_sim::net::EPHEMERAL_FIRST) => "*".to_string(),
                    _ => port.to_string(),
                };
                format!("{}:{port}", config_node(host))
            }
            _ => w.to_string(),
        })
        .collect();
    words.join(" ")
}

/// A path with each number as `#`: a run of hex digits holding at least
/// one decimal digit (`12`, `00000000000000fd`), so a log's segments, a
/// store's blocks and a stream's numbered files are one place each.
fn path_class(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    let mut run = String::new();
    let flush = |run: &mut String, out: &mut String| {
        if run.chars().any(|c| c.is_ascii_digit()) {
            out.push('#');
        } else {
            out.push_str(run);
        }
        run.clear();
    };
    for c in path.chars() {
        if c.is_ascii_hexdigit() {
            run.push(c);
        } else {
            flush(&mut run, &mut out);
            out.push(c);
        }
    }
    flush(&mut run, &mut out);
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn numbered_files_are_one_place() {
        assert_eq!(super::path_class("/data/member/wal/0000000000000000-00000000000000fd.wal"), "/data/member/wal/#-#.wal");
        assert_eq!(super::path_class("/data/js/jetstream/$G/streams/ORDERS/msgs/12.blk"), "/data/js/jetstream/$G/streams/ORDERS/msgs/#.blk");
        assert_eq!(super::path_class("/data/feed/meta.inf"), "/data/feed/meta.inf", "letters that read as hex, without a digit, stay");
    }

    #[test]
    fn network_events_name_kinds_of_node_and_listening_ports() {
        assert_eq!(super::net_event("connection with server#2:4222 reset"), "connection with server:4222 reset");
        assert_eq!(super::net_event("connection with client#3:49160 reset"), "connection with client:* reset");
        assert_eq!(super::net_event("connect to backup:8080 refused"), "connect to backup:8080 refused");
        assert_eq!(super::net_event("connect to 10.0.0.9:80 timed out"), "connect to 10.0.0.9:80 timed out");
        assert_eq!(super::net_event("partition healed"), "partition healed");
    }
}

/// What one loss of a crash says as a signal.
fn loss_event(loss: &seedfall_sim::disk::Loss) -> String {
    use seedfall_sim::disk::Loss;
    match loss {
        Loss::NameLost { path, dir } => format!("lost the {} {} (created, never made durable)", if *dir { "folder" } else { "file" }, path_class(path)),
        Loss::RenameUndone { to, .. } => format!("undid the rename to {}", path_class(to)),
        Loss::UnlinkUndone { path } => format!("undid the unlink of {}", path_class(path)),
        Loss::Sectors { path, torn_kept, .. } if *torn_kept > 0 => format!("tore unsynced writes of {}", path_class(path)),
        Loss::Sectors { path, .. } => format!("lost unsynced writes of {}", path_class(path)),
        Loss::SizeReverted { path, .. } => format!("reverted the size of {}", path_class(path)),
    }
}

/// Whether watermark value `v` beats `best` in the signal's direction.
pub fn beats(signal: &Signal, v: f64, best: f64) -> bool {
    match signal {
        Signal::Watermark { maximize: true, .. } => v > best,
        Signal::Watermark { maximize: false, .. } => v < best,
        _ => false,
    }
}
