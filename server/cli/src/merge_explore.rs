//! Exploration shards (`explore -shard i/n`): what a shard records for the
//! merge, and the merge itself: every shard's failures grouped into
//! findings, one property table over every run, and the shards' corpora
//! gathered into one, so that the next exploration (sharded or not) starts
//! from everything any shard found.
use crate::merge::{add_tally, config_here, field, MergeArgs};
use crate::output;
use crate::sharded::{FailedRun, Read, ShardBlock};
use crate::sweep_report::{Block, Place};
use seedfall_search::explore::ExploreResult;
use seedfall_search::finding::{Findings, Signature};
use seedfall_search::properties::PropertyTable;
use seedfall_search::Project;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// An exploration's failures as findings, each with the block of its first
/// failure, and where each property is.
pub fn facts(project: &Project, result: &ExploreResult, folders: &[Option<PathBuf>]) -> (Findings, BTreeMap<String, Block>, BTreeMap<String, Place>) {
    let mut found = Findings::new(seedfall_search::kept::KEEP_MAX);
    let mut blocks = BTreeMap::new();
    for (o, folder) in result.failures.iter().zip(folders) {
        let f = o.failure.as_ref().expect("a failing outcome");
        found.add_run(o.seed, f, o.stats.steps);
        blocks.entry(Signature::of(f).id()).or_insert_with(|| Block { seed: o.seed, text: output::failure_block(project, o), folder: folder.as_ref().map(|p| output::relative(p)), place: output::display_location(project, f).unwrap_or_default() });
    }
    let config = &project.program.config;
    let places = result
        .properties
        .by_message
        .values()
        .map(|t| (t.message.clone(), Place { text: output::tally_location(project, t), source: seedfall_search::properties::tally_source(project, t).map(|s| s.recorded(config)) }))
        .collect();
    (found, blocks, places)
}

pub fn explore_block(project: &Project, result: &ExploreResult, folders: &[Option<PathBuf>], shard: seedfall_search::shard::Shard, options: String) -> ShardBlock {
    let (_, blocks, places) = facts(project, result, folders);
    let runs = result.failures.iter().map(|o| FailedRun { seed: o.seed, steps: o.stats.steps, failure: o.failure.clone().expect("a failing outcome") }).collect();
    let seeds_run = result.rounds.first().map_or(0, |r| r.runs);
    ShardBlock { keep: seedfall_search::kept::KEEP_MAX, runs, blocks, places, ..ShardBlock::new(shard, crate::sharded::identity("explore", project, options), seeds_run, &project.program.config.name) }
}

pub fn explore_cases(project: &Project, result: &ExploreResult, folders: &[Option<PathBuf>]) -> Vec<crate::junit::Case> {
    let (found, blocks, places) = facts(project, result, folders);
    let config = output::relative(&project.program.config.path);
    let name = &project.program.config.name;
    let facts = crate::junit::Facts { config: &config, name, found: &found, blocks: &blocks, table: &result.properties, places: &places, pins: None };
    crate::junit::cases(&facts, false)
}

/// Bound on corpus entries gathered from one shard.
const GATHER_MAX: usize = seedfall_search::explore::corpus::ENTRIES_MAX;

/// Copies every shard's corpus entries into `into` (an entry's file name is
/// its schedule's id: one already there is the same entry). Returns the
/// entries copied, and the shard corpora that were not here.
fn gather(reads: &[Read], into: &Path) -> Result<(usize, Vec<String>), String> {
    let mut copied = 0;
    let mut absent = Vec::new();
    for r in reads {
        let dir: String = field(r, "corpus")?;
        let Ok(entries) = std::fs::read_dir(&dir) else {
            absent.push(dir);
            continue;
        };
        let mut names: Vec<PathBuf> = entries.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "json")).collect();
        names.sort();
        for p in names.into_iter().take(GATHER_MAX) {
            let target = into.join(p.file_name().expect("a listed file has a name"));
            if target.exists() {
                continue;
            }
            let bytes = seedfall_sim::files::read_bytes(&p, seedfall_sim::files::JSON_BYTES_MAX, "the corpus entry").map_err(|e| format!("{}: {e}", p.display()))?;
            seedfall_search::cache::write_atomic(&target, &bytes).map_err(|e| format!("cannot write {}: {e}", target.display()))?;
            copied += 1;
        }
    }
    Ok((copied, absent))
}

