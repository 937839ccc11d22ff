//! Merges of shard results (`seedfall merge FILE...`): the shards of one
//! piece of work made the unsharded answer. A sweep's merge settles folders,
//! the failures index and last-run as the unsharded run would
//! (`session::SweepSession`); an exploration's gathers the corpora; a
//! mutation run's unites failing seeds. The CLI prints what these return.
//! docs/scale-out.md.
pub mod explore;
pub mod mutate;
pub mod sweep;

use crate::shard_result::{self, Read};
use std::path::{Path, PathBuf};

/// Bound on shard result files in one merge.
pub const FILES_MAX: usize = 100_000;

/// Reads every shard result and checks they are the shards of one piece of
/// work, each once; returns them in shard order.
pub fn read_all(files: &[PathBuf]) -> Result<Vec<Read>, String> {
    if files.len() > FILES_MAX {
        return Err(format!("{} files given; at most {FILES_MAX}", files.len()));
    }
    let mut reads = Vec::with_capacity(files.len());
    for f in files {
        reads.push(shard_result::read(f)?);
    }
    let set: Vec<_> = reads.iter().map(|r| (r.file.clone(), r.block.shard(), r.block.identity.clone())).collect();
    crate::shard::check_set(&set)?;
    reads.sort_by_key(|r| r.block.index);
    Ok(reads)
}

/// The config the shards ran, when it is here: the merge writes beside it
/// as the unsharded run would.
pub fn config_here(config: &str) -> Option<seedfall_sim::Config> {
    seedfall_sim::Config::load(Path::new(config)).ok()
}
