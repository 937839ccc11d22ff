//! `seedfall inspect`: the timeline of one run, filterable by node and by
//! event kind, ending at the failure. `-json` prints the same events as JSON
//! lines for tools (the daemon and the editor use it). `-at` and `-at-event`
//! stand at one moment of the run instead (`crate::moment`).
use crate::output;
use clap::Args;
use seedfall_sim::trace::{EventKind, TraceEvent};
use seedfall_sim::moment::{At, MomentPause};
use seedfall_sim::{run_paused, RunOptions, VTime};

#[derive(Args)]
pub struct InspectArgs {
    #[command(flatten)]
    pub run: crate::schedule::RunSpec,
    /// Only events of these node instances (comma-separated; `server` also
    /// matches `server#1`...).
    #[arg(long)]
    pub node: Option<String>,
    // Only these kinds of event; the help is made from `KINDS`, so the list
    // a user reads is the list `-kind` accepts.
    #[arg(long, help = kind_help())]
    pub kind: Option<String>,
    /// Also print each node's disk as it survived every crash, and at the
    /// end: paths, sizes, a content hash.
    #[arg(long)]
    pub tree: bool,
    /// JSON lines instead of text.
    #[arg(long)]
    pub json: bool,
    /// Stand at one moment: the first step at or after this virtual time
    /// (`1.5s`, `250ms`). Prints every node instance there: its status, the
    /// files and sockets it holds, its disk with what is durable and what
    /// only cached, and the links cut.
    #[arg(long, value_name = "TIME", conflicts_with = "at_event")]
    pub at: Option<String>,
    /// Stand right after trace event number N (from 0, as `-json` lists the
    /// events, before any filter).
    #[arg(long, value_name = "N")]
    pub at_event: Option<usize>,
}

pub const KINDS: &[&str] = &["output", "property", "fault", "crash", "restart", "start", "exit", "fsync", "disk", "failure", "setup", "branch", "net", "other"];

/// The help of `-kind`: every name of `KINDS`, and what `disk` and `net` take.
fn kind_help() -> String {
    format!(
        "Only these kinds of event (comma-separated): {}. `disk` lists every disk event: creates, renames, unlinks, mkdirs, truncates, fsyncs, what each crash lost and each write, truncate, create or mkdir the disk had no room for; `net` lists connections made, refused, timed out and reset, and partitions healing",
        KINDS.join(", ")
    )
}

/// Whether an event is of a `-kind` (`disk` also takes fsyncs and crashes).
pub fn is_kind(kind: &str, e: &EventKind) -> bool {
    let k = kind_of(e);
    k == kind || (kind == "disk" && matches!(k, "fsync" | "crash"))
}

/// The filter name of an event.
pub fn kind_of(e: &EventKind) -> &'static str {
    match e {
        EventKind::Output { .. } | EventKind::OutputCapped { .. } => "output",
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
        EventKind::Disk { .. } | EventKind::NoSpace { .. } => "disk",
        EventKind::Unsupported { .. } | EventKind::End { .. } | EventKind::Families { .. } => "other",
    }
}

pub fn node_matches(filter: &[String], node: Option<&str>) -> bool {
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
    let at = match (&a.at, a.at_event) {
        (Some(t), _) => match seedfall_sim::vtime::parse_duration(t) {
            Some(t) => Some(At::TimeNs(t.nanos())),
            None => {
                eprintln!("seedfall: -at: expected a virtual time such as 1.5s or 250ms, found {t:?}");
                return 2;
            }
        },
        (None, Some(i)) => Some(At::Event(i)),
        (None, None) => None,
    };
    let options = RunOptions { disk_trees: a.tree, handles: at.is_some(), ..RunOptions::default() };
    let mut pause = at.map(MomentPause::new);
    let outcome = run_paused(&project.program, &schedule, &options, pause.as_mut().map(|p| p as &mut dyn seedfall_sim::snapshot::Pause));
    if let Some(moment) = pause.and_then(|p| p.moment) {
        let config = a.run.config.display().to_string();
        return crate::moment::print(&project, &config, &schedule, &outcome, &moment, &nodes, a.json);
    }
    let keep = |e: &&TraceEvent| node_matches(&nodes, e.node.as_deref()) && (kinds.is_empty() || kinds.iter().any(|k| is_kind(k, &e.kind)));
    let events: Vec<&TraceEvent> = outcome.trace.iter().filter(keep).collect();
    let trees: Vec<&seedfall_sim::outcome::DiskTree> = outcome.disk_trees.iter().filter(|t| node_matches(&nodes, Some(&t.node))).collect();
    if a.json {
        for e in events {
            println!("{}", serde_json::to_string(e).unwrap());
        }
        for t in trees {
            println!("{}", serde_json::json!({ "event": "disk_tree", "node": t.node, "time_ns": t.time_ns, "after": t.after, "entries": t.entries }));
        }
    } else {
        let width = instances.iter().map(String::len).max().unwrap_or(4);
        // Trees go right after the crash they follow (or at the end).
        let mut pending = trees.into_iter().peekable();
        for e in events {
            let t = VTime(e.time_ns).to_string();
            let node = e.node.as_deref().unwrap_or("");
            println!("{t:>16}  {node:<width$}  {:<8}  {}", kind_of(&e.kind), output::event_text(&e.kind));
            if matches!(e.kind, EventKind::Crash { .. }) {
                while let Some(tree) = pending.next_if(|tr| tr.after == "crash" && tr.time_ns == e.time_ns && Some(tr.node.as_str()) == e.node.as_deref()) {
                    print_tree(tree);
                }
            }
        }
        for tree in pending {
            print_tree(tree);
        }
        match &outcome.failure {
            Some(_) => print!("{}", output::failure_block(&project, &outcome)),
            None => println!("PASS seed {} at t={}", outcome.seed, outcome.end_time),
        }
    }
    i32::from(outcome.failure.is_some())
}

fn print_tree(t: &seedfall_sim::outcome::DiskTree) {
    let when = if t.after == "crash" { "after the crash" } else { "at the end" };
    println!("{:>16}  disk of {} {when}: {} entries", VTime(t.time_ns).to_string(), t.node, t.entries.len());
    for e in &t.entries {
        match &e.hash {
            Some(h) => println!("{:>16}    {:<40} {:>10} bytes  {h}", "", e.path, e.size),
            None => println!("{:>16}    {}/", "", e.path),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_is_in_the_help_of_the_cli_and_of_the_mcp_tool() {
        let words = |text: &str| -> Vec<String> { text.split(|c: char| !c.is_ascii_alphanumeric()).map(str::to_string).collect() };
        let mcp = serde_json::to_string(&schemars::schema_for!(seedfall_lsp::mcp::InspectParams)).unwrap();
        let (help_words, mcp_words) = (words(&kind_help()), words(&mcp));
        for k in KINDS {
            assert!(help_words.iter().any(|w| w == k), "{k} not in {}", kind_help());
            assert!(mcp_words.iter().any(|w| w == k), "{k} not in the MCP inspect tool's schema: {mcp}");
        }
    }
}