pub fn merge(a: &MergeArgs, reads: &[Read]) -> Result<i32, String> {
    if a.report.is_some() {
        return Err("-report: merges of sweep shards (seedfall run -shard) only; an exploration's merge gives its findings with -json and -junit".into());
    }
    let first = &reads[0];
    let config: String = field(first, "config")?;
    let mut found = Findings::new(seedfall_search::kept::KEEP_MAX);
    let mut blocks = BTreeMap::new();
    let mut places = BTreeMap::new();
    let mut table = PropertyTable::default();
    let mut failures: Vec<serde_json::Value> = Vec::new();
    let mut unconfirmed: Vec<serde_json::Value> = Vec::new();
    let mut shards = Vec::new();
    let mut runs = 0u64;
    for r in reads {
        for run in &r.block.runs {
            found.add_run(run.seed, &run.failure, run.steps);
        }
        for (id, b) in &r.block.blocks {
            blocks.entry(id.clone()).or_insert_with(|| b.clone());
        }
        for (m, p) in &r.block.places {
            places.entry(m.clone()).or_insert_with(|| p.clone());
        }
        for t in field::<Vec<seedfall_search::properties::PropertyTally>>(r, "properties")? {
            add_tally(&mut table, t);
        }
        failures.extend(field::<Vec<serde_json::Value>>(r, "failures")?);
        unconfirmed.extend(field::<Vec<serde_json::Value>>(r, "unconfirmed_failures")?);
        let shard_runs: u64 = field(r, "runs")?;
        runs += shard_runs;
        let rounds: Vec<serde_json::Value> = field(r, "rounds")?;
        let imported: u64 = rounds.iter().filter_map(|x| x.get("imported").and_then(serde_json::Value::as_u64)).sum();
        shards.push(serde_json::json!({
            "shard": r.block.shard().to_string(),
            "runs": shard_runs,
            "rounds": rounds.len(),
            "imported": imported,
            "stop": field::<String>(r, "stop")?,
            "first_failure_run": field::<Option<u64>>(r, "first_failure_run")?,
        }));
    }
    let corpus = match (&a.corpus, config_here(&config)) {
        (Some(dir), _) => Some(dir.clone()),
        (None, Some(c)) => Some(seedfall_search::explore::corpus::default_dir(&c)),
        (None, None) => None,
    };
    let (gathered, absent) = match &corpus {
        Some(dir) => gather(reads, dir)?,
        None => (0, Vec::new()),
    };
    for d in &absent {
        eprintln!("seedfall merge: the corpus {d} is not here: its entries are not gathered");
    }
    if corpus.is_none() {
        eprintln!("seedfall merge: {config} is not here and no -corpus was given: the shards' corpora are not gathered");
    }
    let code = i32::from(!(failures.is_empty() && unconfirmed.is_empty()));
    let text = a.json.as_deref() != Some("");
    if let Some(dest) = &a.json {
        let properties: Vec<_> = table.by_message.values().collect();
        let doc = serde_json::json!({
            "version": crate::sharded::EXPLORE_JSON_VERSION, "seedfall": env!("CARGO_PKG_VERSION"), "command": "explore", "config": config, "runs": runs, "shards": shards,
            "failures": failures, "unconfirmed_failures": unconfirmed, "failure_findings": found.ordered(),
            "properties": properties, "findings": table.findings(),
            "corpus": corpus.as_deref().map(output::relative), "corpus_entries_gathered": gathered,
        });
        crate::sweep_report::emit_json(dest, &doc)?;
    }
    if let Some(path) = &a.junit {
        let facts = crate::junit::Facts { config: &config, name: &first.block.name, found: &found, blocks: &blocks, table: &table, places: &places, pins: None };
        let suite = format!("seedfall explore {config} ({} shards)", reads.len());
        crate::junit::write(path, &crate::junit::document(&suite, 0.0, &crate::junit::cases(&facts, false)))?;
    }
    if text {
        println!("seedfall merge: explore {config}, {} shard{}", reads.len(), if reads.len() == 1 { "" } else { "s" });
        for s in &shards {
            let at = s["first_failure_run"].as_u64().map(|n| format!("; first failure at run {n}")).unwrap_or_default();
            let imported = s["imported"].as_u64().filter(|&n| n > 0).map(|n| format!(", ran {n} entries of other shards")).unwrap_or_default();
            println!("  shard {}: {} rounds, {} runs{imported}, stopped: {}{at}", s["shard"].as_str().unwrap_or(""), s["rounds"], s["runs"], s["stop"].as_str().unwrap_or(""));
        }
        println!();
        for f in found.ordered() {
            let Some(b) = blocks.get(&f.id) else { continue };
            print!("{}", b.text);
            if f.count > 1 {
                println!("  {} failing runs of this finding over the shards", f.count);
            }
            if let Some(folder) = b.folder.as_ref().filter(|p| Path::new(p).is_dir()) {
                println!("replay: seedfall replay -c {config} -seed {} -faults {folder}/faults.json", b.seed);
                println!("shrink: seedfall shrink -c {config} -seed {} -faults {folder}/faults.json", b.seed);
            }
        }
        if !unconfirmed.is_empty() {
            println!("{} failure{} found under edge probes only (see each shard's output)", unconfirmed.len(), if unconfirmed.len() == 1 { "" } else { "s" });
        }
        println!();
        if let Some(dir) = &corpus {
            println!("corpus: {gathered} new entr{} gathered into {}", if gathered == 1 { "y" } else { "ies" }, output::relative(dir));
        }
        print!("{}", output::property_table(&table, &|t| places.get(&t.message).map(|p: &Place| p.text.clone()).unwrap_or_default()));
        for f in &table.findings() {
            println!("{}", output::finding_line(f, &|t| places.get(&t.message).map(|p: &Place| p.text.clone()).unwrap_or_default()));
        }
        println!("{runs} runs over {} shards, {} failing in {} finding{}", reads.len(), failures.len(), found.by_id.len(), if found.by_id.len() == 1 { "" } else { "s" });
    }
    Ok(code)
}
