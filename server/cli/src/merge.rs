//! `seedfall merge FILE...`: shard results (`-shard i/n -json FILE`) made
//! one answer. A sweep's merge prints what the unsharded run prints, writes
//! what it writes (the failures index, last-run, the folders of the
//! shortest runs only) and exits as it exits. docs/scale-out.md.
use crate::sharded::{self, Read};
use crate::sweep_report::Report;
use clap::Args;
use seedfall_search::properties::{PropertyTable, PropertyTally};
use std::path::{Path, PathBuf};

#[derive(Args)]
pub struct MergeArgs {
    /// Shard results: every shard of one piece of work, once each.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Print one JSON document instead of text; with `-json=FILE`, write it
    /// there (atomically) and print the text as well. (The `=` is required
    /// here: a file after a bare -json is a shard result.)
    #[arg(long, value_name = "FILE", num_args = 0..=1, default_missing_value = "", require_equals = true)]
    pub json: Option<String>,
    /// Also write the results as JUnit XML.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Write the sweep's triage report (HTML, or Markdown for .md): the
    /// config must be here; each finding's shortest run is replayed for it.
    #[arg(long, value_name = "FILE")]
    pub report: Option<PathBuf>,
    /// Exit 1 when a pinned regression still fails (for CI).
    #[arg(long)]
    pub fail_on_pinned: bool,
    /// explore: the corpus folder every shard's entries are gathered into
    /// (default .seedfall/corpus/<config>/ next to the config).
    #[arg(long)]
    pub corpus: Option<PathBuf>,
}

/// Bound on shard result files in one merge.
pub const FILES_MAX: usize = 100_000;

pub fn main(a: MergeArgs) -> i32 {
    if a.files.len() > FILES_MAX {
        eprintln!("seedfall merge: {} files given; at most {FILES_MAX}", a.files.len());
        return 2;
    }
    let mut reads = Vec::with_capacity(a.files.len());
    for f in &a.files {
        match sharded::read(f) {
            Ok(r) => reads.push(r),
            Err(e) => {
                eprintln!("seedfall merge: {e}");
                return 2;
            }
        }
    }
    let set: Vec<_> = reads.iter().map(|r| (r.file.clone(), r.block.shard(), r.block.identity.clone())).collect();
    if let Err(e) = seedfall_search::shard::check_set(&set) {
        eprintln!("seedfall merge: {e}");
        return 2;
    }
    reads.sort_by_key(|r| r.block.index);
    let result = match reads[0].block.identity.command.as_str() {
        "run" => merge_run(&a, &mut reads),
        "explore" => crate::merge_explore::merge(&a, &reads),
        "mutate" => crate::merge_mutate::merge(&a, &reads),
        other => Err(format!("{}: shards of `{other}`, which this seedfall cannot merge", reads[0].file)),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("seedfall merge: {e}");
            2
        }
    }
}

/// A field of a shard's document, read as `T`.
pub fn field<T: serde::de::DeserializeOwned>(r: &Read, name: &str) -> Result<T, String> {
    r.field(name)
}

/// The config the shards ran, when it is here: the merge writes beside it
/// as the unsharded run would.
pub fn config_here(config: &str) -> Option<seedfall_sim::Config> {
    seedfall_sim::Config::load(Path::new(config)).ok()
}

