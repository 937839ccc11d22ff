//! What exists at t=0 (seeded folders and files, durable from the start)
//! and the tree of a disk as `inspect -tree` and `crash-states` print it.
use super::{image, Disk, FileState, Ino, Kind, ROOT, NAME_BYTES_MAX, DISK_BYTES_MAX};
use crate::vtime::VTime;
use crate::errno::{self, Errno};
use std::collections::BTreeMap;

/// One entry of a disk's tree (`tree`): what `inspect -tree` prints.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TreeEntry {
    pub path: String,
    pub dir: bool,
    pub size: u64,
    /// FNV-1a of the content, hex (files only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hash: Option<String>,
}

impl Disk {
    /// Creates `path` (absolute) and its parents, durably: a seeded folder.
    pub fn seed_dir(&mut self, path: &str) -> Result<Ino, Errno> {
        let mut cur = ROOT;
        for name in path.split('/').filter(|c| !c.is_empty()) {
            if name == "." || name == ".." || name.len() > NAME_BYTES_MAX {
                return Err(errno::INVAL);
            }
            cur = match self.entries(cur)?.get(name) {
                Some(&next) if self.inode(next)?.is_dir() => next,
                Some(_) => return Err(errno::NOTDIR),
                None => {
                    let dir = Kind::Dir { entries: BTreeMap::new(), durable_entries: BTreeMap::new() };
                    let ino = self.alloc(dir, cur, name, VTime::ZERO)?;
                    if let Kind::Dir { entries, durable_entries } = &mut self.inode_mut(cur)?.kind {
                        entries.insert(name.to_string(), ino);
                        durable_entries.insert(name.to_string(), ino);
                    }
                    ino
                }
            };
        }
        Ok(cur)
    }

    /// Creates the file `path` (absolute) holding `bytes`, durably, with its
    /// folders: a seeded file.
    pub fn seed_file(&mut self, path: &str, bytes: &[u8]) -> Result<Ino, Errno> {
        let (dir, name) = path.trim_end_matches('/').rsplit_once('/').ok_or(errno::INVAL)?;
        if name.is_empty() || name.len() > NAME_BYTES_MAX {
            return Err(errno::INVAL);
        }
        if self.bytes_used() + bytes.len() as u64 > DISK_BYTES_MAX {
            return Err(errno::NOSPC);
        }
        let parent = self.seed_dir(dir)?;
        if self.entries(parent)?.contains_key(name) {
            return Err(errno::EXIST);
        }
        let file = FileState { data: bytes.to_vec(), image: image::Image::matching(bytes.len() as u64), zeros_from: bytes.len() as u64, ..FileState::default() };
        let usage = file.usage();
        let ino = self.alloc(Kind::File(file), parent, name, VTime::ZERO)?;
        if let Kind::Dir { entries, durable_entries } = &mut self.inode_mut(parent)?.kind {
            entries.insert(name.to_string(), ino);
            durable_entries.insert(name.to_string(), ino);
        }
        self.account(Default::default(), usage);
        Ok(ino)
    }

    /// Every path of the cache's tree in name order, with sizes and content
    /// hashes (right after a crash, the cache is what the disk kept).
    pub fn tree(&self) -> Vec<TreeEntry> {
        let mut out = Vec::new();
        let mut stack = vec![(ROOT, String::new())];
        while let Some((dir, prefix)) = stack.pop() {
            let Ok(entries) = self.entries(dir) else { continue };
            let mut subdirs = Vec::new();
            for (name, &ino) in entries {
                let Ok(i) = self.inode(ino) else { continue };
                let path = format!("{prefix}/{name}");
                match &i.kind {
                    Kind::Dir { .. } => {
                        out.push(TreeEntry { path: path.clone(), dir: true, size: 0, hash: None });
                        subdirs.push((ino, path));
                    }
                    Kind::File(f) => out.push(TreeEntry { path, dir: false, size: f.data.len() as u64, hash: Some(f.content_hash()) }),
                }
            }
            // Depth first, in name order.
            stack.extend(subdirs.into_iter().rev());
        }
        out.sort_by(|a, b| a.path.cmp(&b.path));
        out
    }
}

/// One line naming a tree: paths, sizes and digests.
pub fn tree_key(entries: &[TreeEntry]) -> String {
    if entries.is_empty() {
        return "(empty)".into();
    }
    entries
        .iter()
        .map(|e| if e.dir { format!("{}/", e.path) } else { format!("{} {} {}", e.path, e.size, e.hash.as_deref().unwrap_or("-")) })
        .collect::<Vec<_>>()
        .join("; ")
}
