//! `seedfall run`: sweep a seed range.
use crate::{load, output};
use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use seedfall_search::{SeedRange, SweepOptions};
use seedfall_sim::Verdict;
use serde::Serialize;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

#[derive(Args)]
pub struct RunArgs {
    /// The config file.
    #[arg(short = 'c', long = "config", default_value = "seedfall.json")]
    pub config: PathBuf,
    /// Seeds to run: `1-200` or `17`.
    #[arg(long, default_value = "1-100")]
    pub seeds: String,
    /// Worker threads (default: the number of cores).
    #[arg(short = 'j', long = "jobs")]
    pub jobs: Option<usize>,
    /// Print one JSON document instead of text.
    #[arg(long)]
    pub json: bool,
    /// Measure time spent in host calls (adds a little overhead); with FILE,
    /// also write a pprof profile of the guests' functions over every run.
    #[arg(long, value_name = "FILE", num_args = 0..=1, default_missing_value = "")]
    pub profile: Option<String>,
    /// With -json: include every seed's trace hash (for determinism checks).
    #[arg(long)]
    pub hashes: bool,
    /// Exit 1 when a pinned regression still fails (for CI).
    #[arg(long)]
    pub fail_on_pinned: bool,
    /// Stop once this many batches in a row added no signal or function.
    #[arg(long)]
    pub until_novelty: Option<u32>,
    /// Seeds per batch for -until-novelty.
    #[arg(long, default_value_t = 20)]
    pub batch: u64,
    /// Print `progress <done> <total>` lines on stderr (for the daemon).
    #[arg(long, hide = true)]
    pub progress: bool,
    /// Start every seed from one moment of seed -prefix-seed's run: `setup`
    /// (just after a workload reported setup complete) or a virtual time
    /// such as `2s`. From there each seed re-keys every stream by itself.
    #[arg(long = "from", value_name = "setup|TIME")]
    pub from: Option<String>,
    /// The seed whose run all seeds of -from share up to that moment.
    #[arg(long = "prefix-seed", value_name = "N", default_value_t = 1)]
    pub prefix_seed: u64,
    /// Run every seed with exactly the faults of this schedule file (a
    /// failure folder's faults.json); its seed is ignored, and each seed
    /// draws everything else (latencies, scheduling) by itself.
    #[arg(long = "faults", value_name = "FILE")]
    pub faults: Option<PathBuf>,
    #[command(flatten)]
    pub snapshots: crate::snapshots::SnapshotArgs,
    #[command(flatten)]
    pub extras: crate::report::Extras,
    #[command(flatten)]
    pub resources: crate::resources::Resources,
}

#[derive(Serialize)]
struct RunJson<'a> {
    version: u32,
    config: String,
    seeds: String,
    jobs: usize,
    runs: u64,
    passed: u64,
    failed: u64,
    seeds_per_second: f64,
    virtual_seconds_per_wall_second: f64,
    failures: Vec<output::FailureJson>,
    pins: &'a seedfall_search::pins::PinReport,
    #[serde(skip_serializing_if = "Option::is_none")]
    exploration: Option<serde_json::Value>,
    properties: Vec<seedfall_search::properties::PropertyTally>,
    findings: Vec<seedfall_search::properties::Finding>,
    /// Failing runs grouped by what failed (`finding::Signature`).
    failure_findings: Vec<&'a seedfall_search::finding::Finding>,
    catalog_warnings: &'a [String],
    #[serde(skip_serializing_if = "Option::is_none")]
    trace_hashes: Option<Vec<(u64, String)>>,
    totals: &'a seedfall_search::SweepSummary,
}

/// `-seeds`, parsed; on error, prints it and returns the exit code.
pub fn seeds_or_exit(text: &str) -> Result<SeedRange, i32> {
    SeedRange::parse(text).map_err(|e| {
        eprintln!("seedfall: -seeds: {e}");
        2
    })
}

pub fn jobs_or_default(jobs: Option<usize>) -> Result<usize, i32> {
    let n = jobs.unwrap_or_else(|| std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1));
    if n == 0 || n > seedfall_search::pool::JOBS_MAX {
        eprintln!("seedfall: -j: expected 1 to {}, found {n}", seedfall_search::pool::JOBS_MAX);
        return Err(2);
    }
    Ok(n)
}