fn merge_run(a: &MergeArgs, reads: &mut [Read]) -> Result<i32, String> {
    let config: String = field(&reads[0], "config")?;
    let seeds: String = field(&reads[0], "seeds")?;
    let range = seedfall_search::SeedRange::parse(&seeds)
        .map_err(|e| format!("{}: $.seeds: {e}", reads[0].file))?;
    let keep = reads[0].block.keep;
    let mut failures: Vec<crate::output::FailureJson> = Vec::new();
    let mut runs = Vec::new();
    let mut table = PropertyTable::default();
    let mut places = std::collections::BTreeMap::new();
    let mut summary = seedfall_search::SweepSummary::default();
    let mut hashes: Option<Vec<(u64, String)>> = Some(Vec::new());
    let mut jobs = 0usize;
    let mut pins = seedfall_search::pins::PinReport::default();
    let mut shard_blocks = Vec::new();
    // What is read is taken out of the shard (its text, its runs), so the
    // merge holds each failing run about once.
    for r in reads.iter_mut() {
        let theirs: String = field(r, "seeds")?;
        if theirs != seeds {
            return Err(format!("{}: $.seeds: the first shard ran seeds {seeds}, this one {theirs} (shards of one sweep share its range)", r.file));
        }
        let mine: Vec<crate::output::FailureJson> = field(r, "failures")?;
        r.doc.remove("failures");
        let s: seedfall_search::SweepSummary = field(r, "totals")?;
        check_run_shard(r, range, &mine, &s)?;
        failures.extend(mine);
        runs.append(&mut r.block.runs);
        for t in field::<Vec<PropertyTally>>(r, "properties")? {
            add_tally(&mut table, t);
        }
        for (m, p) in &r.block.places {
            places.entry(m.clone()).or_insert_with(|| p.clone());
        }
        add_summary(&mut summary, &s);
        match (&mut hashes, field::<Option<Vec<(u64, String)>>>(r, "trace_hashes")?) {
            (Some(all), Some(h)) => all.extend(h),
            _ => hashes = None,
        }
        jobs += field::<usize>(r, "jobs")?;
        if r.block.pins_replayed {
            pins = field(r, "pins")?;
        }
        shard_blocks.extend(std::mem::take(&mut r.block.blocks).into_values());
    }
    let first = &reads[0];
    finish_summary(&mut summary);
    // The unsharded run saw every outcome in seed order: so does the merge.
    failures.sort_by_key(|f| f.seed);
    runs.sort_by_key(|r| r.seed);
    if let Some(h) = &mut hashes {
        h.sort_by_key(|(seed, _)| *seed);
    }
    let mut found = seedfall_search::finding::Findings::new(keep);
    for r in &runs {
        found.add_run(r.seed, &r.failure, r.steps);
    }
    // Each finding's block is its shortest run's, which was the shortest of
    // the shard that ran it.
    let mut blocks = std::collections::BTreeMap::new();
    for f in found.by_id.values() {
        let seed = f.shortest[0].seed;
        if let Some(b) = shard_blocks.iter().find(|b| b.seed == seed) {
            blocks.insert(f.id.clone(), b.clone());
        }
    }
    let here = config_here(&config);
    let index = match &here {
        Some(c) => crate::output::relative(&seedfall_search::kept::index_path(c)),
        None => Path::new(&config).parent().unwrap_or(Path::new("")).join(".seedfall").join("failures-index.json").display().to_string(),
    };
    let mut report = Report {
        config,
        name: first.block.name.clone(),
        seeds,
        header: first.block.header.clone(),
        jobs,
        keep,
        pins,
        catalog_warnings: field(first, "catalog_warnings")?,
        failures,
        failed_seeds: runs.iter().map(|r| r.seed).collect(),
        found,
        blocks,
        table,
        places,
        summary,
        hashes,
        pruned: 0,
        index,
    };
    match &here {
        Some(c) => {
            // Shards kept their own few shortest runs of each finding; of
            // those, only the sweep's shortest stay. That is the folders the
            // unsharded run keeps, so only older folders count as pruned.
            // They go once the index is rewritten (it names only the
            // shortest), so a killed merge leaves no name without a folder.
            let displaced: Vec<(u64, &seedfall_search::finding::Signature)> = runs
                .iter()
                .map(|r| (r.seed, &report.found.by_id[&seedfall_search::finding::Signature::of(&r.failure).id()]))
                .filter(|(seed, f)| !f.shortest.iter().any(|s| s.seed == *seed))
                .map(|(seed, f)| (seed, &f.signature))
                .collect();
            let names: std::collections::BTreeSet<String> = displaced.iter().filter_map(|(seed, s)| Some(seedfall_search::kept::folder(c, *seed, s).file_name()?.to_string_lossy().into_owned())).collect();
            let spare = |_: u64, name: &str| names.contains(name);
            let pruned = seedfall_search::kept::settle(c, &report.seeds, report.summary.runs, report.summary.failures, &report.found, std::time::SystemTime::now(), &spare);
            for (seed, signature) in displaced {
                seedfall_search::kept::remove(c, seed, signature);
            }
            report.pruned = pruned;
            crate::sweep_report::save_last_run(c, &report);
        }
        None => eprintln!("seedfall merge: {} is not here: failure folders, the failures index and last-run are left as the shards wrote them", report.config),
    }
    crate::sweep_report::drop_gone_folders(&mut report);
    let text = a.json.as_deref() != Some("");
    let mut code = report.exit_code(a.fail_on_pinned);
    if let Some(path) = &a.report {
        match write_report(path, &report, &runs, first) {
            Ok(()) => eprintln!("seedfall: report written to {}", crate::output::relative(path)),
            Err(e) => {
                eprintln!("seedfall merge: -report: {e}");
                code = 2;
            }
        }
    }
    if !report.write_outputs(a.json.as_deref(), None, a.junit.as_deref(), a.fail_on_pinned) {
        code = 2;
    }
    if text {
        print!("{}", report.pins_text());
        for s in &report.pins.skipped {
            eprintln!("seedfall: skipped a pin: {}", crate::output::relative_prefix(s));
        }
        print!("{}", report.header_line());
        for w in &report.catalog_warnings {
            eprintln!("seedfall: warning: {}", crate::output::relative_prefix(w));
        }
        print!("{}", report.results_text(a.fail_on_pinned));
    }
    Ok(code)
}

