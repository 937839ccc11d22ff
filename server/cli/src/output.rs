//! How results look: the failure line, the closing summary, the JSON forms.
use seedfall_search::sweep_result::{FailureJson, NodeFailureJson};
use seedfall_search::{Project, SweepSummary};
use seedfall_sim::failure::Failure;
use seedfall_sim::{Outcome, VTime};
use std::path::Path;

/// Real (wall) durations: `56ms`, `1.25s`, `830us`.
pub fn real(ns: u64) -> String {
    if ns < 1_000_000 {
        format!("{}us", ns / 1_000)
    } else if ns < 10_000_000_000 {
        let ms = ns as f64 / 1e6;
        if ms < 1000.0 { format!("{}ms", ms.round() as u64) } else { format!("{:.2}s", ms / 1000.0) }
    } else {
        format!("{:.1}s", ns as f64 / 1e9)
    }
}

/// Guest text made safe for a terminal: control bytes (ANSI escapes, bells,
/// carriage returns) and bidirectional overrides are shown escaped, so a
/// guest's message cannot repaint the screen or fake a line of ours.
/// Newlines and tabs stay.
/// `safe`, for text that must stay on one line (a table row, a finding
/// line): newlines and tabs are shown as `\n` and `\t` too.
pub fn safe_line(text: &str) -> String {
    safe(text).replace('\n', "\\n").replace('\t', "\\t")
}

