//! A disk at one moment, as a person debugging a run wants to see it: every
//! path of the cache (what reads see) beside what is durable (what the
//! medium holds now, which a crash keeps), so a report can say which file is
//! safe, which has bytes only in the cache, and which name a crash would
//! undo or bring back.
//!
//! "Durable" is the medium as it is at that moment. A crash then keeps it,
//! and may keep some of the dirty sectors too (a torn write-out): the crash
//! model, not this view, decides which.
use super::{Disk, Ino, Kind, ROOT};
use serde::Serialize;
use std::collections::BTreeSet;

/// Bound on the entries a moment lists per disk; the rest are counted.
pub const MOMENT_ENTRIES_MAX: usize = 10_000;

/// One path, in the cache, on the medium, or both.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct MomentEntry {
    pub path: String,
    pub dir: bool,
    /// `durable`: the medium holds it as reads see it. `dirty`: the name is
    /// durable, some bytes or the size are not. `new`: the name is only in
    /// the cache (a crash loses it). `replaced`: the name is durable for
    /// another file, which a crash brings back. `deleted`: gone from the
    /// cache, still durable (a crash brings it back).
    pub state: &'static str,
    /// What reads see (absent for `deleted`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hash: Option<String>,
    /// What the medium holds under this name (absent for `new`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub durable_size: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub durable_hash: Option<String>,
    /// Sectors written since the file's last fsync.
    #[serde(skip_serializing_if = "is_zero")]
    pub dirty_sectors: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Disk {
    /// Every path of the cache and of the medium, in path order, up to
    /// `MOMENT_ENTRIES_MAX`; and how many more there were.
    pub fn moment(&self) -> (Vec<MomentEntry>, usize) {
        let mut out = Vec::new();
        let mut more = 0;
        // (cache folder, durable folder, path): either side may be absent.
        let mut stack: Vec<(Option<Ino>, Option<Ino>, String)> = vec![(Some(ROOT), Some(ROOT), String::new())];
        while let Some((cache_dir, durable_dir, prefix)) = stack.pop() {
            let cached = cache_dir.and_then(|d| self.dir_entries(d, false));
            let durable = durable_dir.and_then(|d| self.dir_entries(d, true));
            let names: BTreeSet<&String> = cached.iter().flat_map(|m| m.keys()).chain(durable.iter().flat_map(|m| m.keys())).collect();
            let mut subdirs = Vec::new();
            for name in names {
                if out.len() >= MOMENT_ENTRIES_MAX {
                    more += 1;
                    continue;
                }
                let path = format!("{prefix}/{name}");
                let c = cached.and_then(|m| m.get(name)).copied();
                let d = durable.and_then(|m| m.get(name)).copied();
                let is_dir = |i: Option<Ino>| i.and_then(|i| self.inode(i).ok()).is_some_and(|n| n.is_dir());
                if is_dir(c) || (c.is_none() && is_dir(d)) {
                    let state = match (c, d) {
                        (Some(x), Some(y)) if x == y => "durable",
                        (Some(_), Some(_)) => "replaced",
                        (Some(_), None) => "new",
                        (None, _) => "deleted",
                    };
                    out.push(MomentEntry { path: path.clone(), dir: true, state, size: None, hash: None, durable_size: None, durable_hash: None, dirty_sectors: 0 });
                    subdirs.push((c, d.filter(|&d| is_dir(Some(d))), path));
                    continue;
                }
                out.push(self.file_entry(path, c, d));
            }
            stack.extend(subdirs.into_iter().rev());
        }
        out.sort_by(|a, b| a.path.cmp(&b.path));
        (out, more)
    }

    /// A folder's names in the cache, or on the medium.
    fn dir_entries(&self, dir: Ino, durable: bool) -> Option<&std::collections::BTreeMap<String, Ino>> {
        match &self.inode(dir).ok()?.kind {
            Kind::Dir { entries, durable_entries } => Some(if durable { durable_entries } else { entries }),
            Kind::File(_) => None,
        }
    }

    fn file_entry(&self, path: String, cached: Option<Ino>, durable: Option<Ino>) -> MomentEntry {
        let sector = self.sector_bytes;
        let mut e = MomentEntry { path, dir: false, state: "new", size: None, hash: None, durable_size: None, durable_hash: None, dirty_sectors: 0 };
        let file = |i: Option<Ino>| match i.and_then(|i| self.inode(i).ok()).map(|n| &n.kind) {
            Some(Kind::File(f)) => Some(f),
            _ => None,
        };
        if let Some(f) = file(cached) {
            e.size = Some(f.data.len() as u64);
            e.hash = Some(f.content_hash());
            e.dirty_sectors = f.dirty.len() as u64;
        }
        if let Some(f) = file(durable) {
            let image = f.image.to_vec(&f.data, sector);
            let mut h = crate::hash::Fnv1a::new();
            h.write(&image);
            e.durable_size = Some(image.len() as u64);
            // Comparable with `content_hash`: the same hash of the same bytes.
            e.durable_hash = Some(format!("{:016x}", h.value()));
        }
        e.state = match (cached, durable) {
            (Some(x), Some(y)) if x == y => {
                if e.hash == e.durable_hash && e.size == e.durable_size {
                    "durable"
                } else {
                    "dirty"
                }
            }
            (Some(_), Some(_)) => "replaced",
            (Some(_), None) => "new",
            (None, _) => "deleted",
        };
        e
    }
}
