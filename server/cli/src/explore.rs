//! `seedfall explore`: feedback-guided search for rare failures.
use crate::{load, output};
use clap::Args;
use seedfall_search::explore::{explore, ExploreOptions, Round};
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

#[derive(Args)]
pub struct ExploreArgs {
    #[arg(short = 'c', long = "config", default_value = "seedfall.json")]
    pub config: PathBuf,
    /// Seeds of round 1.
    #[arg(long, default_value = "1-8")]
    pub seeds: String,
    /// Stop after this many rounds.
    #[arg(long)]
    pub rounds: Option<u32>,
    /// Children per round: drawn before any of them runs, so a smaller
    /// batch uses each discovery sooner and a larger one keeps more workers
    /// busy.
    #[arg(long, default_value_t = 4)]
    pub batch: usize,
    /// Stop after this much wall time (checked between rounds), like `10m`.
    #[arg(long)]
    pub budget: Option<String>,
    /// Stop after this many rounds in a row with nothing new (without it,
    /// -rounds and -budget are honoured in full; with no limit at all, a
    /// default rule that scales with the last novelty's cost applies).
    #[arg(long)]
    pub until_novelty: Option<u32>,
    /// Keep exploring after a failure.
    #[arg(long)]
    pub keep_going: bool,
    /// Seed of the exploration's own choices.
    #[arg(long, default_value_t = 1)]
    pub explore_seed: u64,
    /// Corpus folder (default .seedfall/corpus/<config>/ next to the config).
    #[arg(long)]
    pub corpus: Option<PathBuf>,
    #[arg(short = 'j', long = "jobs")]
    pub jobs: Option<usize>,
    #[command(flatten)]
    pub out: crate::sharded::ShardOutput,
    /// With -shard: a folder all shards share, through which they trade
    /// corpus entries at round boundaries (their corpora live there too).
    #[arg(long, value_name = "DIR")]
    pub sync: Option<PathBuf>,
    /// With -sync: after each round, wait for every other shard's round, so
    /// that the exploration is the same on every repetition (all shards
    /// must run at once).
    #[arg(long)]
    pub lockstep: bool,
    /// With -lockstep: how long to wait for a shard before going on
    /// without it, like `10m`.
    #[arg(long = "sync-wait", default_value = "10m")]
    pub sync_wait: String,
    /// Also write the failures and properties as JUnit XML.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    #[command(flatten)]
    pub extras: crate::report::Extras,
    /// Print each round as a `round <json>` line on stderr (for the daemon).
    #[arg(long, hide = true)]
    pub events: bool,
    #[command(flatten)]
    pub resources: crate::resources::Resources,
    #[command(flatten)]
    pub snapshots: crate::snapshots::SnapshotArgs,
}

pub fn round_line(r: &Round) -> String {
    let edges = if r.edges > 0 { format!("  edges {}", r.edges) } else { String::new() };
    format!(
        "round {:<3} runs {:<5} +{} signals ({})  +{} functions ({}){edges}  corpus {}  failures {}  {}",
        r.round,
        r.runs,
        r.new_signals.len(),
        r.signals,
        r.new_functions,
        r.functions,
        r.corpus,
        r.failures,
        output::real(r.elapsed_ms * 1_000_000)
    )
}

/// A round's children per operator, with what they yielded:
/// `fresh 2, branch 5 (+3 new), rekey 1 (1 failed)`.
pub fn operators_line(r: &Round) -> String {
    let each = r.operators.iter().filter(|o| o.yielded.children > 0).map(|o| {
        let y = &o.yielded;
        let mut notes = Vec::new();
        if y.new_signals > 0 {
            notes.push(format!("+{} new", y.new_signals));
        }
        if y.failures > 0 {
            notes.push(format!("{} failed", y.failures));
        }
        let notes = if notes.is_empty() { String::new() } else { format!(" ({})", notes.join(", ")) };
        format!("{} {}{notes}", o.operator.name(), y.children)
    });
    each.collect::<Vec<_>>().join(", ")
}