/// A shard's result agrees with itself: every seed it lists is one of its
/// own share of the range and is listed once, its failing runs are the
/// failures it reports, and it ran at most its share. Shards that were
/// edited or mixed up would otherwise merge into a report whose text and
/// JSON disagree (or whose counts underflow).
fn check_run_shard(
    r: &Read,
    range: seedfall_search::SeedRange,
    failures: &[crate::output::FailureJson],
    s: &seedfall_search::SweepSummary,
) -> Result<(), String> {
    let file = &r.file;
    let share = range.with_shard(Some(r.block.shard()));
    let owned = |seed: u64, at: &str| -> Result<(), String> {
        if !share.contains(seed) {
            return Err(format!("{file}: {at}: seed {seed} is not in shard {} of seeds {range}", r.block.shard()));
        }
        Ok(())
    };
    if s.runs > share.len() {
        return Err(format!(
            "{file}: $.totals.runs: {} runs, but shard {} of seeds {range} holds {} seeds",
            s.runs,
            r.block.shard(),
            share.len()
        ));
    }
    if s.failures > s.runs {
        return Err(format!(
            "{file}: $.totals.failures: {} failures in {} runs",
            s.failures, s.runs
        ));
    }
    if failures.len() as u64 != s.failures || r.block.runs.len() as u64 != s.failures {
        return Err(format!(
            "{file}: $.failures lists {} failing runs, $.shard.runs {}, and $.totals.failures says {}: they should agree",
            failures.len(),
            r.block.runs.len(),
            s.failures
        ));
    }
    let mut seen = std::collections::HashSet::with_capacity(failures.len());
    for (i, f) in failures.iter().enumerate() {
        owned(f.seed, &format!("$.failures[{i}]"))?;
        if !seen.insert(f.seed) {
            return Err(format!(
                "{file}: $.failures[{i}]: seed {} is listed twice",
                f.seed
            ));
        }
    }
    for (i, run) in r.block.runs.iter().enumerate() {
        if !seen.remove(&run.seed) {
            return Err(format!("{file}: $.shard.runs[{i}]: seed {} is not among its $.failures, or is listed twice", run.seed));
        }
    }
    Ok(())
}

