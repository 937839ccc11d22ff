//! Power loss, and what it took, in words.
//!
//! A crash makes its choices first, each through `pick(n)` (an index below
//! `n`, 0 meaning "it reached the disk"): under posix, whether each name
//! change not made durable did anyway (a rename whole), and which of its
//! recent sizes each file has; then, with torn writes, whether each dirty
//! sector inside that size was written. A sweep draws them from the `disk`
//! stream; `crash_states` enumerates them.
//!
//! Before the cache is thrown away, the crash compares the cache's tree with
//! the durable one: names that were created but never made durable, renames
//! and unlinks that are undone, files whose size reverts, and sectors lost or
//! torn, each with its path. Then everything not durable goes.
use super::{Disk, Ino, Inode, Kind, ROOT};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// The page cache's unit: the last page of a file is written whole.
const PAGE_BYTES: usize = 4096;

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
    /// Power loss: everything not durable is lost, but for what the model
    /// lets survive by chance, each chosen by `pick` (module docs). A kept
    /// sector never lengthens a file: past the size on disk it is not there.
    pub fn crash(&mut self, torn: bool, mut pick: impl FnMut(usize) -> usize) -> CrashReport {
        if self.model.uncertain() {
            self.choose_names(&mut pick);
        }
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
        let (uncertain, tears) = (self.model.uncertain(), torn && self.model.tears());
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
            if uncertain {
                // Any size the file had since its size was last durable, the
                // latest first (0: it reached the disk), the durable one last;
                // each with the least size it went through, so a file cut
                // down and grown back reads zeros past the cut.
                let durable = f.image.len();
                let mut low = durable;
                let mut sizes: Vec<(u64, u64)> = f.sizes_since.iter().map(|&s| {
                    low = low.min(s);
                    (s, low)
                }).collect();
                sizes.reverse();
                sizes.retain(|&c| c != (durable, durable));
                sizes.dedup();
                sizes.push((durable, durable));
                if sizes.len() > 1 {
                    let (len, cut) = sizes[pick(sizes.len())];
                    if cut < f.image.len() {
                        f.image.resize(&f.data, cut, sector as u64, f.zeros_from, |_| false);
                    }
                    f.image.resize(&f.data, len, sector as u64, f.zeros_from, |_| false);
                }
            }
            let on_disk = f.image.len() as usize;
            // The cache's last page reads as zeros past the end of the file,
            // and is written out so (a truncate zeroes its tail block).
            let page = PAGE_BYTES.max(sector);
            let written_to = f.data.len().div_ceil(page) * page;
            // A truncate not yet committed freed the blocks past the one it
            // cut: what was written there since went to new blocks.
            let in_place = f.truncated_to.map_or(on_disk, |t| (t as usize).div_ceil(page) * page).min(on_disk);
            // From this sector on an in-place sector cannot show (past the
            // size on disk or the cache's last page, or no tears): such runs
            // are lost whole, and draw nothing.
            let shows_below = if tears { written_to.min(in_place).div_ceil(sector) as u64 } else { 0 };
            for (a, b) in f.dirty.runs() {
                let mut next = a;
                while next < b {
                    let s = if next >= shows_below {
                        // Only a misdirected sector may still land inside.
                        let m = f.misdirected.range(next..b).next().map_or(b, |(&m, _)| m);
                        lost += m - next;
                        if m == b {
                            break;
                        }
                        m
                    } else {
                        next
                    };
                    next = s + 1;
                    let start = s as usize * sector;
                    let dest = f.misdirected.get(&s).map_or(start, |&to| to as usize * sector);
                    // Past the size on disk (or on freed blocks) nothing written shows.
                    if !tears || start >= written_to || dest >= in_place || pick(2) != 0 {
                        lost += 1;
                        continue;
                    }
                    let n = sector.min(on_disk - dest);
                    let bytes: Vec<u8> = (start..start + n).map(|i| f.data.get(i).copied().unwrap_or(0)).collect();
                    // A sector whose bytes inside the size on disk did not
                    // change (an append's sector past that size) kept nothing.
                    if !f.image.differs(&f.data, dest as u64, &bytes, sector as u64) {
                        lost += 1;
                        continue;
                    }
                    f.image.overwrite(&f.data, dest as u64, &bytes, sector as u64);
                    kept += 1;
                }
            }
            f.zeros_from = f.image.zeros_from(f.zeros_from, sector as u64);
            // A file the crash lengthens a lot grows without writing its
            // zeros (else `materialize` grows it, as it always did).
            super::data::fresh_zeros(&mut f.data, f.image.len() as usize);
            f.data = f.image.materialize(std::mem::take(&mut f.data), sector as u64);
            f.image = super::image::Image::matching(f.data.len() as u64);
            f.dirty.clear();
            f.misdirected.clear();
            f.pending_size = None;
            f.truncated_to = None;
            f.sizes_since.clear();
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

    /// posix: each change of names not made durable (by a folder fsync) may
    /// have reached the disk anyway. Changes that move the same inode (a
    /// rename: a name gone here, a name made there, a file it replaced) are
    /// one choice, so a rename survives whole or not at all.
    fn choose_names(&mut self, pick: &mut impl FnMut(usize) -> usize) {
        struct Change {
            dir: Ino,
            name: String,
            now: Option<Ino>,
        }
        let mut changes: Vec<(Change, Vec<Ino>)> = Vec::new();
        for (&dir, inode) in &self.inodes {
            let Kind::Dir { entries, durable_entries } = &inode.kind else { continue };
            let names: BTreeSet<&String> = entries.keys().chain(durable_entries.keys()).collect();
            for name in names {
                let (was, now) = (durable_entries.get(name).copied(), entries.get(name).copied());
                if was != now {
                    let inodes = was.into_iter().chain(now).collect();
                    changes.push((Change { dir, name: name.clone(), now }, inodes));
                }
            }
        }
        // Group the changes that share an inode (a small union-find).
        let mut group: Vec<usize> = (0..changes.len()).collect();
        fn root(g: &mut [usize], mut i: usize) -> usize {
            while g[i] != i {
                g[i] = g[g[i]];
                i = g[i];
            }
            i
        }
        let mut by_inode: BTreeMap<Ino, usize> = BTreeMap::new();
        for (i, (_, inodes)) in changes.iter().enumerate() {
            for ino in inodes {
                match by_inode.get(ino) {
                    Some(&j) => {
                        let (a, b) = (root(&mut group, i), root(&mut group, j));
                        group[a.max(b)] = a.min(b);
                    }
                    None => {
                        by_inode.insert(*ino, i);
                    }
                }
            }
        }
        let mut reached: BTreeMap<usize, bool> = BTreeMap::new();
        for i in 0..changes.len() {
            let g = root(&mut group, i);
            let made_it = *reached.entry(g).or_insert_with(|| pick(2) == 0);
            if made_it {
                let c = &changes[i].0;
                if let Some(Inode { kind: Kind::Dir { durable_entries, .. }, .. }) = self.inodes.get_mut(&c.dir) {
                    match c.now {
                        Some(ino) => durable_entries.insert(c.name.clone(), ino),
                        None => durable_entries.remove(&c.name),
                    };
                }
            }
        }
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
