//! What this machine brings to building guests, probed for `seedfall
//! doctor`: its Go, Rust's wasm32-wasip1 (and wasm32-wasip1-threads)
//! targets, and the build cache they fill. Returns what it found; `doctor`
//! judges and prints it.
use std::path::{Path, PathBuf};
use std::process::Command;

/// The oldest Go that builds for wasip1 as seedfall needs (`GOOS=wasip1`
/// arrived in 1.21; `go:wasmexport` and the net overlay need 1.22).
pub const GO_MIN: (u32, u32) = (1, 22);
/// Bound on cache entries looked at.
const CACHE_SCAN_MAX: usize = 100_000;

/// The Go on PATH.
pub struct Go {
    /// What `go version` printed: `go version go1.26.8 linux/amd64`.
    pub text: String,
    /// Its major and minor version (0 where it does not parse).
    pub version: (u32, u32),
}

/// The Go on PATH, if `go version` runs and succeeds.
pub fn go() -> Option<Go> {
    let out = Command::new("go").arg("version").env("GOTOOLCHAIN", "local").output();
    let out = out.ok().filter(|o| o.status.success())?;
    let text = String::from_utf8_lossy(&out.stdout).trim().to_string();
    // `go version go1.26.8 linux/amd64`
    let version = text.split_whitespace().nth(2).and_then(|v| v.strip_prefix("go")).unwrap_or("");
    let mut parts = version.split(['.', 'r', 'b']).filter_map(|p| p.parse::<u32>().ok());
    let version = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
    Some(Go { text, version })
}

/// Whether Rust guests can build here.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WasmTarget {
    /// rustup does not run.
    NoRustup,
    Missing,
    Installed,
}

/// Whether rustup lists `target` (`wasm32-wasip1`, `wasm32-wasip1-threads`)
/// among its installed targets.
pub fn rust_wasm_target(target: &str) -> WasmTarget {
    let Ok(out) = Command::new("rustup").args(["target", "list", "--installed"]).output() else {
        return WasmTarget::NoRustup;
    };
    if String::from_utf8_lossy(&out.stdout).lines().any(|l| l.trim() == target) {
        return WasmTarget::Installed;
    }
    WasmTarget::Missing
}

/// The cache folder's size and what a crash left behind in it.
pub struct CacheSurvey {
    pub bytes: u64,
    pub files: u64,
    /// Temporary files of a process that died mid-write.
    pub leftovers: Vec<PathBuf>,
}

/// The cache's size, its entries, and what a crash left behind in it; None
/// when `dir` is not a folder (nothing cached yet).
pub fn survey_cache(dir: &Path) -> Option<CacheSurvey> {
    if !dir.is_dir() {
        return None;
    }
    let (mut bytes, mut files, mut leftovers, mut seen) = (0u64, 0u64, Vec::new(), 0usize);
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else { continue };
        for e in entries.flatten() {
            seen += 1;
            if seen > CACHE_SCAN_MAX {
                break;
            }
            let Ok(meta) = e.metadata() else { continue };
            if meta.is_dir() {
                stack.push(e.path());
                continue;
            }
            bytes += meta.len();
            files += 1;
            // Temporary names of a process that died mid-write (a live
            // one's is work in progress: another sweep is building).
            let owner = crate::cache::tmp_owner(&e.file_name().to_string_lossy());
            if owner.is_some_and(|pid| !crate::cache::process_alive(pid)) {
                leftovers.push(e.path());
            }
        }
    }
    Some(CacheSurvey { bytes, files, leftovers })
}
