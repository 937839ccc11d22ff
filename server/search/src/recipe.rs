//! Build recipes: turning a node's `go` or `cargo` recipe into a `.wasm`.
//!
//! A build is keyed by a fingerprint of its sources (every file under the Go
//! module or the cargo package, plus local `replace`/`path` dependencies), the
//! toolchain version and the recipe. An unchanged fingerprint reuses the wasm
//! built before, so a sweep does not pay for `go build` every time.
use crate::cache::{hash_hex, write_atomic, Cache};
use seedfall_sim::config::{NodeSpec, RustTarget, WasmSource};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Bound on files hashed per fingerprint, so a stray huge folder cannot hang us.
pub const FINGERPRINT_FILES_MAX: usize = 20_000;
const SKIP_DIRS: &[&str] = &[".git", ".seedfall", "target", "node_modules", ".hg", "regressions"];

/// Files that never change a build: docs and seedfall's own configs. Keeping
/// them out of the fingerprint means editing a README or pinning a failure
/// does not rebuild the guest.
fn never_builds(name: &str) -> bool {
    name.ends_with(".md") || (name.starts_with("seedfall") && name.ends_with(".json"))
}

#[derive(Clone, Debug)]
pub struct Built {
    pub wasm: PathBuf,
    /// False when the cache already held this build.
    pub rebuilt: bool,
    /// The source fingerprint, for recipes (keys derived caches, like the Go catalog).
    pub fingerprint: Option<String>,
}

/// The wasm file for `node`, building it if its sources changed.
pub fn wasm_for(node: &NodeSpec, cache: &Cache, log: &mut dyn FnMut(&str)) -> Result<Built, String> {
    match &node.source {
        WasmSource::Path(p) => {
            if p.is_dir() {
                return Err(format!("node \"{}\": wasm file {} is a folder, expected a .wasm file", node.name, p.display()));
            }
            if !p.is_file() {
                return Err(format!("node \"{}\": wasm file {} does not exist", node.name, p.display()));
            }
            Ok(Built { wasm: p.clone(), rebuilt: false, fingerprint: None })
        }
        WasmSource::Go { dir, package, tags, .. } => go(node, dir, package, tags, crate::go_overlay::Overlays::of(&node.source), cache, log),
        WasmSource::Cargo { dir, package, bin, profile, target } => cargo(node, dir, package.as_deref(), bin.as_deref(), profile, *target, cache, log),
    }
}

/// What `program args` prints. Each ask starts the tool (about 10 ms for
/// `go version`), at every load of every recipe, so an answer is kept for
/// as long as the executable PATH finds is the same file (size and
/// modification time): a toolchain upgraded under the language server is
/// asked again.
fn tool_version(program: &str, args: &[&str]) -> Result<String, String> {
    /// Bound on the answers kept (a few tools, a few questions each).
    const ASKED_MAX: usize = 16;
    static ASKED: std::sync::Mutex<Vec<(String, Result<String, String>)>> = std::sync::Mutex::new(Vec::new());
    // The variables that pick another toolchain behind the same executable
    // (a rustup proxy, the go command's toolchain switch) are part of it.
    let chosen: Vec<String> = ["GOTOOLCHAIN", "RUSTUP_TOOLCHAIN", "GOROOT"].iter().map(|v| std::env::var(v).unwrap_or_default()).collect();
    let key = which(program).map(|(path, len, mtime)| format!("{} {len} {mtime} {} {}", path.display(), chosen.join(" "), args.join(" ")));
    if let Some(key) = &key {
        if let Some((_, answer)) = ASKED.lock().unwrap().iter().find(|(k, _)| k == key) {
            return answer.clone();
        }
    }
    let out = Command::new(program).args(args).output().map_err(|e| format!("cannot run `{program}`: {e} (is it installed and on PATH?)"));
    let succeeded = out.as_ref().is_ok_and(|o| o.status.success());
    let answer = out.map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
    if let (Some(key), true) = (key, succeeded) {
        let mut asked = ASKED.lock().unwrap();
        if asked.len() >= ASKED_MAX {
            drop(asked.remove(0));
        }
        asked.push((key, answer.clone()));
    }
    answer
}

