//! `seedfall inspect`: the timeline of one run, filterable by node and by
//! event kind, ending at the failure. `-json` prints the same events as JSON
//! lines for tools (the daemon and the editor use it).
use crate::output;
use clap::Args;
use seedfall_sim::trace::{EventKind, TraceEvent};
use seedfall_sim::{run, RunOptions, VTime};

#[derive(Args)]
pub struct InspectArgs {
    #[command(flatten)]
    pub run: crate::schedule::RunSpec,
    /// Only events of these node instances (comma-separated; `server` also
    /// matches `server#1`...).
    #[arg(long)]
    pub node: Option<String>,
    /// Only these kinds of event (comma-separated): output, property, fault,
    /// crash, restart, start, exit, fsync, failure, setup, branch, other.
    #[arg(long)]
    pub kind: Option<String>,
    /// JSON lines instead of text.
    #[arg(long)]
    pub json: bool,
}

pub const KINDS: &[&str] = &["output", "property", "fault", "crash", "restart", "start", "exit", "fsync", "failure", "setup", "branch", "net", "other"];

/// The filter name of an event.
pub fn kind_of(e: &EventKind) -> &'static str {
    match e {
        EventKind::Output { .. } => "output",
        EventKind::Property { .. } => "property",
        EventKind::Fault { .. } => "fault",
        EventKind::Crash { .. } => "crash",
        EventKind::Restart => "restart",
        EventKind::Start => "start",
        EventKind::Exit { .. } => "exit",
        EventKind::Fsync { .. } => "fsync",
        EventKind::Failure { .. } | EventKind::Trap { .. } => "failure",
        EventKind::SetupComplete => "setup",
        EventKind::Branch { .. } => "branch",
        EventKind::Net { .. } => "net",
        EventKind::Unsupported { .. } | EventKind::End { .. } | EventKind::Families { .. } => "other",
    }
}

fn node_matches(filter: &[String], node: Option<&str>) -> bool {
    let Some(node) = node else { return filter.is_empty() };
    filter.is_empty() || filter.iter().any(|f| node == f || node.split('#').next() == Some(f.as_str()))
}

pub fn main(a: InspectArgs) -> i32 {
    let (project, schedule) = match a.run.load(a.json) {
        Ok(x) => x,
        Err(code) => return code,
    };
    let nodes: Vec<String> = a.node.as_deref().map(|s| s.split(',').map(str::to_string).collect()).unwrap_or_default();
    let kinds: Vec<String> = a.kind.as_deref().map(|s| s.split(',').map(str::to_string).collect()).unwrap_or_default();
    for k in &kinds {
        if !KINDS.contains(&k.as_str()) {
            eprintln!("seedfall: -kind: unknown kind \"{k}\" (kinds: {})", KINDS.join(", "));
            return 2;
        }
    }
    let instances: Vec<String> = project.program.config.instances().into_iter().map(|(_, n)| n).collect();
    for n in &nodes {
        if !instances.iter().any(|i| i == n || i.split('#').next() == Some(n.as_str())) {
            eprintln!("seedfall: -node: no node instance \"{n}\" (instances: {})", instances.join(", "));
            return 2;
        }
    }
    let outcome = run(&project.program, &schedule, &RunOptions::default());
    let keep = |e: &&TraceEvent| node_matches(&nodes, e.node.as_deref()) && (kinds.is_empty() || kinds.iter().any(|k| k == kind_of(&e.kind)));
    let events: Vec<&TraceEvent> = outcome.trace.iter().filter(keep).collect();
    if a.json {
        for e in events {
            println!("{}", serde_json::to_string(e).unwrap());
        }
    } else {
        let width = instances.iter().map(String::len).max().unwrap_or(4);
        for e in events {
            let t = VTime(e.time_ns).to_string();
            let node = e.node.as_deref().unwrap_or("");
            println!("{t:>16}  {node:<width$}  {:<8}  {}", kind_of(&e.kind), output::event_text(&e.kind));
        }
        match &outcome.failure {
            Some(_) => print!("{}", output::failure_block(&project, &outcome)),
            None => println!("PASS seed {} at t={}", outcome.seed, outcome.end_time),
        }
    }
    i32::from(outcome.failure.is_some())
}
