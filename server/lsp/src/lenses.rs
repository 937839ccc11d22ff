//! Code lenses: results beside the code. On a property's line, its counts
//! from the last sweep; on a failing line, Replay / Shrink / Inspect / Pin;
//! on a config, Run sweep / Explore / Stop and the last sweep's summary.
use crate::protocol::*;
use crate::state::State;
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

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

/// Every lens of the workspace, per file (files without lenses are absent).
pub fn all(state: &State) -> BTreeMap<PathBuf, Vec<CodeLens>> {
    let mut out: BTreeMap<PathBuf, Vec<CodeLens>> = BTreeMap::new();
    for c in state.configs.iter() {
        let c = c.value();
        let config_arg = c.path.display().to_string();
        let on_config = out.entry(c.path.clone()).or_default();
        on_config.push(lens(0, "Run sweep".into(), "seedfall.run", Some(json!({ "config": config_arg }))));
        on_config.push(lens(0, "Explore".into(), "seedfall.explore", Some(json!({ "config": config_arg }))));
        on_config.push(lens(0, "Stop".into(), "seedfall.stop", Some(json!({ "config": config_arg }))));
        if let Some(last) = &c.last_run {
            let title = format!("last sweep: seeds {}, {} runs, {} failed", last["seeds"].as_str().unwrap_or(""), last["runs"], last["failed"]);
            on_config.push(lens(0, title, "", None));
            let runs = last["runs"].as_u64().unwrap_or(0);
            for p in last["properties"].as_array().into_iter().flatten() {
                let Some(file) = p["source"]["file"].as_str() else { continue };
                let line = p["source"]["line"].as_u64().unwrap_or(1).saturating_sub(1) as u32;
                out.entry(c.resolve(file)).or_default().push(lens(line, counts(p, runs), "", None));
            }
        }
        // One set of actions per failing line: the shortest run's (the one
        // the diagnostic names).
        let mut failures: Vec<_> = c.failures.iter().filter(|f| f.source.is_some()).collect();
        failures.sort_by_key(|f| (f.time_ns, f.seed));
        let mut seen = BTreeSet::new();
        for f in failures {
            let Some((src, line)) = &f.source else { continue };
            if !seen.insert((src.clone(), *line)) {
                continue;
            }
            let args = json!({ "config": config_arg, "seed": f.seed, "faults": f.folder.join("faults.json").display().to_string() });
            let line = line.saturating_sub(1);
            let on_source = out.entry(src.clone()).or_default();
            on_source.push(lens(line, format!("Replay seed {}", f.seed), "seedfall.replay", Some(args.clone())));
            on_source.push(lens(line, "Shrink".into(), "seedfall.shrink", Some(args.clone())));
            on_source.push(lens(line, "Inspect".into(), "seedfall.inspect", Some(args.clone())));
            on_source.push(lens(line, "Pin".into(), "seedfall.pin", Some(args)));
        }
    }
    out
}