/// The file PATH finds for `program`, with its size and modification time
/// (nanoseconds), following links.
fn which(program: &str) -> Option<(PathBuf, u64, u128)> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|d| d.join(program)).find_map(|p| {
        use std::os::unix::fs::PermissionsExt;
        let m = std::fs::metadata(&p).ok().filter(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)?;
        let mtime = m.modified().ok()?.duration_since(std::time::UNIX_EPOCH).ok()?.as_nanos();
        Some((p, m.len(), mtime))
    })
}

fn go(node: &NodeSpec, dir: &Path, package: &str, tags: &[String], overlays: crate::go_overlay::Overlays, cache: &Cache, log: &mut dyn FnMut(&str)) -> Result<Built, String> {
    if !dir.is_dir() {
        return Err(format!("node \"{}\": go.dir {} is not a folder", node.name, dir.display()));
    }
    let module_root = find_up(dir, "go.mod").ok_or_else(|| format!("node \"{}\": no go.mod in {} or above it", node.name, dir.display()))?;
    let mut roots = vec![module_root.clone()];
    roots.extend(go_local_replaces(&module_root));
    let version = tool_version("go", &["version"])?;
    let recipe = format!("go|{package}|{}|{version}{}", tags.join(","), crate::go_overlay::recipe_tag(overlays));
    let fp = fingerprint(&roots, &recipe)?;
    let out = cache.path("wasm", &format!("go-{fp}.wasm"));
    if out.is_file() {
        return Ok(Built { wasm: out, rebuilt: false, fingerprint: Some(fp) });
    }
    log(&format!("building {} (go build, GOOS=wasip1 GOARCH=wasm) in {}", node.name, dir.display()));
    std::fs::create_dir_all(out.parent().unwrap()).map_err(|e| format!("cannot create the cache folder: {e}"))?;
    crate::cache::clear_stale_tmp(out.parent().unwrap());
    let tmp = out.with_extension(format!("tmp-{}", std::process::id()));
    let mut cmd = Command::new("go");
    cmd.current_dir(dir).env("GOOS", "wasip1").env("GOARCH", "wasm").args(["build", "-trimpath", "-o"]).arg(&tmp);
    if !tags.is_empty() {
        cmd.arg(format!("-tags={}", tags.join(",")));
    }
    let extra = crate::go_overlay::prepare(&module_root, overlays, cache, log).map_err(|e| format!("node \"{}\": {e}", node.name))?;
    if extra.iter().any(|a| a.starts_with("-modfile=")) {
        // An alternate go.mod is not for a workspace.
        cmd.env("GOWORK", "off");
    }
    cmd.args(&extra);
    cmd.arg(package);
    let output = cmd.output().map_err(|e| format!("cannot run `go`: {e} (is Go 1.21+ installed and on PATH?)"))?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let tags = if tags.is_empty() { String::new() } else { format!(" -tags={}", tags.join(",")) };
        let overlay = if extra.is_empty() { "" } else { " (seedfall's build adds the overlays the recipe asks for (net, storage, linux_errors, precomputed_tables) with -overlay, and -modfile for storage)" };
        return Err(format!(
            "node \"{}\": go build failed in {}:\n{}\n  reproduce it: cd {} && GOOS=wasip1 GOARCH=wasm go build -trimpath{tags} {package}{overlay}{}",
            node.name,
            dir.display(),
            stderr.trim_end(),
            dir.display(),
            go_build_hint(&stderr, overlays.storage).map(|h| format!("\n  hint: {h}")).unwrap_or_default()
        ));
    }
    std::fs::rename(&tmp, &out).map_err(|e| format!("cannot move the built wasm into the cache: {e}"))?;
    Ok(Built { wasm: out, rebuilt: true, fingerprint: Some(fp) })
}

