//! `seedfall run`: sweep a seed range.
use crate::{load, output, sweep_report};
use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use seedfall_search::session::SweepSession;
use seedfall_search::shard_result::{self, ShardBlock};
use seedfall_search::sweep_result::{Block, Place, SweepResult};
use seedfall_search::{SeedRange, SweepOptions};
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
    #[command(flatten)]
    pub out: crate::sharded::ShardOutput,
    /// Also write the results as JUnit XML (a test case per finding and
    /// per property), for CI.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
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
    let seeds = match crate::sharded::parse_or_exit(a.out.shard.as_deref()) {
        Ok(shard) => seeds.with_shard(shard),
        Err(code) => return code,
    };
    if seeds.shard.is_some() && a.until_novelty.is_some() {
        eprintln!("seedfall: -shard and -until-novelty: give one (when to stop depends on what the whole sweep found; a shard cannot know it: use explore -shard)");
        return 2;
    }
    if seeds.shard.is_some() && a.extras.report.is_some() {
        eprintln!("seedfall: -shard and -report: a report is of the whole sweep: give -report to seedfall merge");
        return 2;
    }
    // With -json alone the document is the output; with -json FILE the
    // text is printed too.
    let text = a.out.text();
    let jobs = match jobs_or_default(a.jobs) {
        Ok(j) => j,
        Err(c) => return c,
    };
    if !(1..=seedfall_search::kept::KEEP_MAX).contains(&a.resources.keep_failures) {
        eprintln!("seedfall: -keep-failures: expected 1 to {}, found {}", seedfall_search::kept::KEEP_MAX, a.resources.keep_failures);
        return 2;
    }
    let profile_file = a.profile.as_ref().filter(|p| !p.is_empty()).map(PathBuf::from);
    let (project, jobs) = match load::project_for_profiling(&a.config, !text, &a.resources, jobs, profile_file.is_some()) {
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
    let shard = seeds.shard;
    // Only the first shard replays the pins: they are the same for all.
    let pins = if shard.is_none_or(|s| s.index == 1) { seedfall_search::pins::replay_all(&project.program, jobs) } else { Default::default() };
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
    let header = format!("seedfall run: {} ({n} node instance{}), seeds {seeds}{from}", config.name, if n == 1 { "" } else { "s" });
    let facts = SweepResult {
        config: output::relative(&config.path),
        name: config.name.clone(),
        seeds: seeds.to_string(),
        header,
        jobs,
        keep: a.resources.keep_failures,
        pins,
        catalog_warnings: project.catalog_warnings.clone(),
        failures: Vec::new(),
        failed_seeds: Vec::new(),
        found: seedfall_search::finding::Findings::new(a.resources.keep_failures),
        blocks: Default::default(),
        table: seedfall_search::properties::PropertyTable::with_catalog(&project.program.catalog),
        places: Default::default(),
        summary: Default::default(),
        hashes: a.hashes.then(Vec::new),
        pruned: 0,
        index: seedfall_search::kept::index_path(config),
    };
    if text {
        print!("{}", sweep_report::pins_text(&facts));
        for s in &facts.pins.skipped {
            eprintln!("seedfall: skipped a pin: {}", output::relative_prefix(s));
        }
        match shard {
            Some(s) => println!("{} (shard {s}: {} of them), {jobs} worker{}", facts.header, seeds.len(), if jobs == 1 { "" } else { "s" }),
            None => print!("{}", sweep_report::header_line(&facts)),
        }
    }
    let bar = if std::io::stderr().is_terminal() && text {
        let b = ProgressBar::with_draw_target(Some(seeds.len()), ProgressDrawTarget::stderr());
        b.set_style(ProgressStyle::with_template("{bar:30} {pos}/{len} seeds  {per_sec}  eta {eta}  {msg}").unwrap());
        b
    } else {
        ProgressBar::hidden()
    };
    if text {
        for w in &project.catalog_warnings {
            eprintln!("seedfall: warning: {}", output::relative_prefix(w));
        }
    }
    let profile = match crate::profile::start(a.extras.cpuprofile.as_deref()) {
        Ok(p) => p,
        Err(code) => return code,
    };
    if a.until_novelty == Some(0) || a.batch == 0 {
        eprintln!("seedfall: -until-novelty and -batch: expected a positive number");
        return 2;
    }
    let stop = AtomicBool::new(false);
    let mut done = 0u64;
    // With -report: each finding's shortest run, with its trace.
    let mut shortest = std::collections::BTreeMap::new();
    let novelty = a.until_novelty.map(|rounds| seedfall_search::sweep::Novelty { rounds, batch: a.batch });
    let sampler = profile_file.as_ref().map(|_| crate::guest_profile::Sampler::start(project.program.engine()));
    let guest_profile = sampler.as_ref().map(|s| s.profile.clone());
    // A -from or -faults run of seed N passing says nothing of seed N's own
    // run.
    let independent = prefix.is_none() && faults.is_none();
    let options = SweepOptions { seeds, jobs, profile: a.profile.is_some(), mutation: None, novelty, prefix, faults, guest_profile };
    let mut session = SweepSession::for_runs(config, facts, shard.is_some(), independent);
    let summary = seedfall_search::sweep(&project.program, &options, snapshots.as_ref(), &stop, |outcome| {
        bar.inc(1);
        done += 1;
        if a.progress {
            seedfall_lsp::progress::write_progress(done, seeds.len() as u64);
        }
        let added = session.add(outcome);
        if let Some(h) = &mut session.result.hashes {
            h.push((outcome.seed, format!("{:016x}", outcome.trace_hash)));
        }
        let Some(added) = added else { return };
        let failure = outcome.failure.as_ref().expect("a failing run");
        let r = &session.result;
        bar.set_message(format!("{} failed, {} finding{}", r.failed_seeds.len(), r.found.by_id.len(), if r.found.by_id.len() == 1 { "" } else { "s" }));
        // Only the shortest runs of each finding get a folder.
        let folder = if added.keep {
            match a.resources.write_failure(&project, outcome) {
                Ok(f) => {
                    session.kept_folder(&f);
                    Some(f)
                }
                Err(e) => {
                    bar.suspend(|| eprintln!("seedfall: {e}"));
                    None
                }
            }
        } else {
            None
        };
        let r = &mut session.result;
        let mut f = output::failure_json(&project, outcome);
        f.folder = folder.as_ref().map(|p| output::relative(p));
        r.failures.push(f);
        // The finding's shortest run so far gives its block (and the
        // report's timeline).
        if let Some(id) = r.found.shortest_id(outcome) {
            if a.extras.report.is_some() {
                shortest.insert(id.clone(), crate::report::Shortest { outcome: outcome.clone(), folder: folder.clone() });
            }
            let place = output::display_location(&project, failure).unwrap_or_default();
            let block = Block { seed: outcome.seed, text: output::failure_block(&project, outcome), folder: folder.as_ref().map(|p| output::relative(p)), place };
            r.blocks.insert(id, block);
        }
    });
    bar.finish_and_clear();
    crate::snapshots::say(snapshots.as_ref());
    drop(snapshots);
    for t in session.result.table.by_message.values() {
        let source = seedfall_search::properties::tally_source(&project, t).map(|s| s.recorded(config));
        session.result.places.insert(t.message.clone(), Place { text: output::tally_location(&project, t), source });
    }
    let (report, failed_runs) = session.finish(summary);
    if let (Some(p), Some(path)) = (profile, a.extras.cpuprofile.as_deref()) {
        p.finish(path);
    }
    if let (Some(s), Some(path)) = (sampler, &profile_file) {
        if let Err(e) = s.finish(path) {
            eprintln!("seedfall: {e}");
        }
    }
    if let Some(path) = &a.extras.report {
        let summary = &report.summary;
        let exploration = summary.stop_reason.as_ref().map(|stop| serde_json::json!({ "rows": summary.growth, "stop": stop }));
        let input = crate::report::Input { project: &project, seeds: seeds.to_string(), summary, found: &report.found, shortest: &shortest, table: &report.table, exploration };
        match crate::report::write(path, &input) {
            Ok(()) => eprintln!("seedfall: report written to {}", output::relative(path)),
            Err(e) => eprintln!("seedfall: {e}"),
        }
    }
    let mut code = report.exit_code(a.fail_on_pinned);
    let block = shard.filter(|_| a.out.json.is_some()).map(|s| ShardBlock {
        header: report.header.clone(),
        keep: report.keep,
        pins_replayed: s.index == 1,
        runs: failed_runs,
        blocks: report.blocks.clone(),
        places: report.places.clone(),
        ..ShardBlock::new(s, shard_result::identity("run", &project, run_options_line(&a, &seeds)), seeds.len(), &report.name)
    });
    if !sweep_report::write_outputs(&report, a.out.json.as_deref(), block, a.junit.as_deref(), a.fail_on_pinned) {
        code = 2;
    }
    if text {
        print!("{}", sweep_report::results_text(&report, a.fail_on_pinned));
        if let Some(note) = never_finished(config, &report.summary) {
            eprintln!("seedfall: note: {note}");
        }
    }
    code
}

