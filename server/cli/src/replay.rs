//! `seedfall replay`: one seed again, with everything every node wrote.
use crate::output;
use clap::Args;
use seedfall_sim::{run, RunOptions, VTime, Verdict};
use serde::Serialize;

#[derive(Args)]
pub struct ReplayArgs {
    #[command(flatten)]
    pub run: crate::schedule::RunSpec,
    /// Print one JSON document (events, verdict, trace hash) instead of text.
    #[arg(long)]
    pub json: bool,
    /// Write a pprof profile of the guests' functions, per node instance, to
    /// FILE (go tool pprof -top FILE). The trace is the same as without.
    #[arg(long, value_name = "FILE")]
    pub profile: Option<std::path::PathBuf>,
}

#[derive(Serialize)]
struct ReplayJson<'a> {
    version: u32,
    seed: u64,
    verdict: Verdict,
    end: seedfall_sim::outcome::EndReason,
    end_time_ns: u64,
    steps: u64,
    trace_hash: String,
    failure: Option<seedfall_search::sweep_result::FailureJson>,
    /// The file-system model of each node instance's disk.
    disk_models: Vec<&'static str>,
    events: &'a [seedfall_sim::trace::TraceEvent],
}

pub fn main(a: ReplayArgs) -> i32 {
    let (project, schedule) = match a.run.load_profiling(a.json, 1, a.profile.is_some()) {
        Ok((p, s, _)) => (p, s),
        Err(code) => return code,
    };
    let sampler = a.profile.as_ref().map(|_| crate::guest_profile::Sampler::start(project.program.engine()));
    let options = RunOptions { guest_profile: sampler.as_ref().map(|s| s.profile.clone()), ..RunOptions::default() };
    let mut outcome = run(&project.program, &schedule, &options);
    if let (Some(s), Some(path)) = (sampler, &a.profile) {
        if let Err(e) = s.finish(path) {
            eprintln!("seedfall: {e}");
            return 2;
        }
    }
    seedfall_search::durability::check(&project.program, &mut outcome, &RunOptions::default());
    if a.json {
        let doc = ReplayJson {
            version: 1,
            seed: outcome.seed,
            verdict: outcome.verdict,
            end: outcome.end,
            end_time_ns: outcome.end_time.nanos(),
            steps: outcome.stats.steps,
            trace_hash: format!("{:016x}", outcome.trace_hash),
            failure: outcome.failure.as_ref().map(|_| output::failure_json(&project, &outcome)),
            disk_models: outcome.disk_models.iter().map(|m| m.name()).collect(),
            events: &outcome.trace,
        };
        println!("{}", serde_json::to_string_pretty(&doc).unwrap());
    } else {
        let width = project.program.config.instances().iter().map(|(_, n)| n.len()).max().unwrap_or(4);
        for e in &outcome.trace {
            let t = VTime(e.time_ns).to_string();
            let node = e.node.as_deref().unwrap_or("");
            let text = output::event_text(&e.kind);
            println!("{t:>16}  {node:<width$}  {text}");
        }
        println!();
        match outcome.verdict {
            Verdict::Pass => println!(
                "PASS seed {} at t={} ({} scheduler steps, {} real)",
                outcome.seed,
                outcome.end_time,
                outcome.stats.steps,
                output::real(outcome.stats.real_ns)
            ),
            Verdict::Fail => print!("{}", output::failure_block(&project, &outcome)),
        }
        println!("trace hash {:016x}", outcome.trace_hash);
    }
    if outcome.verdict == Verdict::Fail { 1 } else { 0 }
}
