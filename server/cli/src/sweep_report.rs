//! What a sweep says when it is done, as text, JSON and JUnit, from its
//! facts (`seedfall_search::sweep_result::SweepResult`). `seedfall run`
//! prints its own sweep's and `seedfall merge` a merged one's through these
//! same functions, which is what makes a merge print what the unsharded run
//! prints.
use crate::output;
use seedfall_search::shard_result::ShardBlock;
use seedfall_search::sweep_result::SweepResult;
use serde::Serialize;
use std::path::PathBuf;

/// The pinned-regressions block that opens the output.
pub fn pins_text(r: &SweepResult) -> String {
    let mut s = String::new();
    if !r.pins.results.is_empty() {
        s.push_str(&format!("pinned regressions ({}):\n", r.pins.results.len()));
        for p in &r.pins.results {
            let state = if p.still_failing { "still failing" } else { "fixed" };
            s.push_str(&format!("  {state:<14} {:<32} {}\n", p.name, p.expected.describe()));
        }
    }
    s
}

pub fn header_line(r: &SweepResult) -> String {
    format!("{}, {} worker{}\n", r.header, r.jobs, if r.jobs == 1 { "" } else { "s" })
}

/// Everything after the runs: findings, the property table, the sweep's
/// verdicts, the summary line and pins still failing.
pub fn results_text(r: &SweepResult, fail_on_pinned: bool) -> String {
    let mut out = String::new();
    for f in r.found.ordered() {
        let block = r.blocks.get(&f.id);
        let text = block.map(|b| b.text.as_str()).unwrap_or_default();
        let folder = block.and_then(|b| b.folder.as_ref()).map(PathBuf::from);
        out.push_str(&output::finding_block(f, text, folder.as_deref(), &r.config, r.keep));
    }
    if !r.found.by_id.is_empty() {
        let n = r.found.by_id.len();
        let removed = if r.pruned > 0 { format!("; {} older folder{} of these findings removed", r.pruned, if r.pruned == 1 { "" } else { "s" }) } else { String::new() };
        out.push_str(&format!(
            "{} failing run{} in {n} finding{}: folders of the {} shortest of each kept, every seed listed in {}{removed}\n\n",
            r.failed_seeds.len(),
            if r.failed_seeds.len() == 1 { "" } else { "s" },
            if n == 1 { "" } else { "s" },
            r.keep,
            output::relative(&r.index)
        ));
    }
    let s = &r.summary;
    if !s.growth.is_empty() {
        out.push_str("round  runs  new signals  signals  new functions  functions\n");
        for g in &s.growth {
            out.push_str(&format!("{:>5}  {:>4}  {:>11}  {:>7}  {:>13}  {:>9}\n", g.round, g.runs, g.new_signals, g.signals, g.new_functions, g.functions));
        }
        out.push_str(&format!("stopped: {}\n", s.stop_reason.as_deref().unwrap_or("")));
    }
    out.push_str(&output::property_table(&r.table, &|t| r.place(t)));
    for f in &r.table.findings() {
        out.push_str(&output::finding_line(f, &|t| r.place(t)));
        out.push('\n');
    }
    out.push_str(&output::summary_line(s, &r.failed_seeds));
    out.push('\n');
    let failing = r.pins_failing();
    if failing > 0 {
        let note = if fail_on_pinned { "" } else { " (pass -fail-on-pinned to fail on them)" };
        out.push_str(&format!("{failing} pinned regression{} still failing{note}\n", if failing == 1 { "" } else { "s" }));
    }
    out
}

/// Writes `-json` (to stdout, or FILE) with `shard` in it, and `-junit
/// FILE`; says what it could not write. Returns whether all were written.
pub fn write_outputs(r: &SweepResult, json: Option<&str>, shard: Option<ShardBlock>, junit: Option<&std::path::Path>, fail_on_pinned: bool) -> bool {
    let mut ok = true;
    if let Some(dest) = json {
        if let Err(e) = emit_json(dest, &r.json(shard)) {
            eprintln!("seedfall: {e}");
            ok = false;
        }
    }
    if let Some(path) = junit {
        if let Err(e) = crate::junit::write_sweep(path, r, fail_on_pinned) {
            eprintln!("seedfall: {e}");
            ok = false;
        }
    }
    ok
}

/// Writes a JSON document to stdout (`dest` empty) or atomically to a file.
pub fn emit_json(dest: &str, doc: &impl Serialize) -> Result<(), String> {
    use std::io::Write;
    // Written as it is serialized: a merged sweep's document is as large as
    // its shards, and holding its text too would double the merge's memory.
    let mut write = |w: &mut dyn Write| -> std::io::Result<()> {
        let mut w = std::io::BufWriter::new(w);
        serde_json::to_writer_pretty(&mut w, doc)?;
        w.write_all(b"\n")?;
        w.flush()
    };
    if dest.is_empty() {
        return write(&mut std::io::stdout().lock())
            .map_err(|e| format!("-json: cannot write to standard output: {e}"));
    }
    seedfall_search::cache::write_atomic_with(std::path::Path::new(dest), &mut write)
        .map_err(|e| format!("-json {dest}: cannot write it: {e}"))
}
