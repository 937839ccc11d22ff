//! A file tree as the conformance check compares it: every path with its
//! kind, length and a digest of its bytes, in the shape `seedfall
//! crash-states` prints (FNV-1a 64, as seedfall's disk trees).
use serde::{Deserialize, Serialize};
use std::path::Path;

/// Bound on the entries one tree may hold (a litmus tree has a handful).
pub const ENTRIES_MAX: usize = 10_000;
/// Bound on the bytes of one file read for its digest.
pub const FILE_BYTES_MAX: u64 = 64 << 20;

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Entry {
    pub path: String,
    pub dir: bool,
    #[serde(default)]
    pub size: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hash: Option<String>,
}

/// A tree, or what kept it from being read.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Tree {
    Entries(Vec<Entry>),
    /// The image did not mount, or a file did not read: the first line of why.
    Broken { broken: String },
}

impl Tree {
    /// One line per tree, the key sets are compared by.
    pub fn key(&self) -> String {
        match self {
            Tree::Broken { broken } => format!("broken: {broken}"),
            Tree::Entries(es) if es.is_empty() => "(empty)".into(),
            Tree::Entries(es) => es
                .iter()
                .map(|e| if e.dir { format!("{}/", e.path) } else { format!("{} {} {}", e.path, e.size, e.hash.as_deref().unwrap_or("-")) })
                .collect::<Vec<_>>()
                .join("; "),
        }
    }
}

pub fn fnv(bytes: &[u8]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{h:016x}")
}

/// Reads the tree under `root`, leaving out what mkfs made (`lost+found`).
pub fn read(root: &Path) -> Tree {
    let mut out = Vec::new();
    match walk(root, "", &mut out) {
        Ok(()) => {
            out.sort();
            Tree::Entries(out)
        }
        Err(e) => Tree::Broken { broken: e },
    }
}

fn walk(dir: &Path, prefix: &str, out: &mut Vec<Entry>) -> Result<(), String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map_err(|e| format!("readdir {prefix}/: {e}"))?
        .map(|e| e.map(|e| e.file_name().to_string_lossy().into_owned()).map_err(|e| format!("readdir {prefix}/: {e}")))
        .collect::<Result<_, _>>()?;
    names.sort();
    for name in names {
        if prefix.is_empty() && name == "lost+found" {
            continue;
        }
        if out.len() >= ENTRIES_MAX {
            return Err(format!("more than {ENTRIES_MAX} entries"));
        }
        let path = dir.join(&name);
        let rel = format!("{prefix}/{name}");
        let meta = std::fs::symlink_metadata(&path).map_err(|e| format!("stat {rel}: {e}"))?;
        if meta.is_dir() {
            out.push(Entry { path: rel.clone(), dir: true, size: 0, hash: None });
            walk(&path, &rel, out)?;
        } else {
            if meta.len() > FILE_BYTES_MAX {
                return Err(format!("{rel}: {} bytes, more than a litmus file holds", meta.len()));
            }
            let bytes = std::fs::read(&path).map_err(|e| format!("read {rel}: {e}"))?;
            out.push(Entry { path: rel, dir: false, size: bytes.len() as u64, hash: Some(fnv(&bytes)) });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv_is_seedfalls_digest() {
        // seedfall's tree of an empty file prints cbf29ce484222325 (docs/disk.md).
        assert_eq!(fnv(b""), "cbf29ce484222325");
        assert_eq!(fnv(b"a"), "af63dc4c8601ec8c");
    }

    #[test]
    fn keys_name_paths_sizes_and_digests() {
        let t = Tree::Entries(vec![Entry { path: "/d".into(), dir: true, size: 0, hash: None }, Entry { path: "/d/f".into(), dir: false, size: 1, hash: Some(fnv(b"a")) }]);
        assert_eq!(t.key(), "/d/; /d/f 1 af63dc4c8601ec8c");
        assert_eq!(Tree::Entries(vec![]).key(), "(empty)");
    }
}
