//! Signals: what a run reached, in the terms exploration rewards.
//!
//! - `property "msg" = true|false`, with `during crash,pause` when fault
//!   windows of those kinds were open when it first had that outcome;
//! - `fault <kind> <node>` for each fault applied (`buggify` with its site);
//! - a function reached for the first time, per config node.
//!
//! Properties and faults carry the virtual time they happened, which is
//! where exploration branches.
use seedfall_sim::{Fault, Outcome};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(tag = "signal", rename_all = "snake_case")]
pub enum Signal {
    Property { message: String, cond: bool, during: Vec<String> },
    Fault { kind: String, node: String, site: Option<String> },
    Function { node: String, index: u32 },
}

impl Signal {
    pub fn is_function(&self) -> bool {
        matches!(self, Signal::Function { .. })
    }

    pub fn describe(&self) -> String {
        match self {
            Signal::Property { message, cond, during } if during.is_empty() => format!("property \"{message}\" = {cond}"),
            Signal::Property { message, cond, during } => format!("property \"{message}\" = {cond} during {}", during.join(",")),
            Signal::Fault { kind, node, site: Some(site) } => format!("fault {kind} {node} \"{site}\""),
            Signal::Fault { kind, node, site: None } => format!("fault {kind} {node}"),
            Signal::Function { node, index } => format!("function {node}#{index}"),
        }
    }
}

/// A signal and, when it has one, the virtual time it happened.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Reached {
    pub signal: Signal,
    pub at_ns: Option<u64>,
}

/// Fault kinds whose window is open at `t`: a crashed node not yet
/// restarted, a pause, a clock skew, a partition.
fn open_windows(faults: &[Fault], t: u64) -> Vec<String> {
    let mut kinds = BTreeSet::new();
    for f in faults {
        let window = match f {
            Fault::Crash { at_ns, restart_after_ns, .. } => Some((*at_ns, restart_after_ns.map_or(u64::MAX, |d| at_ns + d))),
            Fault::Pause { at_ns, duration_ns, .. } | Fault::ClockSkew { at_ns, duration_ns, .. } | Fault::Partition { at_ns, duration_ns, .. } => {
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

pub fn of(outcome: &Outcome) -> Vec<Reached> {
    let faults = outcome.schedule.faults.as_deref().unwrap_or(&[]);
    let mut out = Vec::new();
    for (message, p) in &outcome.properties {
        if let Some(t) = p.first_true_ns {
            out.push(Reached { signal: Signal::Property { message: message.clone(), cond: true, during: open_windows(faults, t) }, at_ns: Some(t) });
        }
        if p.hits > p.trues {
            let t = p.first_false_ns.unwrap_or(p.first_hit_ns);
            out.push(Reached { signal: Signal::Property { message: message.clone(), cond: false, during: open_windows(faults, t) }, at_ns: Some(t) });
        }
    }
    for f in faults {
        let site = match f {
            Fault::Buggify { site, .. } => Some(site.clone()),
            _ => None,
        };
        out.push(Reached { signal: Signal::Fault { kind: f.kind().to_string(), node: f.node().to_string(), site }, at_ns: Some(f.at_ns()) });
    }
    for (node, indices) in &outcome.coverage {
        for &index in indices {
            out.push(Reached { signal: Signal::Function { node: node.clone(), index }, at_ns: None });
        }
    }
    out.sort();
    out.dedup_by(|a, b| a.signal == b.signal);
    out
}
