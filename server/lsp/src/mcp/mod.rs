//! `seedfall mcp`: an MCP server over stdio (the official Rust SDK, rmcp),
//! so an AI agent drives seedfall with the CLI's own options. Each tool runs
//! the `seedfall` binary as a child process (the same artifacts as the CLI),
//! returns its JSON as structured content plus a short text summary, reports
//! progress when the client asks for it, and kills the child when the call
//! is cancelled. A tool that fails (a bad config, a seed that passes when a
//! failure was expected) is a tool error; the server keeps serving.
pub mod gate;

use crate::jobs::Jobs;
use crate::progress::Event;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock, ProgressNotificationParam};
use rmcp::service::RequestContext;
use rmcp::{tool, tool_router, RoleServer, ServiceExt};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};
use std::sync::Arc;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunParams {
    /// The config file (seedfall.json).
    pub config: String,
    /// Seeds to run: "1-200" or "17" (default 1-100).
    pub seeds: Option<String>,
    /// Worker threads.
    pub j: Option<u32>,
    /// Stop once this many batches in a row added no signal or function.
    pub until_novelty: Option<u32>,
    /// Seeds per batch for until_novelty (default 20).
    pub batch: Option<u32>,
    /// A schedule file (faults.json): run exactly that schedule instead of a sweep.
    pub faults: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExploreParams {
    pub config: String,
    /// Seeds of round 1 (default 1-8).
    pub seeds: Option<String>,
    pub rounds: Option<u32>,
    /// Children per round (default 8).
    pub batch: Option<u32>,
    /// Wall-time budget, like "10m".
    pub budget: Option<String>,
    /// Rounds in a row with nothing new before stopping (default 8).
    pub until_novelty: Option<u32>,
    pub keep_going: Option<bool>,
    pub explore_seed: Option<u64>,
    pub j: Option<u32>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunRef {
    pub config: String,
    /// The seed (optional with faults: the file names it).
    pub seed: Option<u64>,
    /// A schedule file (a failure folder's faults.json).
    pub faults: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct InspectParams {
    pub config: String,
    pub seed: Option<u64>,
    pub faults: Option<String>,
    /// Only these node instances, comma-separated.
    pub node: Option<String>,
    /// Only these event kinds, comma-separated (output, property, fault, crash, restart, start, exit, fsync, disk, failure, setup, branch, net, other).
    pub kind: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ShrinkParams {
    pub config: String,
    pub seed: Option<u64>,
    pub faults: Option<String>,
    pub j: Option<u32>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CauseParams {
    pub config: String,
    pub seed: Option<u64>,
    pub faults: Option<String>,
    pub moments: Option<u32>,
    pub children: Option<u32>,
    pub j: Option<u32>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PinParams {
    pub config: String,
    pub seed: Option<u64>,
    pub faults: Option<String>,
    /// The pin's name (default seed-<n>-<signature>).
    pub name: Option<String>,
}

#[derive(Clone, Default)]
pub struct Seedfall {
    jobs: Arc<Jobs>,
}

fn opt<T: ToString>(args: &mut Vec<String>, flag: &str, v: Option<T>) {
    if let Some(v) = v {
        args.push(flag.to_string());
        args.push(v.to_string());
    }
}

fn run_ref(args: &mut Vec<String>, seed: Option<u64>, faults: Option<String>) {
    opt(args, "--seed", seed);
    opt(args, "--faults", faults);
}

fn text(s: String) -> ContentBlock {
    ContentBlock::text(s)
}

impl Seedfall {
    /// Runs `seedfall <args>`; turns its output into a tool result.
    async fn call(&self, ctx: RequestContext<RoleServer>, args: Vec<String>, json_out: bool, summary: impl FnOnce(&Value) -> String) -> CallToolResult {
        let token = self.jobs.next_token();
        let progress_token = ctx.meta.get_progress_token();
        let peer = ctx.peer.clone();
        let (tx, mut rx) = tokio::sync::mpsc::channel::<Event>(256);
        let jobs = self.jobs.clone();
        let job_token = token.clone();
        let job = tokio::spawn(async move {
            jobs.run(&job_token, "mcp tool", None, args, |e| {
                let _ = tx.try_send(e);
            })
            .await
        });
        let forward = async {
            while let Some(e) = rx.recv().await {
                let Some(pt) = progress_token.clone() else { continue };
                let (progress, total, message) = match e {
                    Event::Progress { done, total } => (done as f64, Some(total as f64), format!("{done}/{total} runs")),
                    Event::Round(r) => (r["round"].as_f64().unwrap_or(0.0), None, format!("round {}: corpus {}, {} failures", r["round"], r["corpus"], r["failures"])),
                };
                let mut p = ProgressNotificationParam::new(pt, progress).with_message(message);
                p.total = total;
                let _ = peer.notify_progress(p).await;
            }
        };
        tokio::select! {
            _ = ctx.ct.cancelled() => {
                self.jobs.cancel(&token);
            }
            _ = forward => {}
        }
        let out = match job.await {
            Ok(Ok(out)) => out,
            Ok(Err(e)) => return CallToolResult::error(vec![text(e)]),
            Err(e) => return CallToolResult::error(vec![text(format!("the job failed: {e}"))]),
        };
        if out.cancelled {
            return CallToolResult::error(vec![text("cancelled".into())]);
        }
        if out.code == 2 || (!json_out && out.code != 0) {
            let why = if out.stderr.trim().is_empty() { out.stdout.trim().to_string() } else { out.stderr.trim().to_string() };
            return CallToolResult::error(vec![text(why)]);
        }
        let value = if json_out {
            if out.stdout.trim_start().starts_with('{') || out.stdout.trim_start().starts_with('[') {
                serde_json::from_str(&out.stdout).unwrap_or(Value::String(out.stdout.clone()))
            } else {
                Value::Array(out.stdout.lines().filter_map(|l| serde_json::from_str(l).ok()).collect())
            }
        } else {
            json!({ "output": out.stdout })
        };
        let value = json!({ "exit": out.code, "result": value });
        let mut result = CallToolResult::structured(value.clone());
        result.content = vec![text(summary(&value["result"]))];
        result
    }
}

/// `200 runs, 18 failed in 1 finding; bank: panic: account N overdrawn...
/// (18 seeds, shortest seed 142, schedule .../faults.json)`
fn failures_summary(v: &Value) -> String {
    let failures = v["failures"].as_array().map(|f| f.len()).unwrap_or(0);
    let mut s = format!("{} runs, {failures} failed", v["runs"]);
    if let Some(findings) = v["failure_findings"].as_array().filter(|f| !f.is_empty()) {
        s.push_str(&format!(" in {} finding{}", findings.len(), if findings.len() == 1 { "" } else { "s" }));
        for f in findings.iter().take(FINDINGS_SUMMARIZED_MAX) {
            let seed = &f["shortest"][0]["seed"];
            s.push_str(&format!("; {} ({} seeds, shortest seed {seed}", f["title"].as_str().unwrap_or(""), f["count"]));
            let folder = v["failures"].as_array().into_iter().flatten().find(|x| x["seed"] == *seed).and_then(|x| x["folder"].as_str());
            if let Some(folder) = folder {
                s.push_str(&format!(", schedule {folder}/faults.json"));
            }
            s.push(')');
        }
    } else if let Some(f) = v["failures"].as_array().and_then(|f| f.first()) {
        // A replay: one run.
        s.push_str(&format!("; first: seed {} {}: {}", f["seed"], f["nodes"][0]["node"].as_str().unwrap_or(""), f["nodes"][0]["message"].as_str().unwrap_or("")));
    }
    if let Some(stop) = v["exploration"]["stop"].as_str().or(v["stop"].as_str()) {
        s.push_str(&format!("; stopped: {stop}"));
    }
    s
}

/// Findings named in a run's one-line summary (all are in its JSON).
const FINDINGS_SUMMARIZED_MAX: usize = 5;

#[tool_router(server_handler)]
impl Seedfall {
    #[tool(description = "Sweep a range of seeds of a seedfall config; returns per-failure records (seed, node, message, schedule folder), the property table and findings, rates, and with until_novelty the growth table.")]
    async fn seedfall_run(&self, Parameters(p): Parameters<RunParams>, ctx: RequestContext<RoleServer>) -> CallToolResult {
        if let Some(faults) = p.faults {
            let args = vec!["replay".into(), "-c".into(), p.config, "--faults".into(), faults, "--json".into()];
            return self.call(ctx, args, true, |v| format!("{} at {} ns", v["verdict"], v["end_time_ns"])).await;
        }
        let mut args = vec!["run".into(), "-c".into(), p.config, "--json".into(), "--progress".into()];
        opt(&mut args, "--seeds", p.seeds);
        opt(&mut args, "-j", p.j);
        opt(&mut args, "--until-novelty", p.until_novelty);
        opt(&mut args, "--batch", p.batch);
        self.call(ctx, args, true, failures_summary).await
    }

    #[tool(description = "Feedback-guided exploration: keeps runs that reach something new and branches from them. Returns the rounds, the stop reason and any failure with its schedule.")]
    async fn seedfall_explore(&self, Parameters(p): Parameters<ExploreParams>, ctx: RequestContext<RoleServer>) -> CallToolResult {
        let mut args = vec!["explore".into(), "-c".into(), p.config, "--json".into(), "--events".into()];
        opt(&mut args, "--seeds", p.seeds);
        opt(&mut args, "--rounds", p.rounds);
        opt(&mut args, "--batch", p.batch);
        opt(&mut args, "--budget", p.budget);
        opt(&mut args, "--until-novelty", p.until_novelty);
        opt(&mut args, "--explore-seed", p.explore_seed);
        opt(&mut args, "-j", p.j);
        if p.keep_going == Some(true) {
            args.push("--keep-going".into());
        }
        self.call(ctx, args, true, failures_summary).await
    }

    #[tool(description = "Run one seed (or schedule file) again; returns the verdict, the failure, the trace hash and every event.")]
    async fn seedfall_replay(&self, Parameters(p): Parameters<RunRef>, ctx: RequestContext<RoleServer>) -> CallToolResult {
        let mut args = vec!["replay".into(), "-c".into(), p.config, "--json".into()];
        run_ref(&mut args, p.seed, p.faults);
        self.call(ctx, args, true, |v| format!("{} (trace hash {}): {}", v["verdict"], v["trace_hash"], v["failure"]["nodes"][0]["message"])).await
    }

    #[tool(description = "Reduce a failing run to the faults that matter; writes faults.shrunk.json next to the original and returns the report.")]
    async fn seedfall_shrink(&self, Parameters(p): Parameters<ShrinkParams>, ctx: RequestContext<RoleServer>) -> CallToolResult {
        let mut args = vec!["shrink".into(), "-c".into(), p.config];
        run_ref(&mut args, p.seed, p.faults);
        opt(&mut args, "-j", p.j);
        self.call(ctx, args, false, |v| v["output"].as_str().unwrap_or("").to_string()).await
    }

    #[tool(description = "The timeline of one run as events (virtual time, node instance, event), filterable by node and kind.")]
    async fn seedfall_inspect(&self, Parameters(p): Parameters<InspectParams>, ctx: RequestContext<RoleServer>) -> CallToolResult {
        let mut args = vec!["inspect".into(), "-c".into(), p.config, "--json".into()];
        run_ref(&mut args, p.seed, p.faults);
        opt(&mut args, "--node", p.node);
        opt(&mut args, "--kind", p.kind);
        self.call(ctx, args, true, |v| format!("{} events", v.as_array().map(|a| a.len()).unwrap_or(0))).await
    }

    #[tool(description = "Which faults does the failure need, and when did it become certain? Tries the run without each fault (and the necessary ones moved), then branches it at many moments after the last necessary fault; returns the necessary and incidental faults, the fraction failing per moment, the window (or null when no moment made the failure likely) and its events.")]
    async fn seedfall_cause(&self, Parameters(p): Parameters<CauseParams>, ctx: RequestContext<RoleServer>) -> CallToolResult {
        let mut args = vec!["cause".into(), "-c".into(), p.config, "--json".into()];
        run_ref(&mut args, p.seed, p.faults);
        opt(&mut args, "--moments", p.moments);
        opt(&mut args, "--children", p.children);
        opt(&mut args, "-j", p.j);
        self.call(ctx, args, true, cause_summary).await
    }

    #[tool(description = "Turn a failure into a regression that every later seedfall run replays first.")]
    async fn seedfall_pin(&self, Parameters(p): Parameters<PinParams>, ctx: RequestContext<RoleServer>) -> CallToolResult {
        let mut args = vec!["pin".into(), "-c".into(), p.config];
        run_ref(&mut args, p.seed, p.faults);
        opt(&mut args, "--name", p.name);
        self.call(ctx, args, false, |v| v["output"].as_str().unwrap_or("").to_string()).await
    }
}

/// `necessary faults: crash kv at 266488716 ns; became certain in [754776571,754776572] ns`
fn cause_summary(v: &Value) -> String {
    let necessary: Vec<String> = v["necessary_faults"].as_array().into_iter().flatten().map(|t| format!("{} {} at {} ns", t["fault"]["kind"].as_str().unwrap_or("?"), t["fault"]["node"].as_str().unwrap_or("?"), t["fault"]["at_ns"])).collect();
    let faults = if necessary.is_empty() { "no necessary fault".to_string() } else { format!("necessary faults: {}", necessary.join(", ")) };
    let window = match v["became"].as_str() {
        Some("certain") | Some("likely") => format!("became {} in {} ns", v["became"].as_str().unwrap_or(""), v["window"]),
        Some("not_for_good") => "no moment made the failure likely for good".to_string(),
        _ => "no moment made the failure likely".to_string(),
    };
    format!("{faults}; {window}")
}

/// Serves MCP on stdin/stdout until the client closes stdin.
pub fn serve_stdio() -> i32 {
    let Some(runtime) = crate::runtime("mcp") else { return 2 };
    runtime.block_on(async {
        let (transport, writer) = gate::start();
        match Seedfall::default().serve(transport).await {
            Ok(service) => {
                let _ = service.waiting().await;
                let _ = writer.await;
                0
            }
            Err(e) => {
                eprintln!("seedfall mcp: {e}");
                2
            }
        }
    })
}
