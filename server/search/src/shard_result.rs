//! A shard's result: the command's own `-json` document with a `shard`
//! block holding what `seedfall merge` needs to give the unsharded answer
//! (docs/scale-out.md), and its reader, which checks a result before a
//! merge trusts it.
use crate::shard::{Identity, Shard};
use crate::sweep_result::{Block, Place};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use std::collections::BTreeMap;

/// Version of the `shard` block.
pub const SHARD_VERSION: u32 = 1;

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ShardBlock {
    pub version: u32,
    pub index: u32,
    pub count: u32,
    pub identity: Identity,
    /// Items (seeds, or for explore round-1 seeds) this shard ran.
    pub seeds_run: u64,
    /// The config's name.
    #[serde(default)]
    pub name: String,
    /// run: the header line without its workers.
    #[serde(default)]
    pub header: String,
    #[serde(default)]
    pub keep: usize,
    /// Only shard 1 replays the pinned regressions.
    #[serde(default)]
    pub pins_replayed: bool,
    /// run: every failing run, as findings are built from them.
    #[serde(default)]
    pub runs: Vec<FailedRun>,
    /// run: the failure block of each finding's shortest run in this shard.
    #[serde(default)]
    pub blocks: BTreeMap<String, Block>,
    /// Where each property is (the merge may not have the sources).
    #[serde(default)]
    pub places: BTreeMap<String, Place>,
}

impl ShardBlock {
    /// A block with what every command records; `run` fills in the rest.
    pub fn new(shard: Shard, identity: Identity, seeds_run: u64, name: &str) -> ShardBlock {
        ShardBlock {
            version: SHARD_VERSION,
            index: shard.index,
            count: shard.count,
            identity,
            seeds_run,
            name: name.to_string(),
            header: String::new(),
            keep: 0,
            pins_replayed: false,
            runs: Vec::new(),
            blocks: BTreeMap::new(),
            places: BTreeMap::new(),
        }
    }

    pub fn shard(&self) -> Shard {
        Shard { index: self.index, count: self.count }
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct FailedRun {
    pub seed: u64,
    pub steps: u64,
    pub failure: seedfall_sim::failure::Failure,
}

/// The identity of a piece of work, as its shards record it.
pub fn identity(command: &str, project: &crate::Project, options: String) -> Identity {
    Identity { command: command.into(), seedfall: crate::shard::build_id(), program: project.digest.clone(), options }
}

/// Versions of explore's and mutate's `-json` documents (run's is
/// `sweep_result::RUN_JSON_VERSION`).
pub const EXPLORE_JSON_VERSION: u64 = 2;
pub const MUTATE_JSON_VERSION: u64 = 1;

/// Bound on one shard result file.
pub const SHARD_BYTES_MAX: u64 = 1 << 30;

/// A shard result read back: its file, its top-level fields and the block.
pub struct Read {
    pub file: String,
    /// Each top-level field kept as its JSON text and parsed into its type
    /// only when a merge asks for it ([`Read::field`]): a shard then costs
    /// about its size in memory. A tree of `serde_json::Value`s cost up to
    /// 16 times it (a number is 32 bytes there), and copying a field out
    /// of it twice that.
    pub doc: BTreeMap<String, Box<RawValue>>,
    pub block: ShardBlock,
}

impl Read {
    /// A field of the document, read as `T` (a missing field as `null`).
    pub fn field<T: serde::de::DeserializeOwned>(&self, name: &str) -> Result<T, String> {
        let text = self.doc.get(name).map_or("null", |v| v.get());
        serde_json::from_str(text).map_err(|e| format!("{}: $.{name}: {e}", self.file))
    }

    /// The whole document as a tree, for results that are small by
    /// construction (a mutation shard holds seed lists and a table).
    pub fn value(&self) -> Result<serde_json::Value, String> {
        let mut out = serde_json::Map::new();
        for (k, v) in &self.doc {
            out.insert(
                k.clone(),
                serde_json::from_str(v.get()).map_err(|e| format!("{}: $.{k}: {e}", self.file))?,
            );
        }
        Ok(serde_json::Value::Object(out))
    }
}

/// Reads a shard result, saying which file and what is wrong with it.
pub fn read(path: &std::path::Path) -> Result<Read, String> {
    let file = path.display().to_string();
    let text = seedfall_sim::files::read_text(path, SHARD_BYTES_MAX, "the shard result").map_err(|e| format!("{file}: {e}"))?;
    let mut doc: BTreeMap<String, Box<RawValue>> =
        serde_json::from_str(&text).map_err(|e| format!("{file}: not JSON: {e}"))?;
    drop(text);
    let Some(raw) = doc.remove("shard") else {
        return Err(format!("{file}: not a shard result: it has no `shard` field (write shard results with -shard i/n -json FILE)"));
    };
    let found = serde_json::from_str::<VersionOnly>(raw.get())
        .ok()
        .and_then(|v| v.version);
    if found.as_ref().and_then(serde_json::Value::as_u64) != Some(u64::from(SHARD_VERSION)) {
        return Err(format!("{file}: $.shard.version: expected {SHARD_VERSION}, found {} (written by another seedfall)", found.map_or("nothing".to_string(), |v| v.to_string())));
    }
    let block: ShardBlock =
        serde_json::from_str(raw.get()).map_err(|e| format!("{file}: $.shard: {e}"))?;
    drop(raw);
    // Counts are checked before anything is sized by them: a count of four
    // billion would make the merge list four billion missing shards.
    let max = crate::shard::SHARDS_MAX;
    if block.count == 0 || block.count > max {
        return Err(format!("{file}: $.shard.count: expected 1 to {max}, found {}", block.count));
    }
    if block.index == 0 || block.index > block.count {
        return Err(format!("{file}: $.shard.index: expected 1 to {} (its count), found {}", block.count, block.index));
    }
    let want = match block.identity.command.as_str() {
        "run" => Some(u64::from(crate::sweep_result::RUN_JSON_VERSION)),
        "explore" => Some(EXPLORE_JSON_VERSION),
        "mutate" => Some(MUTATE_JSON_VERSION),
        _ => None,
    };
    let found = doc
        .get("version")
        .and_then(|v| serde_json::from_str::<u64>(v.get()).ok());
    if let Some(want) = want.filter(|w| found != Some(*w)) {
        return Err(format!(
            "{file}: $.version: expected {want} for a {} result, found {} (written by another seedfall)",
            block.identity.command,
            doc.get("version").map_or("nothing", |v| v.get())
        ));
    }
    Ok(Read { file, doc, block })
}

/// The one field a version check needs from an object.
#[derive(Deserialize)]
struct VersionOnly {
    version: Option<serde_json::Value>,
}