pub fn main(a: RunArgs) -> i32 {
    let seeds = match crate::run::seeds_or_exit(&a.seeds) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let jobs = match jobs_or_default(a.jobs) {
        Ok(j) => j,
        Err(c) => return c,
    };
    if !(1..=seedfall_search::kept::KEEP_MAX).contains(&a.resources.keep_failures) {
        eprintln!("seedfall: -keep-failures: expected 1 to {}, found {}", seedfall_search::kept::KEEP_MAX, a.resources.keep_failures);
        return 2;
    }
    let profile_file = a.profile.as_ref().filter(|p| !p.is_empty()).map(PathBuf::from);
    let (project, jobs) = match load::project_for_profiling(&a.config, a.json, &a.resources, jobs, profile_file.is_some()) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let config = &project.program.config;
    let moment = match a.from.as_deref() {
        None => None,
        Some("setup") => Some(seedfall_search::snapshots::Moment::AfterSetup),
        Some(t) => match seedfall_sim::vtime::parse_duration(t) {
            Some(v) => Some(seedfall_search::snapshots::Moment::At(v.nanos())),
            None => {
                eprintln!("seedfall: -from: expected `setup` or a virtual time such as 2s or 500ms, found {t:?}");
                return 2;
            }
        },
    };
    let faults = match &a.faults {
        None => None,
        Some(_) if moment.is_some() => {
            eprintln!("seedfall: -faults and -from: give one (a -from sweep draws its faults after the prefix)");
            return 2;
        }
        Some(path) => match crate::schedule::read_file(&project, path) {
            Ok(file) if !file.branches.is_empty() || file.prefix.is_some() => {
                eprintln!("seedfall: {}: -faults on run takes a plain schedule (faults only); this one has branches or a prefix, replay it with seedfall replay -faults", path.display());
                return 2;
            }
            Ok(file) => Some(file.faults),
            Err(code) => return code,
        },
    };
    // Snapshots serve -from sweeps; a plain sweep starts every seed afresh.
    let snapshots = match moment {
        Some(_) => crate::snapshots::start(&a.snapshots, &a.config, &a.resources, &project, a.resources.edges()),
        None => None,
    };
    let prefix = match moment.map(|m| seedfall_search::sweep::prefix_point(&project.program, a.prefix_seed, m, snapshots.as_ref())) {
        None => None,
        Some(Ok(p)) => Some(p),
        Some(Err(e)) => {
            eprintln!("seedfall: {e}");
            return 2;
        }
    };
    let pins = seedfall_search::pins::replay_all(&project.program, jobs);
    let pins_failing = pins.results.iter().filter(|p| p.still_failing).count();
    if !a.json {
        if !pins.results.is_empty() {
            println!("pinned regressions ({}):", pins.results.len());
            for p in &pins.results {
                let state = if p.still_failing { "still failing" } else { "fixed" };
                println!("  {state:<14} {:<32} {}", p.name, p.expected.describe());
            }
        }
        for s in &pins.skipped {
            eprintln!("seedfall: skipped a pin: {}", output::relative_prefix(s));
        }
    }
    if !a.json {
        let n = config.instances().len();
        let from = match prefix {
            Some(p) if p.setup => format!(" from seed {}'s setup (at {})", p.seed, seedfall_sim::VTime(p.at_ns)),
            Some(p) => format!(" from seed {}'s run at {}", p.seed, seedfall_sim::VTime(p.at_ns)),
            None => String::new(),
        };
        let from = match &faults {
            Some(f) => format!("{from}, each with the {} fault{} of {}", f.len(), if f.len() == 1 { "" } else { "s" }, a.faults.as_ref().unwrap().display()),
            None => from,
        };
        println!("seedfall run: {} ({n} node instance{}), seeds {seeds}{from}, {jobs} worker{}", config.name, if n == 1 { "" } else { "s" }, if jobs == 1 { "" } else { "s" });
    }
    let bar = if std::io::stderr().is_terminal() && !a.json {
        let b = ProgressBar::with_draw_target(Some(seeds.len()), ProgressDrawTarget::stderr());
        b.set_style(ProgressStyle::with_template("{bar:30} {pos}/{len} seeds  {per_sec}  eta {eta}  {msg}").unwrap());
        b
    } else {
        ProgressBar::hidden()
    };
    if !a.json {
        for w in &project.catalog_warnings {
            eprintln!("seedfall: warning: {}", output::relative_prefix(w));
        }
    }
    let profile = match crate::profile::start(a.extras.cpuprofile.as_deref()) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let stop = AtomicBool::new(false);
    let mut table = seedfall_search::properties::PropertyTable::with_catalog(&project.program.catalog);
    let mut done = 0u64;
    let mut groups = crate::report::Groups::default();
    let mut found = seedfall_search::finding::Findings::new(a.resources.keep_failures);
    // The failure block of each finding's shortest run so far, and its folder.
    let mut blocks: std::collections::BTreeMap<String, (String, Option<PathBuf>)> = std::collections::BTreeMap::new();
    let mut failures = Vec::new();
    let mut failed_seeds = Vec::new();
    let mut hashes = Vec::new();
    if a.until_novelty == Some(0) || a.batch == 0 {
        eprintln!("seedfall: -until-novelty and -batch: expected a positive number");
        return 2;
    }
    let novelty = a.until_novelty.map(|rounds| seedfall_search::sweep::Novelty { rounds, batch: a.batch });
    let sampler = profile_file.as_ref().map(|_| crate::guest_profile::Sampler::start(project.program.engine()));
    let guest_profile = sampler.as_ref().map(|s| s.profile.clone());
    let options = SweepOptions { seeds, jobs, profile: a.profile.is_some(), mutation: None, novelty, prefix, faults, guest_profile };
    let summary = seedfall_search::sweep(&project.program, &options, snapshots.as_ref(), &stop, |outcome| {
        bar.inc(1);
        done += 1;
        if a.progress {
            eprintln!("progress {done} {}", seeds.len());
        }
        table.add(outcome);
        // A -from or -faults run of seed N passing says nothing of seed N's
        // own run. (The outcome's schedule always lists the faults applied,
        // so the sweep's options say whether they were given.)
        if outcome.verdict == Verdict::Pass && outcome.schedule.prefix.is_none() && options.faults.is_none() {
            seedfall_search::artifacts::clear_passing(config, outcome.seed);
        }
        if a.hashes {
            hashes.push((outcome.seed, format!("{:016x}", outcome.trace_hash)));
        }
        if outcome.verdict == Verdict::Fail {
            failed_seeds.push(outcome.seed);
            let added = found.add(outcome);
            bar.set_message(format!("{} failed, {} finding{}", failed_seeds.len(), found.by_id.len(), if found.by_id.len() == 1 { "" } else { "s" }));
            // Only the shortest runs of each finding get a folder.
            let folder = if added.keep {
                match a.resources.write_failure(&project, outcome) {
                    Ok(f) => Some(f),
                    Err(e) => {
                        bar.suspend(|| eprintln!("seedfall: {e}"));
                        None
                    }
                }
            } else {
                None
            };
            let signature = seedfall_search::finding::Signature::of(outcome.failure.as_ref().expect("a failing run"));
            if let Some(seed) = added.evicted {
                seedfall_search::kept::remove(config, seed, &signature);
            }
            if a.extras.report.is_some() {
                groups.add(outcome, folder.clone());
            }
            if a.json {
                let mut f = output::failure_json(&project, outcome);
                f.folder = folder.as_ref().map(|p| output::relative(p));
                failures.push(f);
            } else if found.by_id[&signature.id()].shortest[0].seed == outcome.seed {
                blocks.insert(signature.id(), (output::failure_block(&project, outcome), folder));
            }
        }
    });
    bar.finish_and_clear();
    crate::snapshots::say(snapshots.as_ref());
    drop(snapshots);
    let pruned = seedfall_search::kept::prune(config, &found);
    if !found.by_id.is_empty() {
        if let Err(e) = seedfall_search::kept::write_index(config, &seeds.to_string(), summary.runs, summary.failures, &found) {
            eprintln!("seedfall: {e}");
        }
    }
    // A failure whose folder a shorter run displaced has none.
    for f in &mut failures {
        if f.folder.as_ref().is_some_and(|p| !std::path::Path::new(p).is_dir()) {
            f.folder = None;
        }
    }
    if let (Some(p), Some(path)) = (profile, a.extras.cpuprofile.as_deref()) {
        p.finish(path);
    }
    if let (Some(s), Some(path)) = (sampler, &profile_file) {
        if let Err(e) = s.finish(path) {
            eprintln!("seedfall: {e}");
        }
    }
    let findings = table.findings();
    if let Some(path) = &a.extras.report {
        let exploration = summary.stop_reason.as_ref().map(|stop| serde_json::json!({ "rows": summary.growth, "stop": stop }));
        let input = crate::report::Input { project: &project, seeds: seeds.to_string(), summary: &summary, groups: &groups, table: &table, exploration };
        match crate::report::write(path, &input) {
            Ok(()) => eprintln!("seedfall: report written to {}", output::relative(path)),
            Err(e) => eprintln!("seedfall: {e}"),
        }
    }
    if let Err(e) = seedfall_search::properties::save_last_run(&project, &seeds.to_string(), summary.runs, summary.failures, &table) {
        eprintln!("seedfall: {e}");
    }
    if a.json {
        let doc = RunJson {
            version: 1,
            config: output::relative(&config.path),
            seeds: seeds.to_string(),
            jobs,
            runs: summary.runs,
            passed: summary.runs - summary.failures,
            failed: summary.failures,
            seeds_per_second: summary.seeds_per_second,
            virtual_seconds_per_wall_second: summary.virtual_seconds_per_wall_second,
            failures,
            pins: &pins,
            exploration: summary.stop_reason.as_ref().map(|stop| serde_json::json!({ "growth": summary.growth, "stop": stop })),
            properties: table.by_message.values().cloned().collect(),
            findings: findings.clone(),
            failure_findings: found.ordered(),
            catalog_warnings: &project.catalog_warnings,
            trace_hashes: a.hashes.then_some(hashes),
            totals: &summary,
        };
        println!("{}", serde_json::to_string_pretty(&doc).unwrap());
    } else {
        let c = output::relative(&config.path);
        for f in found.ordered() {
            let (block, folder) = blocks.get(&f.id).cloned().unwrap_or_default();
            print!("{}", output::finding_block(f, &block, folder.as_deref(), &c, a.resources.keep_failures));
        }
        if !found.by_id.is_empty() {
            let n = found.by_id.len();
            let removed = if pruned > 0 { format!("; {pruned} older folder{} of these findings removed", if pruned == 1 { "" } else { "s" }) } else { String::new() };
            println!(
                "{} failing run{} in {n} finding{}: folders of the {} shortest of each kept, every seed listed in {}{removed}",
                failed_seeds.len(),
                if failed_seeds.len() == 1 { "" } else { "s" },
                if n == 1 { "" } else { "s" },
                a.resources.keep_failures,
                output::relative(&seedfall_search::kept::index_path(config))
            );
            println!();
        }
        if !summary.growth.is_empty() {
            println!("round  runs  new signals  signals  new functions  functions");
            for g in &summary.growth {
                println!("{:>5}  {:>4}  {:>11}  {:>7}  {:>13}  {:>9}", g.round, g.runs, g.new_signals, g.signals, g.new_functions, g.functions);
            }
            println!("stopped: {}", summary.stop_reason.as_deref().unwrap_or(""));
        }
        print!("{}", output::property_table(&project, &table));
        for f in &findings {
            println!("{}", output::finding_line(&project, f));
        }
        println!("{}", output::summary_line(&summary, &failed_seeds));
    }
    if !a.json && pins_failing > 0 {
        let note = if a.fail_on_pinned { "" } else { " (pass -fail-on-pinned to fail on them)" };
        println!("{pins_failing} pinned regression{} still failing{note}", if pins_failing == 1 { "" } else { "s" });
    }
    let pins_fail = a.fail_on_pinned && pins_failing > 0;
    if summary.failures > 0 || !findings.is_empty() || pins_fail { 1 } else { 0 }
}
