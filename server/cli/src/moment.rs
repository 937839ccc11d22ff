//! `seedfall inspect -at TIME` / `-at-event N`: one moment of a run, as
//! text for a person or as one JSON line for the editor's moment view.
//!
//! The text says, per node instance, what a person debugging a loss asks
//! first: is it up, what does it hold open, who is it talking to, and which
//! of its files would a crash now keep. It ends with the command that
//! branches new runs from this moment, when the run is a plain seed's.
use crate::output;
use seedfall_sim::moment::Moment;
use seedfall_sim::{Outcome, Schedule, VTime};
use serde_json::json;

/// Bound on the events of a moment's span a report lists (a step that
/// printed a flood of lines lists the first ones).
pub const SPAN_EVENTS_MAX: usize = 200;

/// How new runs branch from this moment: every stream re-keyed from its
/// virtual time on, the past shared with this seed's run. `run -from`
/// shares a plain seed's run, so a run from a schedule file branches only
/// when it is that very run (a sweep's failure folder: the seed's own
/// draw, the same trace); a shrunk or hand-written schedule does not.
fn branch(project: &seedfall_search::Project, schedule: &Schedule, outcome: &Outcome, moment: &Moment) -> Result<(u64, String), &'static str> {
    if moment.end {
        return Err("the run had ended by then: there is nothing left to branch");
    }
    if !schedule.branches.is_empty() || schedule.prefix.is_some() {
        return Err("this run has branches or a prefix (explore's): a sweep cannot share its past; branch from a plain seed's run");
    }
    if schedule.faults.is_some() {
        let own = seedfall_sim::run(&project.program, &Schedule::seed(schedule.seed), &seedfall_sim::RunOptions::default());
        if own.trace_hash != outcome.trace_hash {
            return Err("this run follows a schedule file whose faults are not its seed's own draw (shrunk or written by hand): a sweep cannot share its past");
        }
    }
    Ok((schedule.seed, format!("{}ns", moment.time_ns)))
}

pub fn print(project: &seedfall_search::Project, config: &str, schedule: &Schedule, outcome: &Outcome, moment: &Moment, nodes: &[String], as_json: bool) -> i32 {
    let span: Vec<&seedfall_sim::trace::TraceEvent> = outcome.trace.get(moment.events_from..moment.events_to).unwrap_or(&[]).iter().take(SPAN_EVENTS_MAX).collect();
    let shown: Vec<&seedfall_sim::moment::NodeMoment> = moment.nodes.iter().filter(|n| crate::inspect::node_matches(nodes, Some(&n.node))).collect();
    let branch = branch(project, schedule, outcome, moment);
    if as_json {
        let mut m = serde_json::to_value(moment).expect("a moment serializes");
        m["nodes"] = serde_json::to_value(&shown).expect("a moment serializes");
        m["event"] = json!("moment");
        m["seed"] = json!(outcome.seed);
        m["events_total"] = json!(outcome.trace.len());
        m["trace_hash"] = json!(format!("{:016x}", outcome.trace_hash));
        m["span"] = serde_json::to_value(&span).expect("events serialize");
        match &branch {
            Ok((seed, from)) => m["branch"] = json!({ "prefix_seed": seed, "from": from }),
            Err(why) => m["branch_why_not"] = json!(why),
        }
        println!("{m}");
        return i32::from(outcome.failure.is_some());
    }
    let when = if moment.end { "as the run ended".to_string() } else { format!("at {}", VTime(moment.time_ns)) };
    let after = match moment.events_to {
        0 => "before the first event".to_string(),
        n => format!("after event {} of {}", n - 1, outcome.trace.len()),
    };
    println!("seedfall inspect: seed {} {when} (step {}), {after}", outcome.seed, moment.step);
    if !span.is_empty() {
        println!("  what led here (since the moment before, after event {}):", moment.events_from as i64 - 1);
        for e in &span {
            println!("    {:>16}  {:<10}  {}", VTime(e.time_ns).to_string(), e.node.as_deref().unwrap_or(""), output::event_text(&e.kind));
        }
    }
    for n in shown {
        let code = n.exit_code.map(|c| format!(" ({c})")).unwrap_or_default();
        let crashes = match n.crashes {
            0 => String::new(),
            1 => " (1 crash so far)".into(),
            k => format!(" ({k} crashes so far)"),
        };
        println!("  {}: {}{code}{crashes}", n.node, n.status);
        for f in &n.files {
            println!("    fd {:<3} {:<6} {} (offset {})", f.fd, f.mode, f.path, f.offset);
        }
        for s in &n.sockets {
            let s_ = &s.socket;
            let peer = if s_.peer.is_empty() { String::new() } else { format!(" -> {}", s_.peer) };
            let error = if s_.error.is_empty() { String::new() } else { format!(" {}", s_.error) };
            let stalled = if s_.stalled { ", stalled at a cut link" } else { "" };
            println!("    fd {:<3} socket {} {}{peer}{error} ({} unread, {} in flight{stalled})", s.fd, s_.state, s_.local, s_.unread, s_.in_flight);
        }
        println!("    disk ({}):{}", n.disk_model, if n.disk.is_empty() { " empty" } else { "" });
        for e in &n.disk {
            println!("      {:<9} {}", e.state, entry_text(e));
        }
        if n.disk_more > 0 {
            println!("      ... and {} more entries (not listed)", n.disk_more);
        }
    }
    if !moment.cut_links.is_empty() {
        let links: Vec<String> = moment.cut_links.iter().map(|(a, b)| format!("{a} -> {b}")).collect();
        println!("  links cut: {}", links.join(", "));
    }
    match branch {
        Ok((seed, from)) => println!("  branch from here: seedfall run -c {config} -from {from} -prefix-seed {seed} -seeds 1-20"),
        Err(why) => println!("  no branch from here: {why}"),
    }
    i32::from(outcome.failure.is_some())
}

/// A disk entry's line: path, size, and what a crash now would do to it.
fn entry_text(e: &seedfall_sim::disk::MomentEntry) -> String {
    if e.dir {
        return format!("{}/", e.path);
    }
    let size = |n: Option<u64>| n.map_or("-".to_string(), |n| format!("{n} bytes"));
    match e.state {
        "durable" => format!("{} {}", e.path, size(e.size)),
        "dirty" => format!("{} {} (durable: {}; {} written since the last fsync)", e.path, size(e.size), size(e.durable_size), plural(e.dirty_sectors, "sector")),
        "new" => format!("{} {} (a crash now loses this name)", e.path, size(e.size)),
        "replaced" => format!("{} {} (a crash now brings back the old file, {})", e.path, size(e.size), size(e.durable_size)),
        _ => format!("{} (gone from the cache; a crash now brings back {})", e.path, size(e.durable_size)),
    }
}

fn plural(n: u64, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
}