/// What a failed `go build` for wasip1 most likely needs, from its output.
fn go_build_hint(stderr: &str, storage: bool) -> Option<&'static str> {
    if stderr.contains("build constraints exclude all Go files") {
        return Some("a package has no Go files for GOOS=wasip1: it (or a library it imports) is written for particular systems only (see the package the message names); docs/getting-started.md#when-the-first-run-fails");
    }
    if stderr.contains("github.com/cockroachdb/swiss@") && stderr.contains("undefined: getRuntimeHasher") {
        // Not wasip1's: its runtime hooks are built for a range of Go
        // releases only, and a native build with this Go fails the same way.
        return Some("github.com/cockroachdb/swiss (under pebble v2) builds its runtime hooks only for the Go releases it has checked (runtime_go1.20.go's //go:build line), and this Go is past them, natively as well: require a newer swiss, as pebble v2.1.7 does: go get github.com/cockroachdb/swiss@v0.0.0-20260820225851-333444432258 (docs/sdk-go.md#storage)");
    }
    let syscalls = ["undefined: syscall.", "undefined: unix.", "undefined: syscall.Mmap", "undefined: flock"];
    if !storage && syscalls.iter().any(|s| stderr.contains(s)) {
        return Some("it calls system functions wasip1 lacks (mmap, flock, ...): storage libraries such as bbolt, badger and pebble build with \"storage\": true in the node's go recipe (docs/sdk-go.md#storage)");
    }
    None
}

fn cargo(
    node: &NodeSpec,
    dir: &Path,
    package: Option<&str>,
    bin: Option<&str>,
    profile: &str,
    target: RustTarget,
    cache: &Cache,
    log: &mut dyn FnMut(&str),
) -> Result<Built, String> {
    if !dir.is_dir() {
        return Err(format!("node \"{}\": cargo.dir {} is not a folder", node.name, dir.display()));
    }
    let target_name = target.name();
    let root = find_up(dir, "Cargo.toml").ok_or_else(|| format!("node \"{}\": no Cargo.toml in {} or above it", node.name, dir.display()))?;
    let mut roots = vec![root.clone()];
    roots.extend(cargo_path_deps(&root));
    let version = tool_version("rustc", &["--version"])?;
    // The target is part of the key; the default's builds keep the keys
    // they had before targets could be chosen (no rebuild of every cache).
    let target_key = if target == RustTarget::default() { String::new() } else { format!("|{target_name}") };
    let recipe = format!("cargo|{package:?}|{bin:?}|{profile}|{version}{target_key}");
    let fp = fingerprint(&roots, &recipe)?;
    let out = cache.path("wasm", &format!("cargo-{fp}.wasm"));
    if out.is_file() {
        return Ok(Built { wasm: out, rebuilt: false, fingerprint: Some(fp) });
    }
    ensure_target(target_name, log)?;
    log(&format!("building {} (cargo build --target {target_name}) in {}", node.name, dir.display()));
    let mut cmd = Command::new("cargo");
    // cargo puts the artifact under target/<target>/<profile>/; its JSON
    // messages name it (`cargo_artifact`), wherever the target dir is.
    cmd.current_dir(dir).args(["build", "--target", target_name, "--message-format=json-render-diagnostics", "--profile", profile]);
    if let Some(p) = package {
        cmd.args(["-p", p]);
    }
    if let Some(b) = bin {
        cmd.args(["--bin", b]);
    }
    // A guest is built by its own toolchain settings, not the host's.
    cmd.env_remove("CARGO_TARGET_DIR").env_remove("RUSTFLAGS").env_remove("CARGO_BUILD_TARGET");
    let output = cmd.output().map_err(|e| format!("cannot run `cargo`: {e}"))?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let p = package.map(|p| format!(" -p {p}")).unwrap_or_default();
        let b = bin.map(|b| format!(" --bin {b}")).unwrap_or_default();
        let hint = (stderr.contains("compile_error!") || stderr.contains("not supported") || stderr.contains("unsupported")).then(|| {
            let threads = match target {
                RustTarget::Wasip1 => "; a crate that needs threads builds for wasm32-wasip1-threads with \"cargo\": {\"target\": \"wasm32-wasip1-threads\"} (docs/sdk-rust.md#threads)",
                RustTarget::Wasip1Threads => "",
            };
            format!("\n  hint: a crate does not build for {target_name} (crates gated on cfg(unix) or cfg(windows) stop with compile_error!{threads}): see docs/getting-started.md#when-the-first-run-fails")
        });
        return Err(format!(
            "node \"{}\": cargo build failed in {}:\n{}\n  reproduce it: cd {} && cargo build --target {target_name} --profile {profile}{p}{b}{}",
            node.name,
            dir.display(),
            stderr.trim_end(),
            dir.display(),
            hint.unwrap_or_default()
        ));
    }
    let wasm = cargo_artifact(&String::from_utf8_lossy(&output.stdout), bin)
        .ok_or_else(|| format!("node \"{}\": cargo built no .wasm binary{}", node.name, bin.map(|b| format!(" named {b}")).unwrap_or_default()))?;
    let bytes = std::fs::read(&wasm).map_err(|e| format!("cannot read {}: {e}", wasm.display()))?;
    write_atomic(&out, &bytes).map_err(|e| format!("cannot write the cache: {e}"))?;
    Ok(Built { wasm: out, rebuilt: true, fingerprint: Some(fp) })
}

