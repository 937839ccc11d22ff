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
        // Absolute: builds run in the guest's folder (`go build -overlay`
        // names files in the cache), so a relative cache would be looked
        // for there.
        let dir = if dir.is_relative() { std::env::current_dir().map(|cwd| cwd.join(&dir)).unwrap_or(dir) } else { dir };
        Cache { dir }
    }

    pub fn path(&self, kind: &str, name: &str) -> PathBuf {
        self.dir.join(kind).join(name)
    }
}

/// Bound on the symlinks `write_atomic` follows (Linux's own is 40).
const SYMLINK_HOPS_MAX: usize = 40;

/// Writes `bytes` to `path` atomically (temp file in the same folder, fsync,
/// rename). A bare file name (`-json out.json`) is in the current folder.
///
/// Only a regular file (or a name that does not exist) is replaced. A
/// symlink is followed, and what it points to is written: renaming over the
/// link would replace the link itself (`-json /dev/stdout` would write
/// nothing to stdout and, as root, replace the system's entry). A device,
/// FIFO or socket (`/dev/null`, `/dev/full`, a pipe) is written in place,
/// since a rename would turn it into a regular file; its errors (ENOSPC from
/// `/dev/full`) are returned. A folder is an error.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write_atomic_with(path, &mut |w| w.write_all(bytes))
}

/// As [`write_atomic`], with the content written by `write` as it is made
/// (a large document need not be held whole in memory first).
pub fn write_atomic_with(
    path: &Path,
    write: &mut dyn FnMut(&mut dyn Write) -> std::io::Result<()>,
) -> std::io::Result<()> {
    // What the kernel reaches through every link: /dev/stdout is a link to
    // /proc/self/fd/1, a "magic" link to a pipe or a terminal whose text
    // (`pipe:[1234]`) names no path, so only the kernel can follow it.
    match std::fs::metadata(path) {
        Ok(m) if m.is_dir() => return Err(std::io::Error::new(std::io::ErrorKind::InvalidInput, "it is a folder")),
        Ok(m) if !m.is_file() => {
            // Devices, FIFOs, pipes: no temp file, no rename, no truncation
            // (a character device has no length to cut).
            let mut f = std::fs::OpenOptions::new().write(true).open(path)?;
            write(&mut f)?;
            return f.flush();
        }
        _ => {}
    }
    // A regular file, or none yet: the rename goes where the links lead.
    let path = follow_symlinks(path)?;
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    // A user's path (`-json FILE`) may name a folder: say so, never panic.
    let name = path.file_name().ok_or_else(|| std::io::Error::new(std::io::ErrorKind::InvalidInput, "it names no file"))?;
    // One name per writer, threads of one process included (two loads of one
    // program on two threads write the same cache entry at once); the pid
    // stays last for `tmp_owner`.
    static WRITERS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let writer = WRITERS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmp = dir.join(format!(".{}.{writer}.tmp-{}", name.to_string_lossy(), std::process::id()));
    let written = (|| {
        // Written beside the target and renamed over it: a folder that
        // cannot hold that file (/proc, a read-only mount) is said as such.
        let mut f = std::fs::File::create(&tmp).map_err(|e| std::io::Error::new(e.kind(), format!("{} cannot hold the temporary file it is written to first ({e})", dir.display())))?;
        write(&mut f)?;
        f.sync_all()
    })();
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    std::fs::rename(&tmp, &path)
}

/// `path` with every symlink of its last component resolved (a dangling
/// link gives the path it points to, which is then created). Folders on the
/// way are left as they are: renaming inside a linked folder is harmless.
fn follow_symlinks(path: &Path) -> std::io::Result<PathBuf> {
    let mut cur = path.to_path_buf();
    for _ in 0..SYMLINK_HOPS_MAX {
        match std::fs::symlink_metadata(&cur) {
            Ok(m) if m.file_type().is_symlink() => {
                let target = std::fs::read_link(&cur)?;
                cur = match cur.parent() {
                    Some(dir) if target.is_relative() => dir.join(target),
                    _ => target,
                };
            }
            _ => return Ok(cur),
        }
    }
    Err(std::io::Error::new(std::io::ErrorKind::InvalidInput, format!("more than {SYMLINK_HOPS_MAX} symlinks to follow")))
}

