//! The Go build overlay that puts the standard library's `net` package on
//! the simulated network (a `go` recipe with `"net": true`).
//!
//! Go's `net` on wasip1 opens sockets on an in-process fake network. The
//! overlay renames two functions in copies of the toolchain's own files
//! (`socket` in net_fake.go, `(*netFD).accept` in fd_fake.go) and adds
//! `sdk/go/overlay/net_seedfall_wasip1.go`, which defines them again on the
//! host's socket calls. Go's source is patched at build time from the
//! toolchain that builds, never copied into this repository, and a patch
//! that does not apply exactly once is an error rather than an overlay that
//! silently does nothing. `sdk/go/overlay/make-overlay.sh` does the same for
//! builds outside seedfall.
use crate::cache::{hash_hex, write_atomic, Cache};
use std::path::PathBuf;
use std::process::Command;

/// Our file added to package net; its `//go:build ignore` keeps it out of
/// every build in the repository and becomes `wasip1` in the overlay.
pub const SEEDFALL_NET: &str = include_str!("../../../sdk/go/overlay/net_seedfall_wasip1.go");

/// (file in $GOROOT/src/net, line start to rename, new start)
const RENAMES: &[(&str, &str, &str)] = &[
    ("net_fake.go", "func socket(", "func fakeSocket("),
    ("fd_fake.go", "func (fd *netFD) accept(", "func (fd *netFD) fakeAccept("),
];

fn goroot() -> Result<PathBuf, String> {
    let out = Command::new("go").args(["env", "GOROOT"]).output().map_err(|e| format!("cannot run `go env GOROOT`: {e}"))?;
    let root = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if !out.status.success() || root.is_empty() {
        return Err(format!("`go env GOROOT` failed: {}", String::from_utf8_lossy(&out.stderr).trim()));
    }
    Ok(PathBuf::from(root))
}

/// `text` with the one line starting with `old` starting with `new`.
fn rename(text: &str, old: &str, new: &str) -> Option<String> {
    let hits = text.lines().filter(|l| l.starts_with(old)).count();
    if hits != 1 {
        return None;
    }
    let mut out = String::with_capacity(text.len() + 8);
    for line in text.split_inclusive('\n') {
        match line.strip_prefix(old) {
            Some(rest) => {
                out.push_str(new);
                out.push_str(rest);
            }
            None => out.push_str(line),
        }
    }
    Some(out)
}

/// Writes the overlay for the toolchain on PATH into the cache (once per
/// toolchain and overlay version); returns the overlay.json to pass.
pub fn write(cache: &Cache) -> Result<PathBuf, String> {
    let root = goroot()?;
    let src = root.join("src/net");
    let mut originals = Vec::new();
    for (file, _, _) in RENAMES {
        let path = src.join(file);
        let text = std::fs::read_to_string(&path).map_err(|e| format!("cannot read {}: {e} (is this Go 1.22 or newer?)", path.display()))?;
        originals.push((path, text));
    }
    let key = hash_hex(&[root.to_string_lossy().as_bytes(), SEEDFALL_NET.as_bytes(), originals[0].1.as_bytes(), originals[1].1.as_bytes()]);
    let dir = cache.path("go-overlay", &key);
    let overlay = dir.join("overlay.json");
    if overlay.is_file() {
        return Ok(overlay);
    }
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let mut replace = serde_json::Map::new();
    for ((path, text), (file, old, new)) in originals.iter().zip(RENAMES) {
        let patched = rename(text, old, new).ok_or_else(|| {
            format!("\"{old}\" is not exactly once at the start of a line in {}: this Go release changed its net package, and the overlay needs updating", path.display())
        })?;
        let copy = dir.join(file);
        write_atomic(&copy, patched.as_bytes()).map_err(|e| format!("cannot write {}: {e}", copy.display()))?;
        replace.insert(path.to_string_lossy().into_owned(), copy.to_string_lossy().into_owned().into());
    }
    let ours = rename(SEEDFALL_NET, "//go:build ignore", "//go:build wasip1").expect("net_seedfall_wasip1.go has one //go:build ignore line");
    let added = src.join("net_seedfall_wasip1.go");
    let copy = dir.join("net_seedfall_wasip1.go");
    write_atomic(&copy, ours.as_bytes()).map_err(|e| format!("cannot write {}: {e}", copy.display()))?;
    replace.insert(added.to_string_lossy().into_owned(), copy.to_string_lossy().into_owned().into());
    let json = serde_json::json!({ "Replace": replace });
    write_atomic(&overlay, serde_json::to_string_pretty(&json).expect("JSON").as_bytes()).map_err(|e| format!("cannot write {}: {e}", overlay.display()))?;
    Ok(overlay)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rename_needs_exactly_one_line() {
        assert_eq!(rename("a\nfunc socket(x)\nb\n", "func socket(", "func fakeSocket(").unwrap(), "a\nfunc fakeSocket(x)\nb\n");
        assert!(rename("func socket(\nfunc socket(\n", "func socket(", "x").is_none());
        assert!(rename("nothing here\n", "func socket(", "x").is_none());
    }

    #[test]
    fn our_file_stays_out_of_normal_builds() {
        assert_eq!(SEEDFALL_NET.lines().filter(|l| *l == "//go:build ignore").count(), 1);
    }
}
