//! `-report FILE` (run and explore): a triage report of one sweep, as a
//! self-contained HTML page, or Markdown when FILE ends in `.md`.
//!
//! It says what is new, what still fails and what got fixed: findings (a
//! finding of failing runs (`finding::Signature`), or a property's never-reached /
//! never-true verdict) are tracked across reports in `.seedfall/findings.json`
//! next to the config, each one `new`, `ongoing`, `resolved` or `regressed`.
use crate::output;
use seedfall_search::{Project, SweepSummary};
use seedfall_sim::{Outcome, VTime};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub const FINDINGS_VERSION: u32 = 1;

/// The output flags run and explore share.
#[derive(clap::Args)]
pub struct Extras {
    /// Write a CPU profile of seedfall (pprof format) to this file.
    #[arg(long)]
    pub cpuprofile: Option<PathBuf>,
    /// Write a triage report: HTML, or Markdown when the name ends in .md.
    #[arg(long)]
    pub report: Option<PathBuf>,
}
/// Seeds listed per failure group.
pub const SEEDS_SHOWN_MAX: usize = 20;
const TIMELINE_PAGE: &str = include_str!("../../../extension/media/timeline.html");

/// One failure signature of a sweep, with its shortest failing run.
pub struct Group {
    pub signature: String,
    pub title: String,
    pub seeds: Vec<u64>,
    pub count: u64,
    pub shortest: Outcome,
    pub folder: Option<PathBuf>,
}

#[derive(Default)]
pub struct Groups {
    pub by_signature: BTreeMap<String, Group>,
}

impl Groups {
    /// Adds a failing outcome (which carries its trace).
    pub fn add(&mut self, o: &Outcome, folder: Option<PathBuf>) {
        let f = o.failure.as_ref().expect("a failing outcome");
        // The same findings as the sweep's output (`finding::Signature`).
        let signature = seedfall_search::finding::Signature::of(f).title();
        let g = self.by_signature.entry(signature.clone()).or_insert_with(|| Group {
            signature: signature.clone(),
            title: signature.clone(),
            seeds: Vec::new(),
            count: 0,
            shortest: o.clone(),
            folder: folder.clone(),
        });
        g.count += 1;
        if g.seeds.len() < SEEDS_SHOWN_MAX {
            g.seeds.push(o.seed);
        }
        let shorter = f.time_ns < g.shortest.failure.as_ref().map_or(u64::MAX, |s| s.time_ns);
        if shorter {
            g.shortest = o.clone();
            g.folder = folder;
        }
    }
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
struct Tracked {
    status: String,
    first_seen: String,
    last_seen: String,
}

#[derive(Serialize, Deserialize, Default)]
struct FindingsFile {
    version: u32,
    findings: BTreeMap<String, Tracked>,
}

pub struct Input<'a> {
    pub project: &'a Project,
    pub seeds: String,
    pub summary: &'a SweepSummary,
    pub groups: &'a Groups,
    pub table: &'a seedfall_search::properties::PropertyTable,
    /// Growth rows (`run -until-novelty`) or exploration rounds, as JSON.
    pub exploration: Option<Value>,
}

fn now_label() -> String {
    // A label for the report, not an input to anything: wall time is fine here.
    let secs = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    format!("unix time {secs}")
}

/// Where findings are tracked: under `.seedfall/`, with everything else
/// seedfall writes, so that nothing it writes is named like a config.
pub fn findings_path(config_dir: &Path) -> std::path::PathBuf {
    config_dir.join(".seedfall").join("findings.json")
}

/// Where versions before 0.2 kept it (read once, then removed).
const LEGACY_FINDINGS: &str = "seedfall-findings.json";

/// Updates the findings file; returns each current finding's status, and the resolved ones.
fn track(config_dir: &Path, current: &[String]) -> (BTreeMap<String, String>, Vec<String>) {
    let path = findings_path(config_dir);
    let legacy = config_dir.join(LEGACY_FINDINGS);
    let from = if path.is_file() { path.clone() } else { legacy.clone() };
    let mut file: FindingsFile = match seedfall_sim::files::read_text(&from, seedfall_sim::files::JSON_BYTES_MAX, "the findings file") {
        Err(_) => FindingsFile::default(),
        Ok(t) => serde_json::from_str(&t).unwrap_or_else(|e| {
            eprintln!("seedfall: {} cannot be read ({e}); findings are tracked afresh", from.display());
            FindingsFile::default()
        }),
    };
    let stamp = now_label();
    let mut status = BTreeMap::new();
    for f in current {
        let s = match file.findings.get(f).map(|t| t.status.as_str()) {
            None => "new",
            Some("resolved") => "regressed",
            Some(_) => "ongoing",
        };
        status.insert(f.clone(), s.to_string());
        let first = file.findings.get(f).map(|t| t.first_seen.clone()).unwrap_or_else(|| stamp.clone());
        file.findings.insert(f.clone(), Tracked { status: s.into(), first_seen: first, last_seen: stamp.clone() });
    }
    let mut resolved = Vec::new();
    for (name, t) in file.findings.iter_mut() {
        if !current.contains(name) && t.status != "resolved" {
            t.status = "resolved".into();
            resolved.push(name.clone());
        }
    }
    file.version = FINDINGS_VERSION;
    match seedfall_search::cache::write_atomic(&path, &serde_json::to_vec_pretty(&file).unwrap()) {
        Ok(()) if from == legacy => {
            let _ = std::fs::remove_file(&legacy);
        }
        Ok(()) => {}
        Err(e) => eprintln!("seedfall: cannot write {}: {e}", path.display()),
    }
    (status, resolved)
}

