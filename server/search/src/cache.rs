//! The on-disk cache of built wasm and compiled modules.
//!
//! It lives in `.seedfall/cache/` next to the config unless
//! `SEEDFALL_CACHE_DIR` names another folder (tests share one). Every file is
//! written to a temporary name and renamed into place, so a crash of seedfall
//! never leaves a half-written entry that a later run would trust.
use std::io::Write;
use std::path::{Path, PathBuf};

pub struct Cache {
    pub dir: PathBuf,
}

impl Cache {
    pub fn for_config(config_dir: &Path) -> Cache {
        let dir = match std::env::var_os("SEEDFALL_CACHE_DIR") {
            Some(d) if !d.is_empty() => PathBuf::from(d),
            _ => config_dir.join(".seedfall").join("cache"),
        };
        Cache { dir }
    }

    pub fn path(&self, kind: &str, name: &str) -> PathBuf {
        self.dir.join(kind).join(name)
    }
}

/// Writes `bytes` to `path` atomically (temp file in the same folder, fsync,
/// rename). A bare file name (`-json out.json`) is in the current folder.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    // A user's path (`-json FILE`) may name a folder: say so, never panic.
    let name = path.file_name().ok_or_else(|| std::io::Error::new(std::io::ErrorKind::InvalidInput, "it names no file"))?;
    let tmp = dir.join(format!(".{}.tmp-{}", name.to_string_lossy(), std::process::id()));
    {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
    }
    std::fs::rename(&tmp, path)
}

/// A stable 64-bit content hash (FNV-1a), printed as 16 hex digits.
pub fn hash_hex(parts: &[&[u8]]) -> String {
    let mut h = seedfall_sim::trace::TraceHash::new();
    for p in parts {
        h.write_u64(p.len() as u64);
        h.write(p);
    }
    format!("{:016x}", h.value())
}
