//! `seedfall mutate`: rerun a sweep with durability guarantees weakened one
//! at a time, and say which ones the workload's checks would notice.
use crate::{load, output};
use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

#[derive(Args)]
pub struct MutateArgs {
    #[arg(short = 'c', long = "config", default_value = "seedfall.json")]
    pub config: PathBuf,
    #[arg(long, default_value = "1-100")]
    pub seeds: String,
    #[arg(short = 'j', long = "jobs")]
    pub jobs: Option<usize>,
    #[command(flatten)]
    pub out: crate::sharded::ShardOutput,
    #[command(flatten)]
    pub resources: crate::resources::Resources,
}

pub fn main(a: MutateArgs) -> i32 {
    let seeds = match crate::run::seeds_or_exit(&a.seeds) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let shard = match crate::sharded::parse_or_exit(a.out.shard.as_deref()) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let seeds = seeds.with_shard(shard);
    let text = a.out.text();
    let jobs = match crate::run::jobs_or_default(a.jobs) {
        Ok(j) => j,
        Err(c) => return c,
    };
    let (project, jobs) = match load::project_for(&a.config, !text, &a.resources, jobs) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let total = seeds.len() * (1 + seedfall_search::mutate::applicable(&project.program).len() as u64);
    let bar = if std::io::stderr().is_terminal() && text {
        let b = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
        b.set_style(ProgressStyle::with_template("{bar:30} {pos}/{len} runs  {msg}").unwrap());
        b
    } else {
        ProgressBar::hidden()
    };
    let stop = AtomicBool::new(false);
    let report = seedfall_search::mutate::mutate(&project.program, seeds, jobs, &stop, &mut |phase| bar.set_message(phase.to_string()), &mut || bar.inc(1));
    bar.finish_and_clear();
    let config = output::relative(&project.program.config.path);
    let mut doc = serde_json::json!({ "version": seedfall_search::shard_result::MUTATE_JSON_VERSION, "seedfall": env!("CARGO_PKG_VERSION"), "config": config });
    doc.as_object_mut().unwrap().extend(serde_json::to_value(&report).unwrap().as_object().unwrap().clone());
    let mut code = 0;
    if let Some(dest) = &a.out.json {
        if let Some(s) = shard {
            let options = format!("seeds={seeds} output-cap={}", a.resources.output_cap.as_deref().unwrap_or("-"));
            let block = seedfall_search::shard_result::ShardBlock::new(s, seedfall_search::shard_result::identity("mutate", &project, options), seeds.len(), &project.program.config.name);
            doc["shard"] = serde_json::to_value(block).unwrap();
        }
        if let Err(e) = crate::sweep_report::emit_json(dest, &doc) {
            eprintln!("seedfall: {e}");
            code = 2;
        }
    }
    if text {
        doc.as_object_mut().unwrap().remove("shard");
        let report: Report = serde_json::from_value(doc).expect("our own document reads back");
        print!("{}", text_of(&config, &report));
    }
    code
}

/// `seedfall mutate -json`, read back (by the text printer and the merge).
#[derive(serde::Deserialize)]
pub struct Report {
    pub seeds: String,
    pub baseline_failed_seeds: Vec<u64>,
    pub mutations: Vec<Mutation>,
}

#[derive(serde::Deserialize)]
pub struct Mutation {
    pub description: String,
    pub new_failures: Vec<u64>,
    pub killed: bool,
}

pub fn text_of(config: &str, report: &Report) -> String {
    let total = seedfall_search::SeedRange::parse(&report.seeds).map_or(0, |s| s.total());
    let mut out = format!("seedfall mutate: {config}, seeds {}\n", report.seeds);
    out.push_str(&format!("baseline: {} of {total} seeds failed\n", report.baseline_failed_seeds.len()));
    for m in &report.mutations {
        let verdict = if m.killed {
            format!("killed ({} seeds that passed now fail, first {})", m.new_failures.len(), m.new_failures[0])
        } else {
            "survived: your checks would not notice this class of bug".to_string()
        };
        out.push_str(&format!("  {:<36} {verdict}\n", m.description));
    }
    out
}
