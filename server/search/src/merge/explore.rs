//! The merge of an exploration's shards (`explore -shard i/n`): every
//! shard's failures grouped into findings, one property table over every
//! run, and the shards' corpora gathered into one, so that the next
//! exploration (sharded or not) starts from everything any shard found.
use crate::finding::Findings;
use crate::properties::{PropertyTable, PropertyTally};
use crate::shard_result::Read;
use crate::sweep_result::{Block, Place};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// An exploration's shards, merged.
pub struct ExploreMerge {
    pub config: String,
    /// The config's name.
    pub name: String,
    /// Per shard: `shard`, `runs`, `rounds`, `imported`, `stop`,
    /// `first_failure_run` (as the merged document lists them).
    pub shards: Vec<Value>,
    pub runs: u64,
    pub found: Findings,
    /// The block of each finding's first failure, by finding id.
    pub blocks: BTreeMap<String, Block>,
    pub places: BTreeMap<String, Place>,
    pub table: PropertyTable,
    pub failures: Vec<Value>,
    pub unconfirmed: Vec<Value>,
    /// Where the corpora were gathered (none when the config is not here
    /// and no folder was given), how many entries were new there, and the
    /// shard corpora that were not here.
    pub corpus: Option<PathBuf>,
    pub gathered: usize,
    pub absent: Vec<String>,
}

/// Merges the shards (in shard order); gathers their corpora into `corpus`
/// (default: the config's corpus folder, when the config is here).
pub fn merge(reads: &[Read], corpus: Option<&Path>) -> Result<ExploreMerge, String> {
    let first = &reads[0];
    let config: String = first.field("config")?;
    let mut m = ExploreMerge {
        config,
        name: first.block.name.clone(),
        shards: Vec::new(),
        runs: 0,
        found: Findings::new(crate::kept::KEEP_MAX),
        blocks: BTreeMap::new(),
        places: BTreeMap::new(),
        table: PropertyTable::default(),
        failures: Vec::new(),
        unconfirmed: Vec::new(),
        corpus: None,
        gathered: 0,
        absent: Vec::new(),
    };
    for r in reads {
        for run in &r.block.runs {
            m.found.add_run(run.seed, &run.failure, run.steps);
        }
        for (id, b) in &r.block.blocks {
            m.blocks.entry(id.clone()).or_insert_with(|| b.clone());
        }
        for (k, p) in &r.block.places {
            m.places.entry(k.clone()).or_insert_with(|| p.clone());
        }
        for t in r.field::<Vec<PropertyTally>>("properties")? {
            m.table.add_tally(t);
        }
        m.failures.extend(r.field::<Vec<Value>>("failures")?);
        m.unconfirmed.extend(r.field::<Vec<Value>>("unconfirmed_failures")?);
        let shard_runs: u64 = r.field("runs")?;
        m.runs += shard_runs;
        let rounds: Vec<Value> = r.field("rounds")?;
        let imported: u64 = rounds.iter().filter_map(|x| x.get("imported").and_then(Value::as_u64)).sum();
        m.shards.push(serde_json::json!({
            "shard": r.block.shard().to_string(),
            "runs": shard_runs,
            "rounds": rounds.len(),
            "imported": imported,
            "stop": r.field::<String>("stop")?,
            "first_failure_run": r.field::<Option<u64>>("first_failure_run")?,
        }));
    }
    m.corpus = match (corpus, super::config_here(&m.config)) {
        (Some(dir), _) => Some(dir.to_path_buf()),
        (None, Some(c)) => Some(crate::explore::corpus::default_dir(&c)),
        (None, None) => None,
    };
    if let Some(dir) = &m.corpus {
        (m.gathered, m.absent) = gather(reads, dir)?;
    }
    Ok(m)
}

/// Bound on corpus entries gathered from one shard.
const GATHER_MAX: usize = crate::explore::corpus::ENTRIES_MAX;

/// Copies every shard's corpus entries into `into` (an entry's file name is
/// its schedule's id: one already there is the same entry). Returns the
/// entries copied, and the shard corpora that were not here.
fn gather(reads: &[Read], into: &Path) -> Result<(usize, Vec<String>), String> {
    let mut copied = 0;
    let mut absent = Vec::new();
    for r in reads {
        let dir: String = r.field("corpus")?;
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
            crate::cache::write_atomic(&target, &bytes).map_err(|e| format!("cannot write {}: {e}", target.display()))?;
            copied += 1;
        }
    }
    Ok((copied, absent))
}