/// Adds one shard's tally of a property to the merged table.
pub fn add_tally(table: &mut PropertyTable, t: PropertyTally) {
    match table.by_message.get_mut(&t.message) {
        Some(m) => {
            m.runs_hit += t.runs_hit;
            m.runs_true += t.runs_true;
            m.runs_false += t.runs_false;
            m.in_catalog |= t.in_catalog;
            if m.location.is_none() {
                m.location = t.location;
            }
        }
        None => {
            table.by_message.insert(t.message.clone(), t);
        }
    }
}

/// Adds one shard's totals. Shards run side by side: the merged wall time
/// is the longest shard's, and rates are over it.
pub fn add_summary(sum: &mut seedfall_search::SweepSummary, s: &seedfall_search::SweepSummary) {
    sum.runs += s.runs;
    sum.failures += s.failures;
    sum.wall_ns = sum.wall_ns.max(s.wall_ns);
    sum.virtual_ns += s.virtual_ns;
    sum.steps += s.steps;
    sum.run_real_ns += s.run_real_ns;
    sum.instantiate_ns += s.instantiate_ns;
    sum.host_ns += s.host_ns;
    sum.host_calls += s.host_calls;
    sum.ended_at_duration += s.ended_at_duration;
}

pub fn finish_summary(sum: &mut seedfall_search::SweepSummary) {
    let wall_s = sum.wall_ns.max(1) as f64 / 1e9;
    sum.seeds_per_second = sum.runs as f64 / wall_s;
    sum.virtual_seconds_per_wall_second = sum.virtual_ns as f64 / 1e9 / wall_s;
}

/// The unsharded run's triage report. It needs each finding's shortest
/// run with its trace, which no shard result holds: that run is replayed
/// here (it is a pure function of the program and its seed), on the
/// program the shards ran, checked by its digest.
fn write_report(path: &Path, report: &Report, runs: &[sharded::FailedRun], first: &Read) -> Result<(), String> {
    let identity = &first.block.identity;
    if !identity.options.contains(" from=- ") || !identity.options.contains(" faults=- ") {
        return Err("the shards ran with -from or -faults; a report of those is not merged (give -report to a run of the same flags)".into());
    }
    let (project, _) = crate::load::project_for(Path::new(&report.config), true, &crate::resources::Resources::default(), 1).map_err(|_| format!("cannot load {}", report.config))?;
    if project.digest != identity.program {
        return Err(format!("{} here is not the program the shards ran (its config, modules or seeded disks differ)", report.config));
    }
    let mut groups = crate::report::Groups::default();
    for f in report.found.ordered() {
        let mine: Vec<&sharded::FailedRun> = runs.iter().filter(|r| seedfall_search::finding::Signature::of(&r.failure).id() == f.id).collect();
        // As the run's groups keep it: the first run, in seed order, of the earliest failure.
        let shortest = mine.iter().min_by_key(|r| (r.failure.time_ns, r.seed)).expect("a finding has runs");
        let options = seedfall_sim::RunOptions::default();
        let mut o = seedfall_sim::run(&project.program, &seedfall_sim::Schedule::seed(shortest.seed), &options);
        seedfall_search::durability::check(&project.program, &mut o, &options);
        if o.failure.as_ref().map(|x| seedfall_search::finding::Signature::of(x).id()) != Some(f.id.clone()) {
            return Err(format!("seed {} did not fail the same way when replayed here", shortest.seed));
        }
        let folder = seedfall_search::kept::folder(&project.program.config, shortest.seed, &f.signature);
        let title = f.signature.title();
        let group = crate::report::Group {
            signature: title.clone(),
            title: title.clone(),
            seeds: mine.iter().take(crate::report::SEEDS_SHOWN_MAX).map(|r| r.seed).collect(),
            count: mine.len() as u64,
            shortest: o,
            folder: folder.is_dir().then_some(folder),
        };
        groups.by_signature.insert(title, group);
    }
    let input = crate::report::Input { project: &project, seeds: report.seeds.clone(), summary: &report.summary, groups: &groups, table: &report.table, exploration: None };
    crate::report::write(path, &input)
}
