//! Exploration shards (`explore -shard i/n`): what a shard records for the
//! merge, and the merge's output (the merge itself is
//! `seedfall_search::merge::explore`).
use crate::output;
use seedfall_search::explore::ExploreResult;
use seedfall_search::finding::{Findings, Signature};
use seedfall_search::merge::explore::ExploreMerge;
use seedfall_search::shard_result::{self, FailedRun, Read, ShardBlock};
use seedfall_search::sweep_result::{place_text, Block, Place};
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
    ShardBlock { keep: seedfall_search::kept::KEEP_MAX, runs, blocks, places, ..ShardBlock::new(shard, shard_result::identity("explore", project, options), seeds_run, &project.program.config.name) }
}

pub fn explore_cases(project: &Project, result: &ExploreResult, folders: &[Option<PathBuf>]) -> Vec<crate::junit::Case> {
    let (found, blocks, places) = facts(project, result, folders);
    let config = output::relative(&project.program.config.path);
    let name = &project.program.config.name;
    let facts = crate::junit::Facts { config: &config, name, found: &found, blocks: &blocks, table: &result.properties, places: &places, pins: None };
    crate::junit::cases(&facts, false)
}

/// Prints the merge of an exploration's shards; writes `-json` and `-junit`.
pub fn merge(reads: &[Read], json: Option<&str>, junit: Option<&Path>, corpus: Option<&Path>) -> Result<i32, String> {
    let m = seedfall_search::merge::explore::merge(reads, corpus)?;
    let ExploreMerge { config, name, shards, runs, found, blocks, places, table, failures, unconfirmed, corpus, gathered, absent } = &m;
    for d in absent {
        eprintln!("seedfall merge: the corpus {d} is not here: its entries are not gathered");
    }
    if corpus.is_none() {
        eprintln!("seedfall merge: {config} is not here and no -corpus was given: the shards' corpora are not gathered");
    }
    let code = i32::from(!(failures.is_empty() && unconfirmed.is_empty()));
    let text = json != Some("");
    if let Some(dest) = json {
        let properties: Vec<_> = table.by_message.values().collect();
        let doc = serde_json::json!({
            "version": seedfall_search::shard_result::EXPLORE_JSON_VERSION, "seedfall": env!("CARGO_PKG_VERSION"), "command": "explore", "config": config, "runs": runs, "shards": shards,
            "failures": failures, "unconfirmed_failures": unconfirmed, "failure_findings": found.ordered(),
            "properties": properties, "findings": table.findings(),
            "corpus": corpus.as_deref().map(output::relative), "corpus_entries_gathered": gathered,
        });
        crate::sweep_report::emit_json(dest, &doc)?;
    }
    if let Some(path) = junit {
        let facts = crate::junit::Facts { config, name, found, blocks, table, places, pins: None };
        let suite = format!("seedfall explore {config} ({} shards)", reads.len());
        crate::junit::write(path, &crate::junit::document(&suite, 0.0, &crate::junit::cases(&facts, false)))?;
    }
    if text {
        println!("seedfall merge: explore {config}, {} shard{}", reads.len(), if reads.len() == 1 { "" } else { "s" });
        for s in shards {
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
            println!("corpus: {gathered} new entr{} gathered into {}", if *gathered == 1 { "y" } else { "ies" }, output::relative(dir));
        }
        let place = |t: &seedfall_search::properties::PropertyTally| place_text(places, t);
        print!("{}", output::property_table(table, &place));
        for f in &table.findings() {
            println!("{}", output::finding_line(f, &place));
        }
        println!("{runs} runs over {} shards, {} failing in {} finding{}", reads.len(), failures.len(), found.by_id.len(), if found.by_id.len() == 1 { "" } else { "s" });
    }
    Ok(code)
}