/// Markdown text: no raw HTML, quotes as they are (finding titles quote
/// their property).
fn esc_md(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

pub fn write(path: &Path, input: &Input) -> Result<(), String> {
    let config = &input.project.program.config;
    let mut current: Vec<String> = input.groups.by_signature.keys().map(|s| format!("failure {s}")).collect();
    for f in input.table.findings() {
        current.push(match f {
            seedfall_search::properties::Finding::NeverReached { message, .. } => format!("never reached \"{message}\""),
            seedfall_search::properties::Finding::NeverTrue { message, .. } => format!("never true \"{message}\""),
        });
    }
    let (status, resolved) = track(config.dir(), &current);
    let md = path.extension().is_some_and(|e| e == "md");
    let text = if md { markdown(input, &status, &resolved) } else { html(input, &status, &resolved) };
    seedfall_search::cache::write_atomic(path, text.as_bytes()).map_err(|e| format!("cannot write the report {}: {e}", path.display()))
}

fn commands(input: &Input, g: &Group) -> (String, String) {
    let c = output::relative(&input.project.program.config.path);
    let faults = g.folder.as_ref().map(|f| format!(" -faults {}", output::relative(&f.join("faults.json")))).unwrap_or_default();
    (format!("seedfall replay -c {c} -seed {}{faults}", g.shortest.seed), format!("seedfall shrink -c {c} -seed {}{faults}", g.shortest.seed))
}

fn markdown(input: &Input, status: &BTreeMap<String, String>, resolved: &[String]) -> String {
    let config = &input.project.program.config;
    let s = input.summary;
    let mut out = format!(
        "# seedfall report: {}\n\nconfig `{}`, seeds {}, {} runs, {} failed, {:.1} runs/s, {:.1} virtual s per wall s\n\n",
        config.name, output::relative(&config.path), input.seeds, s.runs, s.failures, s.seeds_per_second, s.virtual_seconds_per_wall_second
    );
    out.push_str("## Failures\n\n");
    if input.groups.by_signature.is_empty() {
        out.push_str("None.\n\n");
    }
    for g in input.groups.by_signature.values() {
        let st = status.get(&format!("failure {}", g.signature)).cloned().unwrap_or_default();
        let (replay, shrink) = commands(input, g);
        let f = g.shortest.failure.as_ref().unwrap();
        let durability = g.shortest.model_check.as_ref().map(|m| format!("; {}", output::durability_text(m))).unwrap_or_default();
        out.push_str(&format!("### [{st}] {}\n\n{} seeds ({}); shortest: seed {} failing at t={}{durability}\n\n```\n{replay}\n{shrink}\n```\n\n", esc_md(&g.title), g.count, g.seeds.iter().map(u64::to_string).collect::<Vec<_>>().join(", "), g.shortest.seed, VTime(f.time_ns)));
    }
    if !resolved.is_empty() {
        out.push_str("## Resolved since the last report\n\n");
        for r in resolved {
            out.push_str(&format!("- {r}\n"));
        }
        out.push('\n');
    }
    out.push_str("## Properties\n\n| property | kind | hit | true | verdict |\n|---|---|---|---|---|\n");
    for t in input.table.by_message.values() {
        let verdict = verdict(t);
        out.push_str(&format!("| {} | {} | {} | {} | {verdict} |\n", t.message, t.kind.name(), t.runs_hit, t.runs_true));
    }
    if let Some(x) = &input.exploration {
        out.push_str("\n## Exploration\n\n| round | runs | new signals | signals | new functions | functions |\n|---|---|---|---|---|---|\n");
        for r in x["rows"].as_array().into_iter().flatten() {
            out.push_str(&format!("| {} | {} | {} | {} | {} | {} |\n", r["round"], r["runs"], r["new_signals"], r["signals"], r["new_functions"], r["functions"]));
        }
        out.push_str(&format!("\nstopped: {}\n", x["stop"].as_str().unwrap_or("")));
    }
    out
}

fn verdict(t: &seedfall_search::properties::PropertyTally) -> &'static str {
    if t.kind.must_hit() && t.runs_hit == 0 {
        "never reached"
    } else if t.kind == seedfall_sim::props::PropertyKind::Sometimes && t.runs_true == 0 {
        "never true"
    } else if t.runs_false > 0 && t.kind.fails_run(false) {
        "failed"
    } else {
        "ok"
    }
}

