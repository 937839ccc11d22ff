//! The storage overlay (a `go` recipe with `"storage": true`): what the Go
//! storage libraries need and wasip1 lacks.
//!
//! - package `syscall` gains `sdk/go/overlay/syscall_seedfall_wasip1.go`
//!   (Mmap, Munmap, Msync, Madvise, Flock, FcntlFlock, Fdatasync and their
//!   constants, on seedfall's host);
//! - the libraries it knows get the changes of their `shims`, chosen by the
//!   code each release has (`golang.org/x/sys/unix`, which has no wasip1
//!   files at all, gains `sdk/go/overlay/unix_seedfall_wasip1.go`).
//!
//! Modules are patched as copies made from the module cache the build uses,
//! kept in the program's module folder under `.seedfall/go-storage`, and
//! reached through a relative `replace` in an alternate go.mod. Relative,
//! because Go writes each replacement's path into the binary (its build
//! info): a copy at an absolute path, in a cache that moves with the config
//! or the checkout, made the same program a different binary, whose runs
//! then differ, so a committed schedule replayed differently elsewhere.
use crate::cache::{hash_hex, write_atomic, Cache};
use std::path::{Path, PathBuf};
use std::process::Command;

pub const SEEDFALL_SYSCALL: &str = include_str!("../../../../sdk/go/overlay/syscall_seedfall_wasip1.go");
use super::shims::{self, Shim};

/// Hash of everything the overlay adds: part of every storage build's fingerprint.
pub fn version_hash() -> String {
    // Where the copies are and how they are named is part of the binary (its
    // build info), so a change of layout is a change of the overlay.
    let mut parts: Vec<Vec<u8>> = vec![SEEDFALL_SYSCALL.as_bytes().to_vec(), COPIES.as_bytes().to_vec(), b"replace => ./".to_vec()];
    for s in shims::SHIMS {
        // The shims are static data; their debug form is a stable spelling.
        parts.push(format!("{s:?}").into_bytes());
    }
    hash_hex(&parts.iter().map(Vec::as_slice).collect::<Vec<_>>())
}

/// The standard library's part: our syscall file, and wasip1's own file
/// system calls with `Fsync` renamed to `hostFsync` (ours yields first).
pub fn goroot_files(goroot: &Path) -> Result<Vec<(PathBuf, String)>, String> {
    let ours = super::net::rename(SEEDFALL_SYSCALL, "//go:build ignore", "//go:build wasip1").expect("syscall_seedfall_wasip1.go has one //go:build ignore line");
    let mut out = super::net::renamed_files(&goroot.join("src/syscall"), "syscall", &[("fs_wasip1.go", "func Fsync(", "func hostFsync(")])?;
    out.insert(0, (goroot.join("src/syscall/syscall_seedfall_wasip1.go"), ours));
    Ok(out)
}

struct Module {
    path: String,
    version: String,
    dir: Option<PathBuf>,
    replaced: bool,
}

