//! Code lenses: results beside the code. On a property's line, its counts
//! from the last sweep; on a failing line, Replay / Shrink / Inspect / Pin;
//! on a config, Run sweep / Explore / Stop and the last sweep's summary.
use crate::protocol::*;
use crate::state::State;
use serde_json::{json, Value};
use std::path::Path;

fn lens(line: u32, title: String, command: &str, args: Option<Value>) -> CodeLens {
    CodeLens {
        range: Range { start: Position { line, character: 0 }, end: Position { line, character: 0 } },
        command: Some(Command { title, command: command.to_string(), arguments: args.map(|a| vec![a]) }),
        data: None,
    }
}

fn counts(p: &Value, runs: u64) -> String {
    let hit = p["runs_hit"].as_u64().unwrap_or(0);
    let truth = p["runs_true"].as_u64().unwrap_or(0);
    match p["kind"].as_str().unwrap_or("") {
        _ if hit == 0 => format!("never reached in {runs} runs"),
        "sometimes" if truth == 0 => format!("hit in {hit}/{runs} runs, never true"),
        "sometimes" => format!("hit in {hit}/{runs} runs, true in {truth}"),
        "unreachable" => format!("reached in {hit}/{runs} runs"),
        _ => format!("hit in {hit}/{runs} runs, false in {}", p["runs_false"].as_u64().unwrap_or(0)),
    }
}

pub fn for_file(state: &State, file: &Path) -> Vec<CodeLens> {
    let mut out = Vec::new();
    for c in state.configs.iter() {
        let c = c.value();
        let config_arg = c.path.display().to_string();
        if c.path == file {
            out.push(lens(0, "Run sweep".into(), "seedfall.run", Some(json!({ "config": config_arg }))));
            out.push(lens(0, "Explore".into(), "seedfall.explore", Some(json!({ "config": config_arg }))));
            out.push(lens(0, "Stop".into(), "seedfall.stop", Some(json!({ "config": config_arg }))));
            if let Some(last) = &c.last_run {
                let title = format!("last sweep: seeds {}, {} runs, {} failed", last["seeds"].as_str().unwrap_or(""), last["runs"], last["failed"]);
                out.push(lens(0, title, "", None));
            }
        }
        if let Some(last) = &c.last_run {
            let runs = last["runs"].as_u64().unwrap_or(0);
            for p in last["properties"].as_array().into_iter().flatten() {
                if p["source"]["file"].as_str().map(Path::new) == Some(file) {
                    let line = p["source"]["line"].as_u64().unwrap_or(1).saturating_sub(1) as u32;
                    out.push(lens(line, counts(p, runs), "", None));
                }
            }
        }
        let mut seen = std::collections::BTreeSet::new();
        for f in &c.failures {
            let Some((src, line)) = &f.source else { continue };
            // One set of actions per failing line: the first seed's.
            if src != file || !seen.insert(*line) {
                continue;
            }
            let args = json!({ "config": config_arg, "seed": f.seed, "faults": f.folder.join("faults.json").display().to_string() });
            let line = line.saturating_sub(1);
            out.push(lens(line, format!("Replay seed {}", f.seed), "seedfall.replay", Some(args.clone())));
            out.push(lens(line, "Shrink".into(), "seedfall.shrink", Some(args.clone())));
            out.push(lens(line, "Inspect".into(), "seedfall.inspect", Some(args.clone())));
            out.push(lens(line, "Pin".into(), "seedfall.pin", Some(args)));
        }
    }
    out
}