/// The `.wasm` executable among cargo's JSON messages (the last, or `bin`'s).
fn cargo_artifact(stdout: &str, bin: Option<&str>) -> Option<PathBuf> {
    let mut found = None;
    for line in stdout.lines() {
        let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else { continue };
        if v["reason"] != "compiler-artifact" {
            continue;
        }
        let Some(exe) = v["executable"].as_str() else { continue };
        if !exe.ends_with(".wasm") {
            continue;
        }
        if let Some(b) = bin {
            if v["target"]["name"] != b {
                continue;
            }
        }
        found = Some(PathBuf::from(exe));
    }
    found
}

/// Adds the Rust target `target` through rustup when it is missing.
fn ensure_target(target: &str, log: &mut dyn FnMut(&str)) -> Result<(), String> {
    let sysroot = tool_version("rustc", &["--print", "sysroot"])?;
    if Path::new(&sysroot).join("lib/rustlib").join(target).is_dir() {
        return Ok(());
    }
    log(&format!("the Rust target {target} is missing: running `rustup target add {target}`"));
    let status = Command::new("rustup").args(["target", "add", target]).status();
    match status {
        Ok(s) if s.success() => Ok(()),
        _ => Err(format!("the Rust target {target} is not installed and `rustup target add {target}` failed: install it by hand")),
    }
}

pub(crate) fn find_up(start: &Path, file: &str) -> Option<PathBuf> {
    let mut dir = Some(start);
    while let Some(d) = dir {
        if d.join(file).is_file() {
            return Some(d.to_path_buf());
        }
        dir = d.parent();
    }
    None
}

/// Local directories named by `replace x => ../path` in go.mod.
fn go_local_replaces(module_root: &Path) -> Vec<PathBuf> {
    let text = std::fs::read_to_string(module_root.join("go.mod")).unwrap_or_default();
    text.lines()
        .filter_map(|l| l.split("=>").nth(1))
        .map(str::trim)
        .filter(|t| t.starts_with('.') || t.starts_with('/'))
        .map(|t| module_root.join(t.split_whitespace().next().unwrap_or(t)))
        .filter(|p| p.is_dir())
        .collect()
}

