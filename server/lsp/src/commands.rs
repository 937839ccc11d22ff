//! The daemon's commands (`workspace/executeCommand`): which `seedfall`
//! command line each one runs and what it answers.
//!
//! Sweeps, explorations and timelines run with `--json`: their results feed
//! trees and pages. The failure tools (replay, shrink, cause, pin) run in
//! text mode: what they print is what a person reads, so the answer carries
//! it whole (`text`), with the verdict their exit code gives.
use serde_json::{json, Value};
use std::path::Path;

/// Commands the daemon executes.
pub const COMMANDS: &[&str] = &[
    "seedfall.run",
    "seedfall.explore",
    "seedfall.stop",
    "seedfall.replay",
    "seedfall.shrink",
    "seedfall.inspect",
    "seedfall.cause",
    "seedfall.pin",
];

/// Commands that act on one run: they need a seed or a schedule file.
const ON_A_RUN: &[&str] = &["seedfall.replay", "seedfall.inspect", "seedfall.cause", "seedfall.shrink", "seedfall.pin"];

/// Whether the command's stdout is JSON (else text for a person).
pub fn answers_json(command: &str) -> bool {
    matches!(command, "seedfall.run" | "seedfall.explore" | "seedfall.inspect")
}

/// The CLI arguments of a command, from its JSON arguments.
pub fn cli_args(command: &str, args: &Value, config: &Path) -> Result<Vec<String>, String> {
    let c = config.display().to_string();
    let mut v: Vec<String> = match command {
        "seedfall.run" => {
            let mut v: Vec<String> = vec!["run".into(), "-c".into(), c, "--seeds".into(), args["seeds"].as_str().unwrap_or("1-100").into(), "--json".into(), "--progress".into()];
            // Branching from a moment (the moment view): every seed shares
            // `prefix_seed`'s run up to `from`.
            match (args["from"].as_str(), args["prefix_seed"].as_u64()) {
                (Some(from), Some(seed)) => v.extend(["--from".into(), from.into(), "--prefix-seed".into(), seed.to_string()]),
                (None, None) => {}
                _ => return Err("seedfall.run branches with both {\"from\": TIME, \"prefix_seed\": N}".into()),
            }
            v
        }
        "seedfall.explore" => {
            let mut v: Vec<String> = vec!["explore".into(), "-c".into(), c, "--json".into(), "--events".into(), "--batch".into(), args["batch"].as_u64().unwrap_or(8).to_string()];
            // A wall-time budget (the Testing view's Explore) stands alone;
            // without one, rounds bound the exploration (30 by default).
            if let Some(budget) = args["budget"].as_str() {
                v.extend(["--budget".into(), budget.into()]);
            }
            if args["rounds"].is_u64() || args["budget"].is_null() {
                v.extend(["--rounds".into(), args["rounds"].as_u64().unwrap_or(30).to_string()]);
            }
            v
        }
        "seedfall.inspect" => {
            // `at_event` or `at`: one moment of the run, not its timeline.
            let mut v: Vec<String> = vec!["inspect".into(), "-c".into(), c, "--json".into()];
            if let Some(i) = args["at_event"].as_u64() {
                v.extend(["--at-event".into(), i.to_string()]);
            } else if let Some(t) = args["at"].as_str() {
                v.extend(["--at".into(), t.into()]);
            }
            v
        }
        "seedfall.replay" => vec!["replay".into(), "-c".into(), c],
        "seedfall.cause" => vec!["cause".into(), "-c".into(), c],
        "seedfall.shrink" => vec!["shrink".into(), "-c".into(), c],
        "seedfall.pin" => vec!["pin".into(), "-c".into(), c],
        other => return Err(format!("unknown command {other}")),
    };
    if ON_A_RUN.contains(&command) {
        let (seed, faults) = (args["seed"].as_u64(), args["faults"].as_str());
        if seed.is_none() && faults.is_none() {
            return Err(format!("{command} needs {{\"seed\": N}} or {{\"faults\": file}}"));
        }
        if let Some(s) = seed {
            v.extend(["--seed".into(), s.to_string()]);
        }
        if let Some(f) = faults {
            v.extend(["--faults".into(), f.to_string()]);
        }
    }
    Ok(v)
}

/// The answer to a command whose job ran to its end (exit 0 or 1; exit 2,
/// a usage or build error, is answered with an error instead).
pub fn answer(command: &str, code: i32, stdout: &str) -> Value {
    if command == "seedfall.inspect" {
        let events: Vec<Value> = stdout.lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
        return json!({ "exit": code, "result": events });
    }
    if answers_json(command) {
        let parsed: Value = serde_json::from_str(stdout).unwrap_or_else(|_| Value::String(stdout.to_string()));
        return json!({ "exit": code, "result": parsed });
    }
    let verdict = if code == 0 { "pass" } else { "fail" };
    json!({ "exit": code, "verdict": verdict, "text": stdout })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tool_on_one_run_needs_a_seed_or_a_schedule() {
        let c = Path::new("/w/seedfall.json");
        assert!(cli_args("seedfall.replay", &json!({}), c).unwrap_err().contains("needs"));
        assert_eq!(cli_args("seedfall.replay", &json!({ "seed": 4 }), c).unwrap(), ["replay", "-c", "/w/seedfall.json", "--seed", "4"]);
        assert!(cli_args("seedfall.bogus", &json!({}), c).unwrap_err().contains("unknown command"));
    }

    #[test]
    fn explore_takes_rounds_or_a_budget() {
        let c = Path::new("/w/seedfall.json");
        let rounds = cli_args("seedfall.explore", &json!({}), c).unwrap();
        assert!(rounds.ends_with(&["--rounds".to_string(), "30".to_string()]), "{rounds:?}");
        let budget = cli_args("seedfall.explore", &json!({ "budget": "90s" }), c).unwrap();
        assert!(budget.windows(2).any(|w| w == ["--budget", "90s"]) && !budget.contains(&"--rounds".to_string()), "{budget:?}");
        let both = cli_args("seedfall.explore", &json!({ "budget": "90s", "rounds": 4 }), c).unwrap();
        assert!(both.windows(2).any(|w| w == ["--rounds", "4"]), "{both:?}");
    }

    #[test]
    fn a_moment_and_a_branch_from_it_pass_their_flags() {
        let c = Path::new("/w/seedfall.json");
        let at = cli_args("seedfall.inspect", &json!({ "seed": 2, "at_event": 25 }), c).unwrap();
        assert!(at.windows(2).any(|w| w == ["--at-event", "25"]), "{at:?}");
        let branch = cli_args("seedfall.run", &json!({ "seeds": "1-8", "from": "71657393ns", "prefix_seed": 2 }), c).unwrap();
        assert!(branch.windows(2).any(|w| w == ["--from", "71657393ns"]) && branch.windows(2).any(|w| w == ["--prefix-seed", "2"]), "{branch:?}");
        assert!(cli_args("seedfall.run", &json!({ "from": "1s" }), c).unwrap_err().contains("prefix_seed"));
    }

    #[test]
    fn text_tools_answer_text_and_a_verdict() {
        assert_eq!(answer("seedfall.replay", 1, "FAIL seed 2\n"), json!({ "exit": 1, "verdict": "fail", "text": "FAIL seed 2\n" }));
        assert_eq!(answer("seedfall.run", 0, "{\"runs\":3}"), json!({ "exit": 0, "result": { "runs": 3 } }));
    }
}
