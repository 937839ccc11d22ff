//! Power loss, and what it took, in words.
//!
//! Before the cache is thrown away, the crash compares the cache's tree with
//! the durable one: names that were created but never made durable, renames
//! and unlinks that are undone, files whose size reverts, and sectors lost or
//! torn, each with its path. Then everything not durable goes.
use super::{Disk, Ino, Kind, ROOT};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// Bound on the losses a crash lists (the rest are counted).
pub const LOSSES_MAX: usize = 64;

/// One thing a crash took (or brought back).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(tag = "loss", rename_all = "snake_case")]
pub enum Loss {
    /// Created (file or folder) and never made durable: gone.
    NameLost { path: String, dir: bool },
    /// A rename never made durable: the name is back at `from`.
    RenameUndone { from: String, to: String },
    /// An unlink or rmdir never made durable: the name is back.
    UnlinkUndone { path: String },
    /// Unsynced sectors of a file that did not reach the disk, and those a
    /// torn write kept.
    Sectors { path: String, lost: u64, torn_kept: u64 },
    /// A file's size reverts (a truncate or append that was not durable).
    SizeReverted { path: String, from: u64, to: u64 },
}

impl Loss {
    pub fn describe(&self) -> String {
        match self {
            Loss::NameLost { path, dir: false } => format!("file {path} lost (created, never made durable)"),
            Loss::NameLost { path, dir: true } => format!("folder {path} lost (created, never made durable)"),
            Loss::RenameUndone { from, to } => format!("rename undone: {to} is {from} again"),
            Loss::UnlinkUndone { path } => format!("unlink undone: {path} is back"),
            Loss::Sectors { path, lost, torn_kept: 0 } => format!("{path}: {lost} unsynced sectors lost"),
            Loss::Sectors { path, lost, torn_kept } => format!("{path}: {lost} unsynced sectors lost, {torn_kept} torn sectors kept"),
            Loss::SizeReverted { path, from, to } => format!("{path}: size back from {from} to {to} bytes"),
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CrashReport {
    pub sectors_lost: u64,
    pub sectors_torn_kept: u64,
    /// At most `LOSSES_MAX`, in path order.
    pub losses: Vec<Loss>,
    /// Losses past the bound.
    pub losses_more: u64,
}

/// Path of every inode a tree reaches, walking `durable_entries` or `entries`.
fn paths(disk: &Disk, durable: bool) -> BTreeMap<Ino, String> {
    let mut out = BTreeMap::from([(ROOT, String::new())]);
    let mut stack = vec![ROOT];
    while let Some(dir) = stack.pop() {
        let Some(Kind::Dir { entries, durable_entries }) = disk.inodes.get(&dir).map(|i| &i.kind) else { continue };
        let prefix = out[&dir].clone();
        for (name, &child) in if durable { durable_entries } else { entries } {
            if disk.inodes.contains_key(&child) && !out.contains_key(&child) {
                out.insert(child, format!("{prefix}/{name}"));
                if disk.inodes[&child].is_dir() {
                    stack.push(child);
                }
            }
        }
    }
    out
}

impl Disk {
    /// Power loss: everything not durable is lost. With `torn`, each dirty
    /// sector independently reaches the disk when `keep_sector()` says so.
    pub fn crash(&mut self, torn: bool, mut keep_sector: impl FnMut() -> bool) -> CrashReport {
        let before = paths(self, false);
        let durable = paths(self, true);
        let mut losses = Vec::new();
        let in_cache: BTreeSet<Ino> = before.keys().copied().collect();
        for (ino, path) in &before {
            match durable.get(ino) {
                None => losses.push(Loss::NameLost { path: path.clone(), dir: self.inodes[ino].is_dir() }),
                Some(was) if was != path => losses.push(Loss::RenameUndone { from: was.clone(), to: path.clone() }),
                Some(_) => {}
            }
        }
        for (ino, path) in &durable {
            if !in_cache.contains(ino) {
                losses.push(Loss::UnlinkUndone { path: path.clone() });
            }
        }
        let sector = self.sector_bytes as usize;
        let mut report = CrashReport::default();
        for (ino, inode) in self.inodes.iter_mut() {
            let Kind::File(f) = &mut inode.kind else {
                if let Kind::Dir { entries, durable_entries } = &mut inode.kind {
                    *entries = durable_entries.clone();
                }
                continue;
            };
            let (mut lost, mut kept) = (0u64, 0u64);
            let cache_size = f.data.len() as u64;
            for &s in f.dirty.iter() {
                let start = s as usize * sector;
                if torn && start < f.data.len() && keep_sector() {
                    let end = (start + sector).min(f.data.len());
                    let dest = f.misdirected.get(&s).map_or(start, |&to| to as usize * sector);
                    f.image.write(&f.data, start as u64, end as u64, dest as u64, sector as u64);
                    kept += 1;
                } else {
                    lost += 1;
                }
            }
            f.data = f.image.materialize(std::mem::take(&mut f.data), sector as u64);
            f.image = super::image::Image::matching(f.data.len() as u64);
            f.dirty.clear();
            f.misdirected.clear();
            f.pending_size = None;
            f.truncated_to_zero = false;
            f.flush_on_commit = false;
            report.sectors_lost += lost;
            report.sectors_torn_kept += kept;
            // Only files that survive the crash can say what they lost.
            if let Some(path) = durable.get(ino).filter(|_| before.contains_key(ino)) {
                if lost + kept > 0 {
                    losses.push(Loss::Sectors { path: path.clone(), lost, torn_kept: kept });
                }
                if cache_size != f.data.len() as u64 {
                    losses.push(Loss::SizeReverted { path: path.clone(), from: cache_size, to: f.data.len() as u64 });
                }
            }
        }
        self.collect_unreachable();
        self.orphans.clear();
        self.orphans_dirty = false;
        self.recount_all();
        losses.sort_by(|a, b| loss_path(a).cmp(loss_path(b)));
        report.losses_more = losses.len().saturating_sub(super::LOSSES_MAX) as u64;
        losses.truncate(super::LOSSES_MAX);
        report.losses = losses;
        report
    }

    /// Drops inodes no durable name reaches, and re-derives parent links
    /// and names from the durable tree.
    fn collect_unreachable(&mut self) {
        let mut reachable = BTreeSet::from([ROOT]);
        let mut stack = vec![ROOT];
        let mut links = Vec::new();
        while let Some(dir) = stack.pop() {
            let children: Vec<(String, Ino)> = match &self.inodes[&dir].kind {
                Kind::Dir { entries, .. } => entries.iter().map(|(n, &i)| (n.clone(), i)).collect(),
                Kind::File(_) => continue,
            };
            for (name, child) in children {
                if self.inodes.contains_key(&child) && reachable.insert(child) {
                    links.push((child, dir, name));
                    stack.push(child);
                }
            }
        }
        self.inodes.retain(|ino, _| reachable.contains(ino));
        for (child, dir, name) in links {
            if let Some(i) = self.inodes.get_mut(&child) {
                i.parent = dir;
                i.name = name;
            }
        }
        // A name may point at an inode that was never made durable: drop it.
        let live: BTreeSet<Ino> = self.inodes.keys().copied().collect();
        for inode in self.inodes.values_mut() {
            if let Kind::Dir { entries, durable_entries } = &mut inode.kind {
                entries.retain(|_, i| live.contains(i));
                durable_entries.retain(|_, i| live.contains(i));
            }
        }
    }
}

fn loss_path(l: &Loss) -> &str {
    match l {
        Loss::NameLost { path, .. } | Loss::UnlinkUndone { path } | Loss::Sectors { path, .. } | Loss::SizeReverted { path, .. } => path,
        Loss::RenameUndone { to, .. } => to,
    }
}