pub fn main(a: ExploreArgs) -> i32 {
    let seeds = match crate::run::seeds_or_exit(&a.seeds) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let shard = match crate::sharded::parse_or_exit(a.out.shard.as_deref()) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let seeds = seeds.with_shard(shard);
    if shard.is_none() && (a.sync.is_some() || a.lockstep) {
        eprintln!("seedfall: -sync and -lockstep are for shards: give -shard i/n too");
        return 2;
    }
    if a.lockstep && a.sync.is_none() {
        eprintln!("seedfall: -lockstep: give -sync DIR, the folder the shards trade entries through");
        return 2;
    }
    if shard.is_some() && a.extras.report.is_some() {
        eprintln!("seedfall: -shard and -report: a report covers one whole exploration; for shards, seedfall merge gives the findings and properties (-json, -junit)");
        return 2;
    }
    let sync_wait = match seedfall_sim::vtime::parse_duration(&a.sync_wait) {
        Some(d) if d.nanos() > 0 => std::time::Duration::from_nanos(d.nanos()),
        _ => {
            eprintln!("seedfall: -sync-wait: expected a duration like 10m or 30s, found \"{}\"", a.sync_wait);
            return 2;
        }
    };
    let text = a.out.text();
    let budget = match &a.budget {
        None => None,
        Some(text) => match seedfall_sim::vtime::parse_duration(text) {
            Some(d) if d.nanos() > 0 => Some(std::time::Duration::from_nanos(d.nanos())),
            _ => {
                eprintln!("seedfall: -budget: expected a duration like 10m or 30s, found \"{text}\"");
                return 2;
            }
        },
    };
    if a.rounds.is_some_and(|r| r == 0 || r > seedfall_search::explore::ROUNDS_MAX) {
        eprintln!("seedfall: -rounds: expected 1 to {}, found {}", seedfall_search::explore::ROUNDS_MAX, a.rounds.unwrap());
        return 2;
    }
    if a.until_novelty == Some(0) {
        eprintln!("seedfall: -until-novelty: expected a positive number of rounds, found 0");
        return 2;
    }
    if a.batch == 0 || a.batch > 100_000 {
        eprintln!("seedfall: -batch: expected 1 to 100000, found {}", a.batch);
        return 2;
    }
    let jobs = match crate::run::jobs_or_default(a.jobs) {
        Ok(j) => j,
        Err(c) => return c,
    };
    // Under edge probes (-coverage edges) the exploration runs another build
    // of the program; `project` (function probes) confirms, keeps and
    // reports each failure.
    let (project, jobs) = match load::project_for_mode(&a.config, !text, &a.resources, jobs, None) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let edges = if a.resources.edges() {
        match load::project_for_mode(&a.config, !text, &a.resources, jobs, Some(seedfall_sim::coverage::Mode::Edges)) {
            Ok((mut p, _)) => {
                // Its failure folders are named apart: the same seed and
                // finding under function probes is another run.
                p.program.config.name = format!("{}-edges", p.program.config.name);
                Some(p)
            }
            Err(code) => return code,
        }
    } else {
        None
    };
    let config = &project.program.config;
    // Edge mode's branch times are moments of the probed program: its
    // corpus is kept apart.
    // A shard's corpus is its own (the merge gathers them): under -sync,
    // or beside the config's own corpus.
    let corpus_dir = a.corpus.clone().unwrap_or_else(|| {
        let dir = seedfall_search::explore::corpus::default_dir(config);
        let dir = if a.resources.edges() { dir.with_file_name(format!("{}-edges", config.name)) } else { dir };
        match (shard, &a.sync) {
            (Some(s), Some(sync)) => seedfall_search::explore::exchange::shard_corpus(sync, s),
            (Some(s), None) => dir.with_file_name(format!("{}-shard-{}-of-{}", dir.file_name().unwrap_or_default().to_string_lossy(), s.index, s.count)),
            (None, _) => dir,
        }
    });
    let exchange = match (shard, &a.sync) {
        (Some(shard), Some(dir)) => Some(seedfall_search::explore::exchange::Exchange { dir: dir.clone(), shard, lockstep: a.lockstep, wait_max: sync_wait }),
        _ => None,
    };
    let opts = ExploreOptions {
        seeds,
        rounds: a.rounds,
        batch: a.batch,
        budget,
        until_novelty: a.until_novelty,
        keep_going: a.keep_going,
        explore_seed: shard.map_or(a.explore_seed, |s| s.explore_seed(a.explore_seed)),
        fresh_offset: seedfall_search::explore::children::fresh_offset(a.explore_seed),
        jobs,
        corpus_dir: corpus_dir.clone(),
        snapshot_worth_ns: a.snapshots.worth_ns(),
        exchange,
    };
    let profile = match crate::profile::start(a.extras.cpuprofile.as_deref()) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let stop = AtomicBool::new(false);
    let json = !text;
    let events = a.events;
    let (explored, confirm) = match &edges {
        Some(e) => (&e.program, Some(&project.program)),
        None => (&project.program, None),
    };
    let edges_on = edges.is_some();
    let started = std::sync::OnceLock::new();
    let start = || started.get_or_init(|| crate::snapshots::start(&a.snapshots, &a.config, &a.resources, edges.as_ref().unwrap_or(&project), edges_on)).as_ref();
    let result = explore(explored, confirm, &opts, a.snapshots.on().then_some(&start), &stop, &mut |r| {
        if events {
            seedfall_lsp::progress::write_round(r);
        }
        if json {
            return;
        }
        println!("{}", round_line(r));
        for s in r.new_signals.iter().take(12) {
            println!("    new: {s}");
        }
        if r.new_signals.len() > 12 {
            println!("    ... and {} more", r.new_signals.len() - 12);
        }
        if r.round > 1 {
            println!("    children: {}", operators_line(r));
        }
        // Only after round 1: there, every function is new.
        if r.round > 1 && !r.new_function_names.is_empty() {
            let more = r.new_functions.saturating_sub(r.new_function_names.len());
            let more = if more > 0 { format!(" and {more} more") } else { String::new() };
            println!("    new functions: {}{more}", r.new_function_names.join(", "));
        }
    });
    crate::snapshots::say_lazy(&started, &a.snapshots);
    drop(started);
    if let (Some(p), Some(path)) = (profile, a.extras.cpuprofile.as_deref()) {
        p.finish(path);
    }
    let write = |p: &seedfall_search::Project, f: &seedfall_sim::Outcome| match a.resources.write_failure(p, f) {
        Ok(folder) => Some(folder),
        Err(e) => {
            eprintln!("seedfall: {e}");
            None
        }
    };
    let folders: Vec<_> = result.failures.iter().map(|f| write(&project, f)).collect();
    // Failures that happen under edge probes only are kept too (nothing
    // found is lost); they replay with the probes (SEEDFALL_COVERAGE=edges).
    let edge_folders: Vec<_> = result.unconfirmed.iter().map(|f| write(edges.as_ref().expect("unconfirmed failures come from edge mode"), f)).collect();
    if let Some(path) = &a.extras.report {
        let mut found = seedfall_search::finding::Findings::new(seedfall_search::kept::KEEP_MAX);
        let mut shortest = std::collections::BTreeMap::new();
        for (o, folder) in result.failures.iter().zip(&folders) {
            found.add(o);
            if let Some(id) = found.shortest_id(o) {
                shortest.insert(id, crate::report::Shortest { outcome: o.clone(), folder: folder.clone() });
            }
        }
        let wall_ns = result.rounds.last().map_or(1, |r| r.elapsed_ms.max(1) * 1_000_000);
        let summary = seedfall_search::SweepSummary {
            runs: result.runs,
            failures: result.failures.len() as u64,
            wall_ns,
            seeds_per_second: result.runs as f64 / (wall_ns as f64 / 1e9),
            ..Default::default()
        };
        let rows: Vec<serde_json::Value> = result.rounds.iter().map(|r| serde_json::json!({
            "round": r.round, "runs": r.runs, "new_signals": r.new_signals.len(), "signals": r.signals, "new_functions": r.new_functions, "functions": r.functions,
        })).collect();
        let input = crate::report::Input { project: &project, seeds: seeds.to_string(), summary: &summary, found: &found, shortest: &shortest, table: &result.properties, exploration: Some(serde_json::json!({ "rows": rows, "stop": result.stop })) };
        match crate::report::write(path, &input) {
            Ok(()) => eprintln!("seedfall: report written to {}", output::relative(path)),
            Err(e) => eprintln!("seedfall: {e}"),
        }
    }
    let mut code = i32::from(!(result.failures.is_empty() && result.unconfirmed.is_empty()));
    for n in &result.exchange_notes {
        eprintln!("seedfall: -sync: {}", output::relative_prefix(n));
    }
    if let Some(dest) = &a.out.json {
        let as_json = |(o, folder): (&seedfall_sim::Outcome, &Option<std::path::PathBuf>)| {
            let mut f = output::failure_json(&project, o);
            f.folder = folder.as_ref().map(|p| output::relative(p));
            serde_json::to_value(f).unwrap()
        };
        let failures: Vec<serde_json::Value> = result.failures.iter().zip(&folders).map(as_json).collect();
        let unconfirmed: Vec<serde_json::Value> = result.unconfirmed.iter().zip(&edge_folders).map(as_json).collect();
        let properties: Vec<&seedfall_search::properties::PropertyTally> = result.properties.by_message.values().collect();
        let mut doc = serde_json::json!({
            "version": seedfall_search::shard_result::EXPLORE_JSON_VERSION, "seedfall": env!("CARGO_PKG_VERSION"), "config": output::relative(&config.path), "runs": result.runs, "first_failure_run": result.first_failure_run, "rounds": result.rounds,
            "operators": result.operators.iter().map(|(op, y)| serde_json::json!({ "operator": op, "children": y.children, "new_signals": y.new_signals, "failures": y.failures, "worth": y.worth })).collect::<Vec<_>>(),
            "stop": result.stop, "failures": failures, "unconfirmed_failures": unconfirmed, "stale_corpus_entries": result.stale, "corpus": output::relative(&corpus_dir),
            "properties": properties, "findings": result.properties.findings(),
        });
        if let Some(s) = shard {
            let block = crate::merge_explore::explore_block(&project, &result, &folders, s, options_line(&a, &seeds));
            doc["shard"] = serde_json::to_value(block).unwrap();
        }
        if let Err(e) = crate::sweep_report::emit_json(dest, &doc) {
            eprintln!("seedfall: {e}");
            code = 2;
        }
    }
    if let Some(path) = &a.junit {
        let cases = crate::merge_explore::explore_cases(&project, &result, &folders);
        let suite = format!("seedfall explore {} seeds {seeds}", output::relative(&config.path));
        let wall_s = result.rounds.last().map_or(0.0, |r| r.elapsed_ms as f64 / 1e3);
        if let Err(e) = crate::junit::write(path, &crate::junit::document(&suite, wall_s, &cases)) {
            eprintln!("seedfall: {e}");
            code = 2;
        }
    }
    if text {
        for s in &result.stale {
            eprintln!("seedfall: skipped a stale corpus entry: {}", output::relative_prefix(s));
        }
        println!();
        match result.first_failure_run {
            Some(n) => println!("stopped: {} (at run {n} of {})", result.stop, result.runs),
            None => println!("stopped: {} ({} runs)", result.stop, result.runs),
        }
        let blocks = |list: &[seedfall_sim::Outcome], folders: &[Option<std::path::PathBuf>], flags: &str| {
            for (o, folder) in list.iter().zip(folders).take(3) {
                print!("{}", output::failure_block(&project, o));
                if let Some(folder) = folder {
                    let c = output::relative(&config.path);
                    let faults = output::relative(&folder.join("faults.json"));
                    println!("replay: seedfall replay -c {c} -seed {} -faults {faults}{flags}", o.seed);
                    println!("shrink: seedfall shrink -c {c} -seed {} -faults {faults}{flags}", o.seed);
                }
            }
        };
        blocks(&result.failures, &folders, "");
        if !result.unconfirmed.is_empty() {
            println!("found under edge probes only (the same schedule passes or fails otherwise without them: the probes' fuel moves virtual time), {} kept:", result.unconfirmed.len());
            blocks(&result.unconfirmed, &edge_folders, " -coverage edges");
        }
    }
    code
}

/// The options of an exploration that change what it does, as one line:
/// its shards must agree on it.
fn options_line(a: &ExploreArgs, seeds: &seedfall_search::SeedRange) -> String {
    format!(
        "seeds={seeds} rounds={:?} batch={} budget={:?} until-novelty={:?} keep-going={} explore-seed={} sync={} lockstep={} keep-failures={} output-cap={}",
        a.rounds,
        a.batch,
        a.budget,
        a.until_novelty,
        a.keep_going,
        a.explore_seed,
        a.sync.is_some(),
        a.lockstep,
        a.resources.keep_failures,
        a.resources.output_cap.as_deref().unwrap_or("-")
    )
}