/// Bound on the entries of one cache folder looked at for leftovers.
const LEFTOVERS_SCAN_MAX: usize = 100_000;

/// The process a temporary name (`…tmp-<pid>`, `write_atomic`'s and the
/// builders') belongs to, if it is one.
pub fn tmp_owner(name: &str) -> Option<u32> {
    let (_, rest) = name.rsplit_once(".tmp-").or_else(|| name.rsplit_once("tmp-"))?;
    rest.parse().ok()
}

/// Removes the temporary files in `dir` of seedfall processes that are gone
/// (killed mid-write: a cancelled sweep can be stopped in the middle of a
/// build). Another process's live temporary file is left alone.
pub fn clear_stale_tmp(dir: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else { return 0 };
    let mut removed = 0;
    for e in entries.flatten().take(LEFTOVERS_SCAN_MAX) {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(pid) = tmp_owner(&name) else { continue };
        if pid != std::process::id() && !process_alive(pid) && e.file_type().is_ok_and(|t| t.is_file()) && std::fs::remove_file(e.path()).is_ok() {
            removed += 1;
        }
    }
    removed
}

/// A stable 64-bit content hash (FNV-1a), printed as 16 hex digits.
pub fn hash_hex(parts: &[&[u8]]) -> String {
    let mut h = seedfall_sim::hash::Fnv1a::new();
    for p in parts {
        h.write_u64(p.len() as u64);
        h.write(p);
    }
    format!("{:016x}", h.value())
}

/// Whether process `pid` is alive (Linux: its /proc entry).
pub fn process_alive(pid: u32) -> bool {
    Path::new("/proc").join(pid.to_string()).exists() || !Path::new("/proc/self").exists()
}

#[cfg(test)]
mod tests {
    use super::write_atomic;

    fn scratch(name: &str) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("seedfall-write-atomic-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn a_symlink_is_followed_not_replaced() {
        let d = scratch("link");
        std::fs::write(d.join("target.json"), b"old").unwrap();
        std::os::unix::fs::symlink("target.json", d.join("link.json")).unwrap();
        write_atomic(&d.join("link.json"), b"new").unwrap();
        assert!(std::fs::symlink_metadata(d.join("link.json")).unwrap().file_type().is_symlink(), "the link is still a link");
        assert_eq!(std::fs::read(d.join("target.json")).unwrap(), b"new");
        // A dangling link creates what it points to.
        std::os::unix::fs::symlink("sub/made.json", d.join("dangling.json")).unwrap();
        write_atomic(&d.join("dangling.json"), b"made").unwrap();
        assert_eq!(std::fs::read(d.join("sub/made.json")).unwrap(), b"made");
        // A loop of links is an error, not a hang.
        std::os::unix::fs::symlink("b", d.join("a")).unwrap();
        std::os::unix::fs::symlink("a", d.join("b")).unwrap();
        assert!(write_atomic(&d.join("a"), b"x").unwrap_err().to_string().contains("symlinks"));
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_device_is_written_in_place() {
        write_atomic(std::path::Path::new("/dev/null"), b"nothing").unwrap();
        let m = std::fs::metadata("/dev/null").unwrap();
        assert!(!m.is_file(), "/dev/null is still a device");
        let full = std::path::Path::new("/dev/full");
        if full.exists() {
            let e = write_atomic(full, b"x").unwrap_err();
            assert_eq!(e.raw_os_error(), Some(28), "ENOSPC from /dev/full: {e}");
            assert!(!std::fs::metadata(full).unwrap().is_file());
        }
    }

    #[test]
    fn a_folder_is_refused_and_no_temp_file_stays() {
        let d = scratch("dir");
        std::fs::create_dir(d.join("out")).unwrap();
        assert!(write_atomic(&d.join("out"), b"x").unwrap_err().to_string().contains("folder"));
        write_atomic(&d.join("plain.json"), b"x").unwrap();
        let names: Vec<String> = std::fs::read_dir(&d).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        assert!(names.iter().all(|n| !n.contains(".tmp-")), "{names:?}");
        std::fs::remove_dir_all(&d).unwrap();
    }
}
