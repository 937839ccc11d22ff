//! The merge of a sweep's shards (`run -shard i/n`): the facts the
//! unsharded run would have, and its folders settled as it would settle
//! them.
use crate::properties::{PropertyTable, PropertyTally};
use crate::session::SweepSession;
use crate::shard_result::Read;
use crate::sweep_result::{FailureJson, SweepResult};
use crate::{SeedRange, SweepSummary};
use std::path::Path;

/// Merges the shards (in shard order) into the sweep's result, its
/// failures in seed order. What is read is taken out of the shards
/// (their text, their runs), so the merge holds each failing run about once.
pub fn merge(reads: &mut [Read]) -> Result<SweepResult, String> {
    let config: String = reads[0].field("config")?;
    let seeds: String = reads[0].field("seeds")?;
    let range = SeedRange::parse(&seeds).map_err(|e| format!("{}: $.seeds: {e}", reads[0].file))?;
    let keep = reads[0].block.keep;
    let mut failures: Vec<FailureJson> = Vec::new();
    let mut runs = Vec::new();
    let mut table = PropertyTable::default();
    let mut places = std::collections::BTreeMap::new();
    let mut summary = SweepSummary::default();
    let mut hashes: Option<Vec<(u64, String)>> = Some(Vec::new());
    let mut jobs = 0usize;
    let mut pins = crate::pins::PinReport::default();
    let mut shard_blocks = Vec::new();
    for r in reads.iter_mut() {
        let theirs: String = r.field("seeds")?;
        if theirs != seeds {
            return Err(format!("{}: $.seeds: the first shard ran seeds {seeds}, this one {theirs} (shards of one sweep share its range)", r.file));
        }
        let mine: Vec<FailureJson> = r.field("failures")?;
        r.doc.remove("failures");
        let s: SweepSummary = r.field("totals")?;
        check_shard(r, range, &mine, &s)?;
        failures.extend(mine);
        runs.append(&mut r.block.runs);
        for t in r.field::<Vec<PropertyTally>>("properties")? {
            table.add_tally(t);
        }
        for (m, p) in &r.block.places {
            places.entry(m.clone()).or_insert_with(|| p.clone());
        }
        summary.add(&s);
        match (&mut hashes, r.field::<Option<Vec<(u64, String)>>>("trace_hashes")?) {
            (Some(all), Some(h)) => all.extend(h),
            _ => hashes = None,
        }
        jobs += r.field::<usize>("jobs")?;
        if r.block.pins_replayed {
            pins = r.field("pins")?;
        }
        shard_blocks.extend(std::mem::take(&mut r.block.blocks).into_values());
    }
    let first = &reads[0];
    summary.finish_rates();
    // The unsharded run saw every outcome in seed order: so does the merge.
    failures.sort_by_key(|f| f.seed);
    runs.sort_by_key(|r| r.seed);
    if let Some(h) = &mut hashes {
        h.sort_by_key(|(seed, _)| *seed);
    }
    let here = super::config_here(&config);
    let index = match &here {
        Some(c) => crate::kept::index_path(c),
        None => Path::new(&config).parent().unwrap_or(Path::new("")).join(".seedfall").join("failures-index.json"),
    };
    let result = SweepResult {
        config,
        name: first.block.name.clone(),
        seeds,
        header: first.block.header.clone(),
        jobs,
        keep,
        pins,
        catalog_warnings: first.field("catalog_warnings")?,
        failures,
        failed_seeds: Vec::new(),
        found: crate::finding::Findings::new(keep),
        blocks: Default::default(),
        table,
        places,
        summary: SweepSummary::default(),
        hashes,
        pruned: 0,
        index,
    };
    let mut session = SweepSession::for_shards(here, result);
    for run in runs {
        session.add_failed_run(run);
    }
    // Each finding's block is its shortest run's, which was the shortest of
    // the shard that ran it.
    let r = &mut session.result;
    for f in r.found.by_id.values() {
        let seed = f.shortest[0].seed;
        if let Some(b) = shard_blocks.iter().find(|b| b.seed == seed) {
            r.blocks.insert(f.id.clone(), b.clone());
        }
    }
    Ok(session.finish(summary).0)
}

/// A shard's result agrees with itself: every seed it lists is one of its
/// own share of the range and is listed once, its failing runs are the
/// failures it reports, and it ran at most its share. Shards that were
/// edited or mixed up would otherwise merge into a report whose text and
/// JSON disagree (or whose counts underflow).
fn check_shard(r: &Read, range: SeedRange, failures: &[FailureJson], s: &SweepSummary) -> Result<(), String> {
    let file = &r.file;
    let share = range.with_shard(Some(r.block.shard()));
    let owned = |seed: u64, at: &str| -> Result<(), String> {
        if !share.contains(seed) {
            return Err(format!("{file}: {at}: seed {seed} is not in shard {} of seeds {range}", r.block.shard()));
        }
        Ok(())
    };
    if s.runs > share.len() {
        return Err(format!("{file}: $.totals.runs: {} runs, but shard {} of seeds {range} holds {} seeds", s.runs, r.block.shard(), share.len()));
    }
    if s.failures > s.runs {
        return Err(format!("{file}: $.totals.failures: {} failures in {} runs", s.failures, s.runs));
    }
    if failures.len() as u64 != s.failures || r.block.runs.len() as u64 != s.failures {
        return Err(format!("{file}: $.failures lists {} failing runs, $.shard.runs {}, and $.totals.failures says {}: they should agree", failures.len(), r.block.runs.len(), s.failures));
    }
    let mut seen = std::collections::HashSet::with_capacity(failures.len());
    for (i, f) in failures.iter().enumerate() {
        owned(f.seed, &format!("$.failures[{i}]"))?;
        if !seen.insert(f.seed) {
            return Err(format!("{file}: $.failures[{i}]: seed {} is listed twice", f.seed));
        }
    }
    for (i, run) in r.block.runs.iter().enumerate() {
        if !seen.remove(&run.seed) {
            return Err(format!("{file}: $.shard.runs[{i}]: seed {} is not among its $.failures, or is listed twice", run.seed));
        }
    }
    Ok(())
}