pub fn safe(text: &str) -> std::borrow::Cow<'_, str> {
    let bad = |c: char| (c.is_control() && c != '\n' && c != '\t') || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}');
    if !text.chars().any(bad) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if bad(c) {
            match c {
                '\r' => out.push_str("\\r"),
                '\u{1b}' => out.push_str("\\e"),
                c => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            }
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// `FAIL seed 6 at t=923.003008ms (924 scheduler steps, 56ms real)` and the
/// indented node lines.
pub fn failure_block(project: &Project, outcome: &Outcome) -> String {
    let f = outcome.failure.as_ref().expect("a failing outcome has a failure");
    let details = f.details.as_ref().map(|d| format!(" {d}")).unwrap_or_default();
    let mut s = format!(
        "FAIL seed {} at t={} ({} scheduler steps, {} real)\n  {}: {}{details}\n",
        outcome.seed,
        VTime(f.time_ns),
        outcome.stats.steps,
        real(outcome.stats.real_ns),
        f.node,
        safe(&f.message)
    );
    if let Some(loc) = display_location(project, f) {
        s.push_str(&format!("    at {loc}\n"));
    }
    if let Some(m) = &outcome.model_check {
        s.push_str(&format!("    {}\n", durability_text(m)));
    }
    if let Some(h) = &f.hint {
        s.push_str(&format!("    hint: {h}\n"));
    }
    s
}

/// One finding on the terminal: the block of its shortest failing run, how
/// many seeds failed the same way, other messages it gave, and the commands
/// that replay and shrink the shortest.
pub fn finding_block(f: &seedfall_search::finding::Finding, shortest: &str, folder: Option<&Path>, config: &str, keep: usize) -> String {
    let mut s = shortest.to_string();
    // The folder may have gone since (past -failures-budget): say so, and
    // replay from the seed alone.
    let folder = folder.filter(|f| f.is_dir());
    match folder {
        Some(folder) => s.push_str(&format!("    saved in {}\n", relative(folder))),
        None => s.push_str("    no folder kept (over -failures-budget, or it could not be written); the seed alone replays it\n"),
    }
    let seeds: Vec<String> = f.seeds.iter().take(SEEDS_LISTED_MAX).map(u64::to_string).collect();
    let more = if f.seeds.len() > SEEDS_LISTED_MAX || f.count > f.seeds.len() as u64 { ", ..." } else { "" };
    if f.count > 1 {
        s.push_str(&format!("  the shortest of {} failing seeds of this finding ({}{more}); folders kept for the {} shortest\n", f.count, seeds.join(", "), keep.min(f.count as usize)));
    } else {
        s.push_str("  the only failing seed of this finding\n");
    }
    let first = f.shortest.first().map(|r| r.seed);
    for e in f.examples.iter().filter(|e| Some(e.seed) != first).take(2) {
        let details = e.details.as_deref().map(|d| format!(" {d}")).unwrap_or_default();
        s.push_str(&format!("  also seed {}: {}\n", e.seed, clip(&safe_line(&format!("{}{details}", e.message)), EXAMPLE_CHARS_MAX)));
    }
    if let Some(seed) = first {
        let faults = folder.map(|p| format!(" -faults {}", relative(&p.join("faults.json")))).unwrap_or_default();
        s.push_str(&format!("  replay it: seedfall replay -c {config} -seed {seed}{faults}\n"));
        s.push_str(&format!("  shrink it: seedfall shrink -c {config} -seed {seed}{faults}\n"));
    }
    s
}

const SEEDS_LISTED_MAX: usize = 10;
const EXAMPLE_CHARS_MAX: usize = 200;

fn clip(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

/// `found under ext4; fails under strict POSIX too`
pub fn durability_text(m: &seedfall_sim::outcome::ModelCheck) -> String {
    format!("found under {}; {}", m.found_under, m.label)
}

pub fn display_location(project: &Project, f: &Failure) -> Option<String> {
    let raw = f.location.as_ref()?;
    Some(match project.resolve_location(&f.node, raw) {
        Some(p) => {
            let line = raw.rsplit_once(':').map(|(_, l)| l).unwrap_or("");
            format!("{}:{line}", relative(&p))
        }
        None => raw.clone(),
    })
}

/// A message that starts with an absolute path, with that path made relative.
pub fn relative_prefix(message: &str) -> String {
    match std::env::current_dir() {
        Ok(cwd) => {
            let prefix = format!("{}/", cwd.display());
            message.strip_prefix(&prefix).map(str::to_string).unwrap_or_else(|| message.to_string())
        }
        Err(_) => message.to_string(),
    }
}

pub fn relative(p: &Path) -> String {
    let cwd = std::env::current_dir().ok();
    match cwd.as_ref().and_then(|c| p.strip_prefix(c).ok()) {
        Some(r) => r.display().to_string(),
        None => p.display().to_string(),
    }
}

pub fn summary_line(s: &SweepSummary, failed_seeds: &[u64]) -> String {
    let failed = if failed_seeds.is_empty() {
        "0 failed".to_string()
    } else {
        let shown: Vec<String> = failed_seeds.iter().take(10).map(u64::to_string).collect();
        let more = if failed_seeds.len() > 10 { ", ..." } else { "" };
        format!("{} failed (seeds {}{more})", failed_seeds.len(), shown.join(", "))
    };
    format!(
        "{} runs, {failed} in {}: {:.1} runs/s, {:.1} virtual s per wall s",
        s.runs,
        real(s.wall_ns),
        s.seeds_per_second,
        s.virtual_seconds_per_wall_second
    )
}

pub fn failure_json(project: &Project, o: &Outcome) -> FailureJson {
    let f = o.failure.as_ref().expect("failing outcome");
    FailureJson {
        seed: o.seed,
        time_ns: f.time_ns,
        time: VTime(f.time_ns).to_string(),
        steps: o.stats.steps,
        real_ns: o.stats.real_ns,
        trace_hash: format!("{:016x}", o.trace_hash),
        folder: None,
        model: o.model_check.clone(),
        nodes: vec![NodeFailureJson {
            node: f.node.clone(),
            kind: f.kind,
            message: f.message.clone(),
            details: f.details.clone(),
            location: display_location(project, f),
            hint: f.hint.clone(),
        }],
    }
}

/// A location as the user can click it: resolved to a file on this machine
/// when the node's sources tell where, relative to the current folder.
pub fn location_text(project: &Project, node: &str, raw: &str) -> String {
    if let Some(src) = seedfall_search::artifacts::source(project, node, raw) {
        return format!("{}:{}", relative(Path::new(&src.file)), src.line);
    }
    if Path::new(raw.rsplit_once(':').map(|(f, _)| f).unwrap_or(raw)).is_absolute() {
        return relative(Path::new(raw));
    }
    raw.to_string()
}

pub fn tally_location(project: &Project, t: &seedfall_search::properties::PropertyTally) -> String {
    let Some(raw) = &t.location else { return String::new() };
    let node = seedfall_search::properties::tally_node(&project.program, t).unwrap_or_default();
    location_text(project, &node, raw)
}

/// The property table of a sweep: each property with its run counts, and
/// `FAIL` before each row that fails the sweep (a false `always`, a reached
/// `unreachable`, a must-hit property never reached, a `sometimes` never
/// true). `true` and `false` count runs with at least one true (false)
/// evaluation; they are blank for `reachable` and `unreachable`, whose
/// condition carries nothing (reaching them is the whole event).
///
/// `place` says where a property is, as the terminal shows it
/// (`tally_location` for a project at hand).
pub fn property_table(table: &seedfall_search::properties::PropertyTable, place: &dyn Fn(&seedfall_search::properties::PropertyTally) -> String) -> String {
    if table.by_message.is_empty() {
        return String::new();
    }
    let findings = table.findings();
    let width = table.by_message.keys().map(|m| m.len()).max().unwrap_or(0).min(48) + 2;
    let mut s = String::from("properties:\n");
    for t in table.by_message.values() {
        let quoted = format!("\"{}\"", safe_line(&t.message));
        let marker = if tally_fails(t, &findings) { "FAIL" } else { "" };
        let (truth, falsity) = match tally_counts_truth(t.kind) {
            true => (format!("true {:>5}", t.runs_true), format!("false {:>5}", t.runs_false)),
            false => (String::new(), String::new()),
        };
        let row = format!(
            "  {marker:<4} {:<21} {quoted:<width$} hit {:>5} runs  {truth:<10}  {falsity:<11}  {}",
            t.kind.name(),
            t.runs_hit,
            place(t),
        );
        s.push_str(row.trim_end());
        s.push('\n');
    }
    s
}

/// Whether a property's true and false counts mean anything: they do for
/// `always`, `always_or_unreachable` and `sometimes`.
fn tally_counts_truth(kind: seedfall_sim::props::PropertyKind) -> bool {
    use seedfall_sim::props::PropertyKind;
    matches!(kind, PropertyKind::Always | PropertyKind::AlwaysOrUnreachable | PropertyKind::Sometimes)
}

/// Whether this row fails the sweep: one of its runs failed on it, or it is
/// one of the sweep's findings (never reached, never true).
pub fn tally_fails(t: &seedfall_search::properties::PropertyTally, findings: &[seedfall_search::properties::Finding]) -> bool {
    use seedfall_search::properties::Finding;
    use seedfall_sim::props::PropertyKind;
    let failed_in_a_run = match t.kind {
        PropertyKind::Always | PropertyKind::AlwaysOrUnreachable => t.runs_false > 0,
        PropertyKind::Unreachable => t.runs_hit > 0,
        PropertyKind::Sometimes | PropertyKind::Reachable => false,
    };
    let found = findings.iter().any(|f| match f {
        Finding::NeverReached { message, .. } | Finding::NeverTrue { message, .. } => *message == t.message,
    });
    failed_in_a_run || found
}

pub fn finding_line(f: &seedfall_search::properties::Finding, place: &dyn Fn(&seedfall_search::properties::PropertyTally) -> String) -> String {
    use seedfall_search::properties::Finding;
    let (what, message, kind, location) = match f {
        Finding::NeverReached { message, kind, location } => ("never reached", message, kind, location),
        Finding::NeverTrue { message, kind, location } => ("never true", message, kind, location),
    };
    let t = seedfall_search::properties::PropertyTally {
        message: message.clone(),
        kind: *kind,
        location: location.clone(),
        runs_hit: 0,
        runs_true: 0,
        runs_false: 0,
        in_catalog: true,
    };
    let at = place(&t);
    let at = if at.is_empty() { String::new() } else { format!(" at {at}") };
    format!("{what}: {} \"{}\"{at}", kind.name(), safe_line(message))
}

/// One trace event as a timeline line (after its time and node columns).
pub fn event_text(kind: &seedfall_sim::trace::EventKind) -> String {
    safe(&event_text_raw(kind)).into_owned()
}

fn event_text_raw(kind: &seedfall_sim::trace::EventKind) -> String {
    use seedfall_sim::trace::{EventKind, Stdio};
    match kind {
        EventKind::Output { stream: Stdio::Stdout, text } => format!("| {text}"),
        EventKind::Output { stream: Stdio::Stderr, text } => format!("! {text}"),
        EventKind::OutputCapped { stream, cap_bytes, dropped_bytes, dropped_lines } => format!(
            "{} past {} not kept: {} in {dropped_lines} lines (limits.output_mb, or -output-cap)",
            if *stream == Stdio::Stdout { "stdout" } else { "stderr" },
            seedfall_sim::memory::human(*cap_bytes),
            seedfall_sim::memory::human(*dropped_bytes)
        ),
        EventKind::Start => "started".into(),
        EventKind::Restart => "restarted on what its disk kept".into(),
        EventKind::Exit { code } => format!("exited with code {code}"),
        EventKind::Trap { message } => format!("trapped: {message}"),
        EventKind::Unsupported { call } => format!("called unsupported {call} (returned an error)"),
        EventKind::Failure { message } => format!("FAILED: {message}"),
        EventKind::End { reason } => format!("run ended: {reason}"),
        EventKind::Property { kind, message, cond, .. } => format!("property {} \"{message}\" = {cond}", kind.name()),
        EventKind::SetupComplete => "setup complete".into(),
        EventKind::Fault { fault } => format!("fault: {}", fault.describe()),
        EventKind::Branch { streams } => format!("branch: re-keyed {}", streams.join(",")),
        EventKind::Crash { kill: true, .. } => "killed: the process died; the machine kept every write it made".into(),
        EventKind::Crash { sectors_lost, sectors_torn_kept, lost, lost_more, .. } => {
            let mut text = format!("crashed: {sectors_lost} unsynced sectors lost, {sectors_torn_kept} torn sectors kept");
            if !lost.is_empty() {
                const SHOWN: usize = 6;
                let listed: Vec<String> = lost.iter().take(SHOWN).map(|l| l.describe()).collect();
                let more = lost_more + lost.len().saturating_sub(SHOWN) as u64;
                text.push_str(&format!("; {}", listed.join("; ")));
                if more > 0 {
                    text.push_str(&format!("; and {more} more"));
                }
            }
            text
        }
        EventKind::Fsync { ok, path, dir } => {
            let what = if *dir { format!("fsync of folder {path}") } else { format!("fsync {path}") };
            if *ok { what } else { format!("{what} failed (EIO)") }
        }
        EventKind::Disk { op, path, to, size } => match (to, size) {
            (Some(to), _) => format!("{} {path} -> {to}", op.name()),
            (None, Some(size)) => format!("{} {path} to {size} bytes", op.name()),
            (None, None) => format!("{} {path}", op.name()),
        },
        EventKind::NoSpace { op, path, write, asked, done, free, full } => {
            let why = match (*full, *free) {
                (true, _) => "a disk_full fault holds the free space at 0".to_string(),
                (false, f) if f < seedfall_sim::disk::BLOCK_BYTES => format!("{f} bytes free, less than a block"),
                (false, f) => format!("{f} bytes free"),
            };
            let op = if *write > 0 { format!("{op} #{write}") } else { op.clone() };
            if *done > 0 {
                format!("no space: {op} {path} wrote {done} of {asked} bytes ({why})")
            } else {
                format!("no space: {op} {path} refused with ENOSPC ({why})")
            }
        }
        EventKind::Net { text } => format!("net: {text}"),
        EventKind::Families { families } => format!("fault families on: {}", if families.is_empty() { "none".to_string() } else { families.join(", ") }),
    }
}

#[cfg(test)]
mod safe_tests {
    use super::safe;

    #[test]
    fn guest_text_cannot_drive_the_terminal() {
        assert_eq!(safe("plain\ttext\nline"), "plain\ttext\nline");
        assert_eq!(safe("evil \x1b[2J\x1b[31mred\x07\r ok"), "evil \\e[2J\\e[31mred\\u{7}\\r ok");
        assert_eq!(safe("a\u{202e}b"), "a\\u{202e}b");
    }
}