fn go(module_root: &Path, args: &[&str]) -> Result<String, String> {
    let out = Command::new("go")
        .current_dir(module_root)
        .env("GOOS", "wasip1")
        .env("GOARCH", "wasm")
        .env("GOWORK", "off")
        .args(args)
        .output()
        .map_err(|e| format!("cannot run `go`: {e}"))?;
    if !out.status.success() {
        return Err(format!("`go {}` failed in {}:\n{}", args.join(" "), module_root.display(), String::from_utf8_lossy(&out.stderr).trim_end()));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Every module of the build, downloaded.
fn modules(module_root: &Path) -> Result<Vec<Module>, String> {
    let text = go(module_root, &["list", "-m", "-json", "all"])?;
    let mut out = Vec::new();
    for v in serde_json::Deserializer::from_str(&text).into_iter::<serde_json::Value>() {
        let v = v.map_err(|e| format!("`go list -m -json all` printed something else: {e}"))?;
        if v["Main"].as_bool() == Some(true) {
            continue;
        }
        let (Some(path), Some(version)) = (v["Path"].as_str(), v["Version"].as_str()) else { continue };
        out.push(Module { path: path.into(), version: version.into(), dir: v["Dir"].as_str().map(PathBuf::from), replaced: !v["Replace"].is_null() });
    }
    Ok(out)
}

fn module_dir(module_root: &Path, m: &Module) -> Result<PathBuf, String> {
    if let Some(d) = &m.dir {
        return Ok(d.clone());
    }
    let text = go(module_root, &["mod", "download", "-json", &format!("{}@{}", m.path, m.version)])?;
    let v: serde_json::Value = serde_json::from_str(&text).map_err(|e| format!("`go mod download` printed something else: {e}"))?;
    v["Dir"].as_str().map(PathBuf::from).ok_or_else(|| format!("`go mod download {}@{}` gave no folder: {text}", m.path, m.version))
}

/// Bound on files copied from one module.
const MODULE_FILES_MAX: usize = 50_000;

/// Copies a module's folder without its tests (read-only in the module cache).
fn copy_module(from: &Path, to: &Path) -> Result<(), String> {
    let mut stack = vec![from.to_path_buf()];
    let mut files = 0usize;
    while let Some(dir) = stack.pop() {
        let rel = dir.strip_prefix(from).expect("under the module");
        std::fs::create_dir_all(to.join(rel)).map_err(|e| format!("cannot create {}: {e}", to.join(rel).display()))?;
        for e in std::fs::read_dir(&dir).map_err(|e| format!("cannot list {}: {e}", dir.display()))?.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let Ok(ft) = e.file_type() else { continue };
            if ft.is_dir() {
                if name != "testdata" && !name.starts_with('.') {
                    stack.push(e.path());
                }
            } else if ft.is_file() && !name.ends_with("_test.go") {
                files += 1;
                if files > MODULE_FILES_MAX {
                    return Err(format!("{} has more than {MODULE_FILES_MAX} files", from.display()));
                }
                let dest = to.join(rel).join(&name);
                std::fs::copy(e.path(), &dest).map_err(|err| format!("cannot copy {}: {err}", e.path().display()))?;
                let mut perms = std::fs::metadata(&dest).map_err(|err| err.to_string())?.permissions();
                #[allow(clippy::permissions_set_readonly_false)]
                perms.set_readonly(false);
                let _ = std::fs::set_permissions(&dest, perms);
            }
        }
    }
    Ok(())
}

/// Where the patched copies of a module's dependencies live: inside the
/// module's own folder, so the relative `replace` path Go records in the
/// binary is the same wherever the checkout or the config is.
pub const COPIES: &str = ".seedfall/go-storage";

/// The patched copy of one module, made once per version (and overlay);
/// the name is its path relative to `module_root`.
fn patched_copy(module_root: &Path, m: &Module, from: &Path, shims: &[&Shim]) -> Result<String, String> {
    let escaped: String = m.path.chars().map(|c| if c.is_ascii_alphanumeric() || c == '.' || c == '-' { c } else { '_' }).collect();
    // Named by what is done to this module alone: a shim added for another
    // library leaves this copy, its path in the binary's build info, and so
    // the binary and its runs, as they were.
    let done: Vec<String> = shims.iter().map(|s| format!("{s:?}")).collect();
    let mut parts: Vec<&[u8]> = vec![m.path.as_bytes(), m.version.as_bytes(), SEEDFALL_SYSCALL.as_bytes()];
    parts.extend(done.iter().map(|d| d.as_bytes()));
    let key = hash_hex(&parts);
    let name = format!("{escaped}@{}-{}", m.version, &key[..12]);
    let (copies, rel) = (module_root.join(COPIES), format!("./{COPIES}/{name}"));
    let dir = copies.join(&name);
    if dir.join(".complete").is_file() {
        return Ok(rel);
    }
    std::fs::create_dir_all(&copies).map_err(|e| format!("cannot create {}: {e}", copies.display()))?;
    let tmp = dir.with_extension(format!("tmp-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    copy_module(from, &tmp)?;
    let named = shims::Named { module: &m.path, version: &m.version };
    for shim in shims {
        if let Err(e) = shims::apply(shim, &tmp, &named) {
            let _ = std::fs::remove_dir_all(&tmp);
            return Err(e);
        }
    }
    if !tmp.join("go.mod").is_file() {
        // A module from before go.mod: a replacement folder needs one.
        std::fs::write(tmp.join("go.mod"), format!("module {}\n", m.path)).map_err(|e| e.to_string())?;
    }
    std::fs::write(tmp.join(".complete"), b"").map_err(|e| format!("cannot write {}: {e}", tmp.display()))?;
    // Another seedfall may build the same copy at the same time (tests and
    // parallel sweeps share a cache). Copies land whole, by rename, so a
    // complete one is never removed: losing the race is fine; only a folder
    // without `.complete` (left by something else) is cleared, once.
    if std::fs::rename(&tmp, &dir).is_err() && !dir.join(".complete").is_file() {
        let _ = std::fs::remove_dir_all(&dir);
        if let Err(e) = std::fs::rename(&tmp, &dir) {
            if !dir.join(".complete").is_file() {
                let _ = std::fs::remove_dir_all(&tmp);
                return Err(format!("cannot move {} into place: {e}", tmp.display()));
            }
        }
    }
    let _ = std::fs::remove_dir_all(&tmp);
    Ok(rel)
}

/// The program's go.mod with `extra` replace lines (relative paths) after
/// it. Its own relative replacements stay as they are: Go resolves them
/// against the module's folder even when the go.mod is read through
/// `-modfile` from elsewhere, and records them in the binary as written.
fn alternate_go_mod(text: &str, extra: &[(String, String)]) -> String {
    let mut out = String::new();
    for line in text.lines() {
        out.push_str(line);
        out.push('\n');
    }
    for (module, rel) in extra {
        assert!(rel.starts_with("./"), "a patched copy is named relative to the module: {rel}");
        out.push_str(&format!("replace {module} => {rel}\n"));
    }
    out
}

/// The alternate go.mod that replaces every patched module with its copy;
/// `None` when the build uses none of them.
pub fn modfile(module_root: &Path, cache: &Cache, log: &mut dyn FnMut(&str)) -> Result<Option<PathBuf>, String> {
    let mut extra = Vec::new();
    for m in modules(module_root)? {
        if !shims::knows(&m.path) {
            continue;
        }
        if m.replaced {
            log(&format!("storage overlay: {} is replaced by the program's go.mod; it is used as it is", m.path));
            continue;
        }
        let from = module_dir(module_root, &m)?;
        let fitting = shims::for_module(&m.path, &from);
        // A release whose code needs none of them (logrus with its own
        // wasip1 file, etcd's client/pkg with a wasm one) is used as it is.
        if fitting.is_empty() {
            continue;
        }
        extra.push((m.path.clone(), patched_copy(module_root, &m, &from, &fitting)?));
    }
    if extra.is_empty() {
        return Ok(None);
    }
    let go_mod = std::fs::read_to_string(module_root.join("go.mod")).map_err(|e| format!("cannot read {}: {e}", module_root.join("go.mod").display()))?;
    let go_sum = std::fs::read(module_root.join("go.sum")).unwrap_or_default();
    let text = alternate_go_mod(&go_mod, &extra);
    let dir = cache.path("go-modfile", &hash_hex(&[text.as_bytes(), &go_sum]));
    let (mod_path, sum_path) = (dir.join("go.mod"), dir.join("go.sum"));
    if !mod_path.is_file() {
        std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        write_atomic(&sum_path, &go_sum).map_err(|e| format!("cannot write {}: {e}", sum_path.display()))?;
        write_atomic(&mod_path, text.as_bytes()).map_err(|e| format!("cannot write {}: {e}", mod_path.display()))?;
    }
    Ok(Some(mod_path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replacements_stay_relative_so_the_binary_names_no_path_of_this_machine() {
        let text = "module m\n\nrequire x v1\n\nreplace seedfall.dev/sdk => ../../sdk/go\nreplace y => z v1.2.0\n";
        let out = alternate_go_mod(text, &[("go.etcd.io/bbolt".into(), "./.seedfall/go-storage/go.etcd.io_bbolt@v1.3.6-abc".into())]);
        assert!(out.contains("replace seedfall.dev/sdk => ../../sdk/go\n"), "{out}");
        assert!(out.contains("replace y => z v1.2.0\n"));
        assert!(out.ends_with("replace go.etcd.io/bbolt => ./.seedfall/go-storage/go.etcd.io_bbolt@v1.3.6-abc\n"));
    }
}
