//! Go build overlays: what a `go` recipe adds to a build so that unmodified
//! programs run on seedfall's host (docs/sdk-go.md).
//!
//! - `net` (`"net": true`): the standard library's `net` package on the
//!   simulated network (`net`).
//! - `linux_errors` (on unless `"linux_errors": false`): Linux's error texts in
//!   package `syscall` (`errors`), so a guest's `err.Error()` reads as on
//!   Linux, where programs match it.
//! - `storage` (`"storage": true`): what Unix storage libraries need and
//!   wasip1 lacks: mmap, flock and friends in package `syscall`, the subset
//!   of `golang.org/x/sys/unix` they call, and what each library it knows
//!   lacks, chosen by the code of the release the build uses (`storage`,
//!   `shims`).
//! - `precomputed_tables` (on unless `"precomputed_tables": false`): tables
//!   Go computes at every start, ed25519's base-point table, as static data
//!   computed at build time by the toolchain's own code (`tables`).
//!
//! Standard library files are replaced through `go build -overlay`. Files
//! of modules cannot be (Go refuses to overlay the module cache), so a
//! patched module is a copy made from the module cache into the program's
//! module folder (`.seedfall/go-storage`), used through `-modfile` (a copy
//! of the program's go.mod with a relative `replace` line per patched
//! module: Go records the path in the binary, so it must not name where
//! this checkout is). Nothing is copied into this repository; every
//! change is applied to what the build really uses, and one that no longer
//! fits its file is an error naming the module, the version and the file.
mod errors;
mod net;
pub mod shims;
mod storage;
mod tables;

pub use net::SEEDFALL_NET;
pub use shims::SEEDFALL_UNIX;
pub use storage::{COPIES, SEEDFALL_SYSCALL};

use crate::cache::{hash_hex, write_atomic, Cache};
use std::path::{Path, PathBuf};
use std::process::Command;

pub(crate) fn goroot() -> Result<PathBuf, String> {
    let out = Command::new("go").args(["env", "GOROOT"]).output().map_err(|e| format!("cannot run `go env GOROOT`: {e}"))?;
    let root = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if !out.status.success() || root.is_empty() {
        return Err(format!("`go env GOROOT` failed: {}", String::from_utf8_lossy(&out.stderr).trim()));
    }
    Ok(PathBuf::from(root))
}

/// Which overlays a `go` recipe asks for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Overlays {
    pub net: bool,
    pub storage: bool,
    pub linux_errors: bool,
    pub precomputed_tables: bool,
}

impl Overlays {
    pub fn of(source: &seedfall_sim::config::WasmSource) -> Overlays {
        match source {
            seedfall_sim::config::WasmSource::Go { net, storage, linux_errors, precomputed_tables, .. } => {
                Overlays { net: *net, storage: *storage, linux_errors: *linux_errors, precomputed_tables: *precomputed_tables }
            }
            _ => Overlays::default(),
        }
    }
}

/// Part of a build's fingerprint: which overlays, and the version of ours.
pub fn recipe_tag(o: Overlays) -> String {
    let Overlays { net, storage, linux_errors, precomputed_tables } = o;
    let mut tag = String::new();
    if precomputed_tables {
        tag.push_str(&format!("|tables-overlay-{}", tables::VERSION));
    }
    if linux_errors {
        tag.push_str(&format!("|errors-overlay-{}", errors::VERSION));
    }
    if net {
        tag.push_str(&format!("|net-overlay-{}", hash_hex(&[SEEDFALL_NET.as_bytes()])));
    }
    if storage {
        tag.push_str(&format!("|storage-overlay-{}", storage::version_hash()));
    }
    tag
}

/// The extra `go build` arguments for these overlays (`-overlay=...`,
/// `-modfile=...`), written into the cache once per input.
pub fn prepare(module_root: &Path, o: Overlays, cache: &Cache, log: &mut dyn FnMut(&str)) -> Result<Vec<String>, String> {
    let Overlays { net, storage, linux_errors, precomputed_tables } = o;
    if !net && !storage && !linux_errors && !precomputed_tables {
        return Ok(Vec::new());
    }
    let root = goroot()?;
    let mut files = Vec::new();
    if precomputed_tables {
        files.extend(tables::files(&root, cache, log)?);
    }
    if linux_errors {
        files.extend(errors::files(&root).map_err(|e| format!("go.linux_errors: {e}"))?);
    }
    if net {
        files.extend(net::files(&root).map_err(|e| format!("go.net: {e}"))?);
    }
    if storage {
        files.extend(storage::goroot_files(&root).map_err(|e| format!("go.storage: {e}"))?);
    }
    let mut args = Vec::new();
    if !files.is_empty() {
        args.push(format!("-overlay={}", write_overlay(&files, cache)?.display()));
    }
    if storage {
        if let Some(modfile) = storage::modfile(module_root, cache, log).map_err(|e| format!("go.storage: {e}"))? {
            args.push(format!("-modfile={}", modfile.display()));
        }
    }
    Ok(args)
}

/// Writes each replacement and the overlay.json naming them.
fn write_overlay(files: &[(PathBuf, String)], cache: &Cache) -> Result<PathBuf, String> {
    let mut parts: Vec<&[u8]> = Vec::new();
    let names: Vec<String> = files.iter().map(|(p, _)| p.to_string_lossy().into_owned()).collect();
    for ((_, content), name) in files.iter().zip(&names) {
        parts.push(name.as_bytes());
        parts.push(content.as_bytes());
    }
    let dir = cache.path("go-overlay", &hash_hex(&parts));
    let overlay = dir.join("overlay.json");
    if overlay.is_file() {
        return Ok(overlay);
    }
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let mut replace = serde_json::Map::new();
    for (i, (path, content)) in files.iter().enumerate() {
        let copy = dir.join(format!("{i}-{}", path.file_name().unwrap_or_default().to_string_lossy()));
        write_atomic(&copy, content.as_bytes()).map_err(|e| format!("cannot write {}: {e}", copy.display()))?;
        replace.insert(path.to_string_lossy().into_owned(), copy.to_string_lossy().into_owned().into());
    }
    let json = serde_json::json!({ "Replace": replace });
    write_atomic(&overlay, serde_json::to_string_pretty(&json).expect("JSON").as_bytes()).map_err(|e| format!("cannot write {}: {e}", overlay.display()))?;
    Ok(overlay)
}