/// Local directories named by `path = "..."` dependencies in Cargo.toml.
fn cargo_path_deps(root: &Path) -> Vec<PathBuf> {
    let text = std::fs::read_to_string(root.join("Cargo.toml")).unwrap_or_default();
    let mut out = Vec::new();
    for part in text.split("path").skip(1) {
        let rest = part.trim_start();
        let Some(rest) = rest.strip_prefix('=') else { continue };
        let rest = rest.trim_start();
        let Some(rest) = rest.strip_prefix('"') else { continue };
        if let Some(end) = rest.find('"') {
            let p = root.join(&rest[..end]);
            if p.is_dir() && !p.starts_with(root) {
                out.push(p);
            }
        }
    }
    out
}

/// Hash of every file's relative path and content under `roots`, plus `recipe`.
pub fn fingerprint(roots: &[PathBuf], recipe: &str) -> Result<String, String> {
    let mut files: Vec<(String, PathBuf)> = Vec::new();
    for (i, root) in roots.iter().enumerate() {
        let mut stack = vec![root.clone()];
        while let Some(dir) = stack.pop() {
            let entries = std::fs::read_dir(&dir).map_err(|e| format!("cannot list {}: {e}", dir.display()))?;
            for entry in entries.flatten() {
                let path = entry.path();
                let name = entry.file_name().to_string_lossy().into_owned();
                let Ok(mut ft) = entry.file_type() else { continue };
                if ft.is_symlink() {
                    // A linked source file builds as its target does (Go and
                    // cargo read through the link), so its content counts.
                    // Linked folders are not followed: they may loop.
                    match std::fs::metadata(&path) {
                        Ok(m) if m.is_file() => ft = m.file_type(),
                        _ => continue,
                    }
                }
                if ft.is_dir() {
                    if !SKIP_DIRS.contains(&name.as_str()) {
                        stack.push(path);
                    }
                } else if ft.is_file() && !never_builds(&name) {
                    let rel = path.strip_prefix(root).unwrap_or(&path).to_string_lossy().into_owned();
                    files.push((format!("{i}/{rel}"), path));
                    if files.len() > FINGERPRINT_FILES_MAX {
                        return Err(format!("more than {FINGERPRINT_FILES_MAX} files under {}: point the recipe at a smaller folder", root.display()));
                    }
                }
            }
        }
    }
    files.sort();
    let mut parts: Vec<Vec<u8>> = vec![recipe.as_bytes().to_vec()];
    for (rel, path) in &files {
        parts.push(rel.as_bytes().to_vec());
        parts.push(std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?);
    }
    let refs: Vec<&[u8]> = parts.iter().map(Vec::as_slice).collect();
    Ok(hash_hex(&refs))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_linked_source_file_is_fingerprinted_by_its_content() {
        let dir = std::env::temp_dir().join(format!("seedfall-fp-link-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("cell")).unwrap();
        std::fs::write(dir.join("shared.go"), "package main // one\n").unwrap();
        std::os::unix::fs::symlink("../shared.go", dir.join("cell/main.go")).unwrap();
        let roots = [dir.join("cell")];
        let before = fingerprint(&roots, "go").unwrap();
        std::fs::write(dir.join("shared.go"), "package main // two\n").unwrap();
        assert_ne!(fingerprint(&roots, "go").unwrap(), before, "the link's target changed, so must the build");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn cargo_artifact_picks_the_wasm() {
        let out = r#"{"reason":"compiler-artifact","target":{"name":"dep"},"executable":null}
{"reason":"compiler-artifact","target":{"name":"guest"},"executable":"/t/guest.wasm"}
{"reason":"build-finished","success":true}"#;
        assert_eq!(cargo_artifact(out, None), Some(PathBuf::from("/t/guest.wasm")));
        assert_eq!(cargo_artifact(out, Some("other")), None);
    }
}