/// A sweep whose every run lasted its whole duration while the config has
/// workload nodes: they never all exited 0. Fine for a service that runs
/// until the end; a sign of a program that waits forever when it should
/// finish.
fn never_finished(config: &seedfall_sim::Config, s: &seedfall_search::SweepSummary) -> Option<String> {
    let workload: Vec<&str> = config.nodes.iter().filter(|n| n.workload).map(|n| n.name.as_str()).collect();
    if s.runs == 0 || s.ended_at_duration < s.runs || workload.is_empty() {
        return None;
    }
    Some(format!(
        "every run lasted its whole duration ({}): the workload node{} {} never all exited 0. A node that serves until the end wants \"workload\": false; one that should finish is waiting on something (seedfall replay shows its last steps; docs/getting-started.md#when-the-first-run-fails)",
        crate::output::real(config.duration.nanos()),
        if workload.len() == 1 { "" } else { "s" },
        workload.join(", ")
    ))
}

/// The options of a sweep that change what its runs do or what it keeps,
/// as one line: shards of one sweep must agree on it.
fn run_options_line(a: &RunArgs, seeds: &SeedRange) -> String {
    let faults = a.faults.as_ref().map(|p| std::fs::read(p).map(|b| seedfall_search::cache::hash_hex(&[&b])).unwrap_or_default());
    format!(
        "seeds={seeds} from={} prefix-seed={} faults={} keep-failures={} output-cap={} hashes={}",
        a.from.as_deref().unwrap_or("-"),
        a.prefix_seed,
        faults.as_deref().unwrap_or("-"),
        a.resources.keep_failures,
        a.resources.output_cap.as_deref().unwrap_or("-"),
        a.hashes
    )
}