fn html(input: &Input, status: &BTreeMap<String, String>, resolved: &[String]) -> String {
    let config = &input.project.program.config;
    let s = input.summary;
    let mut body = format!(
        "<header><h1>seedfall report: {}</h1><p>config <code>{}</code> &middot; seeds {} &middot; {} runs &middot; <b>{} failed</b> &middot; {:.1} runs/s &middot; {:.1} virtual s per wall s</p></header>",
        esc(&config.name), esc(&output::relative(&config.path)), esc(&input.seeds), s.runs, s.failures, s.seeds_per_second, s.virtual_seconds_per_wall_second
    );
    body.push_str("<h2>Failures</h2>");
    if input.groups.by_signature.is_empty() {
        body.push_str("<p class=\"none\">None.</p>");
    }
    for g in input.groups.by_signature.values() {
        let st = status.get(&format!("failure {}", g.signature)).cloned().unwrap_or_default();
        let (replay, shrink) = commands(input, g);
        let f = g.shortest.failure.as_ref().unwrap();
        let timeline = TIMELINE_PAGE.replace("/*SEEDFALL_DATA*/null", &serde_json::to_string(&json!({ "title": format!("seed {}", g.shortest.seed), "events": g.shortest.trace })).unwrap().replace('<', "\\u003c"));
        body.push_str(&format!(
            "<section class=\"failure\"><h3><span class=\"status {st}\">{st}</span> {}</h3><p>{} seed{} ({}); shortest: seed {} failing at t={}{}{}</p><pre>{}\n{}</pre><iframe class=\"timeline\" sandbox=\"allow-scripts\" srcdoc=\"{}\"></iframe></section>",
            esc(&g.title), g.count, if g.count == 1 { "" } else { "s" }, g.seeds.iter().map(u64::to_string).collect::<Vec<_>>().join(", "), g.shortest.seed, VTime(f.time_ns),
            output::display_location(input.project, f).map(|l| format!(" at <code>{}</code>", esc(&l))).unwrap_or_default(),
            g.shortest.model_check.as_ref().map(|m| format!("; {}", esc(&output::durability_text(m)))).unwrap_or_default(),
            esc(&replay), esc(&shrink), esc(&timeline)
        ));
    }
    if !resolved.is_empty() {
        body.push_str("<h2>Resolved since the last report</h2><ul>");
        for r in resolved {
            body.push_str(&format!("<li><span class=\"status resolved\">resolved</span> {}</li>", esc(r)));
        }
        body.push_str("</ul>");
    }
    body.push_str("<h2>Properties</h2><table><tr><th>property</th><th>kind</th><th>hit</th><th>true</th><th>verdict</th></tr>");
    for t in input.table.by_message.values() {
        let v = verdict(t);
        let st = match v {
            "never reached" => status.get(&format!("never reached \"{}\"", t.message)),
            "never true" => status.get(&format!("never true \"{}\"", t.message)),
            _ => None,
        };
        let tag = st.map(|s| format!(" <span class=\"status {s}\">{s}</span>")).unwrap_or_default();
        body.push_str(&format!("<tr class=\"{}\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{v}{tag}</td></tr>", v.replace(' ', "-"), esc(&t.message), t.kind.name(), t.runs_hit, t.runs_true));
    }
    body.push_str("</table>");
    if let Some(x) = &input.exploration {
        body.push_str("<h2>Exploration</h2><table><tr><th>round</th><th>runs</th><th>new signals</th><th>signals</th><th>new functions</th><th>functions</th></tr>");
        for r in x["rows"].as_array().into_iter().flatten() {
            body.push_str(&format!("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>", r["round"], r["runs"], r["new_signals"], r["signals"], r["new_functions"], r["functions"]));
        }
        body.push_str(&format!("</table><p>stopped: {}</p>", esc(x["stop"].as_str().unwrap_or(""))));
    }
    format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>seedfall report: {}</title><style>{}</style></head><body>{body}</body></html>\n",
        esc(&config.name),
        "body{font:14px/1.5 system-ui,sans-serif;margin:24px;color:#1f2328;max-width:1100px}h1{font-size:20px;margin:0}h2{font-size:16px;margin-top:28px;border-bottom:1px solid #d0d7de}h3{font-size:14px}table{border-collapse:collapse;width:100%}td,th{border:1px solid #d0d7de;padding:4px 8px;text-align:left}th{background:#f6f8fa}pre{background:#f6f8fa;padding:8px;border-radius:6px;overflow-x:auto}.status{font-size:11px;text-transform:uppercase;padding:1px 6px;border-radius:8px;color:#fff}.new{background:#cf222e}.regressed{background:#8250df}.ongoing{background:#bf8700}.resolved{background:#1a7f37}tr.never-reached td,tr.never-true td,tr.failed td{background:#fff8c5}iframe.timeline{width:100%;height:260px;border:1px solid #d0d7de;border-radius:6px}.none{color:#57606a}"
    )
}
