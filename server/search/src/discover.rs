//! Discovery for `seedfall init`: the programs of a Go module (its main
//! packages for wasip1) or a cargo package or workspace (its binaries), what
//! they need (the network, Go's storage overlay, Rust's threads target),
//! and the absolute folders their sources name. Returns what it found;
//! `init` asks, prints and writes the config.
use serde_json::{json, Map, Value};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

/// One program found in the project.
#[derive(Clone, Debug)]
pub struct FoundProgram {
    /// Its node name.
    pub name: String,
    /// The recipe (`go` or `cargo` object), relative to the config's folder.
    pub recipe: (&'static str, Value),
    /// Why each recipe switch is on.
    pub why: Vec<String>,
    /// Absolute folders its sources name (`"/data/kv.log"` gives `/data`).
    pub dirs: BTreeSet<String>,
    pub net: bool,
}

/// A main package left out because its Go files are all for other systems
/// (`//go:build linux`): not there for wasip1 at all.
#[derive(Clone, Debug)]
pub struct HostOnly {
    /// Its import path.
    pub import: String,
    /// Its folder as `./cmd/x` below the module (absolute outside it).
    pub package: String,
}

/// Bounds on what init reads.
const SOURCE_FILES_MAX: usize = 2_000;
const SOURCE_BYTES_MAX: u64 = 4 << 20;
const PROGRAMS_MAX: usize = 64;

/// Go modules whose storage code needs seedfall's storage overlay on wasip1
/// (mmap, flock, x/sys/unix): docs/sdk-go.md#storage.
const GO_STORAGE_MODULES: [&str; 6] = ["go.etcd.io/bbolt", "github.com/dgraph-io/badger", "github.com/cockroachdb/pebble", "go.etcd.io/etcd/server/v3/storage/wal", "github.com/hashicorp/raft-boltdb", "github.com/hashicorp/raft-wal"];

/// Dependencies of a cargo package that start threads: rayon's pool and
/// crossbeam's scoped threads (and its channels, used between threads).
fn threads_crate(dep: &str) -> bool {
    dep == "rayon" || dep == "rayon-core" || dep.starts_with("crossbeam")
}

/// What in a Rust source starts a thread, so the program needs
/// wasm32-wasip1-threads. `std::thread` alone does not: `thread::sleep`
/// and `yield_now` work on plain wasm32-wasip1.
const RUST_THREAD_STARTS: [&str; 5] = ["thread::spawn", "thread::scope", "thread::Builder", "rayon::", "crossbeam::"];

/// The first sign, in `sources`, that the program starts threads: the
/// token and the file's name.
fn starts_threads(sources: &[PathBuf]) -> Option<(String, String)> {
    for f in sources.iter().take(SOURCE_FILES_MAX) {
        let Ok(text) = seedfall_sim::files::read_text(f, SOURCE_BYTES_MAX, "the source file") else { continue };
        for line in text.lines() {
            let code = line.split("//").next().unwrap_or("");
            // `use std::thread::{self, spawn};` then a bare `spawn(..)`.
            let imported = code.trim_start().starts_with("use std::thread::") && ["spawn", "scope", "Builder"].iter().any(|w| code.contains(w));
            let token = RUST_THREAD_STARTS.iter().find(|t| code.contains(*t)).map(|t| t.to_string()).or_else(|| imported.then(|| code.trim().trim_end_matches(';').to_string()));
            if let Some(token) = token {
                let name = f.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
                return Some((token, name));
            }
        }
    }
    None
}

/// A node name from a program's name: letters, digits, `-`, `_`.
pub fn node_name(raw: &str) -> Option<String> {
    let name: String = raw.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '-' }).collect();
    let name = name.trim_matches('-').to_string();
    (!name.is_empty()).then_some(name)
}

/// `dir` as a recipe writes it: relative to the config's folder.
fn recipe_dir(dir: &Path, config_dir: &Path) -> String {
    match dir.strip_prefix(config_dir) {
        Ok(r) if r.as_os_str().is_empty() => ".".into(),
        Ok(r) => r.display().to_string(),
        Err(_) => crate::paths::relative(config_dir, dir).display().to_string(),
    }
}

/// The main packages of the Go module in `dir` that build for wasip1, and
/// those that do not (their files are all for other systems).
pub fn go_programs(dir: &Path, config_dir: &Path) -> Result<(Vec<FoundProgram>, Vec<HostOnly>), String> {
    let out = Command::new("go")
        .args(["list", "-e", "-f", "{{.Name}}\t{{.Dir}}\t{{.ImportPath}}\t{{join .Deps \" \"}}\t{{join .GoFiles \" \"}}", "./..."])
        .current_dir(dir)
        .env("GOOS", "wasip1")
        .env("GOARCH", "wasm")
        .env("GOTOOLCHAIN", "local")
        .output()
        .map_err(|e| format!("cannot run go list in {} ({e}): is Go installed? (seedfall doctor)", dir.display()))?;
    if !out.status.success() {
        return Err(format!("go list ./... failed in {}:\n{}", dir.display(), String::from_utf8_lossy(&out.stderr).trim()));
    }
    let module_root = dir.to_path_buf();
    let mut programs = Vec::new();
    let mut found = BTreeSet::new();
    for line in String::from_utf8_lossy(&out.stdout).lines().take(PROGRAMS_MAX * 16) {
        let cols: Vec<&str> = line.split('\t').collect();
        let [name, pkg_dir, import, deps, files] = cols[..] else { continue };
        if name == "main" {
            found.insert(PathBuf::from(pkg_dir));
        }
        if name != "main" || programs.len() >= PROGRAMS_MAX {
            continue;
        }
        let pkg_dir = Path::new(pkg_dir);
        let package = match pkg_dir.strip_prefix(&module_root) {
            Ok(r) if r.as_os_str().is_empty() => ".".to_string(),
            Ok(r) => format!("./{}", r.display()),
            Err(_) => continue,
        };
        let deps: BTreeSet<&str> = deps.split(' ').collect();
        let net = deps.contains("net");
        let storage = GO_STORAGE_MODULES.iter().find(|m| deps.iter().any(|d| d.starts_with(*m)));
        let mut recipe = Map::new();
        recipe.insert("dir".into(), json!(recipe_dir(&module_root, config_dir)));
        if package != "." {
            recipe.insert("package".into(), json!(package));
        }
        let mut why = vec![format!("The main package {import}.")];
        if net {
            recipe.insert("net".into(), json!(true));
            why.push("It imports net (directly or through a library): built with the overlay that puts net and net/http on the simulated network (docs/network.md#go).".into());
        }
        if let Some(m) = storage {
            recipe.insert("storage".into(), json!(true));
            why.push(format!("It uses {m}: built with the storage overlay (mmap, flock) that it needs on wasip1 (docs/sdk-go.md#storage)."));
        }
        let sources: Vec<PathBuf> = files.split(' ').filter(|f| !f.is_empty()).map(|f| pkg_dir.join(f)).collect();
        let base = if package == "." { import.rsplit('/').next().unwrap_or(import) } else { package.rsplit('/').next().unwrap_or(&package) };
        let name = node_name(base).unwrap_or_else(|| "app".into());
        programs.push(FoundProgram { name, recipe: ("go", Value::Object(recipe)), why, dirs: disk_dirs(&sources), net });
    }
    // A main package whose files are all for other systems (`//go:build
    // linux`) is not there for wasip1 at all: the caller says so rather
    // than leave it out without a word.
    let mut host_only = Vec::new();
    for (pkg_dir, import) in host_main_packages(dir).into_iter().filter(|(d, _)| !found.contains(d)).take(PROGRAMS_MAX) {
        let package = match pkg_dir.strip_prefix(&module_root) {
            Ok(r) if r.as_os_str().is_empty() => ".".to_string(),
            Ok(r) => format!("./{}", r.display()),
            Err(_) => pkg_dir.display().to_string(),
        };
        host_only.push(HostOnly { import, package });
    }
    Ok((programs, host_only))
}

/// The main packages `go list` sees for the host's own system (folder and
/// import path); nothing when it fails: this only adds a warning.
fn host_main_packages(dir: &Path) -> Vec<(PathBuf, String)> {
    let Ok(out) = Command::new("go")
        .args(["list", "-e", "-f", "{{.Name}}\t{{.Dir}}\t{{.ImportPath}}", "./..."])
        .current_dir(dir)
        .env_remove("GOOS")
        .env_remove("GOARCH")
        .env("GOTOOLCHAIN", "local")
        .output()
    else {
        return Vec::new();
    };
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines()
        .take(PROGRAMS_MAX * 16)
        .filter_map(|l| match l.split('\t').collect::<Vec<_>>()[..] {
            ["main", d, import] => Some((PathBuf::from(d), import.to_string())),
            _ => None,
        })
        .collect()
}

/// The binaries of the cargo package in `dir`, or of every member when it
/// is a virtual workspace.
pub fn cargo_programs(dir: &Path, config_dir: &Path) -> Result<Vec<FoundProgram>, String> {
    let out = Command::new("cargo")
        .args(["metadata", "--format-version", "1", "--no-deps", "--offline"])
        .current_dir(dir)
        .output()
        .map_err(|e| format!("cannot run cargo metadata in {} ({e}): is Rust installed? (seedfall doctor)", dir.display()))?;
    if !out.status.success() {
        return Err(format!("cargo metadata failed in {}:\n{}", dir.display(), String::from_utf8_lossy(&out.stderr).trim()));
    }
    let meta: Value = serde_json::from_slice(&out.stdout).map_err(|e| format!("cargo metadata printed no JSON: {e}"))?;
    let manifest = std::fs::canonicalize(dir.join("Cargo.toml")).ok();
    let packages: Vec<&Value> = meta["packages"].as_array().into_iter().flatten().collect();
    // The package in -dir (a workspace lists its members too); in a
    // virtual workspace (a Cargo.toml with no package) every member,
    // built from the workspace with `-p`.
    let here: Vec<&Value> = packages.iter().copied().filter(|pkg| pkg["manifest_path"].as_str().and_then(|p| std::fs::canonicalize(p).ok()) == manifest).collect();
    let workspace = here.is_empty();
    let mut programs = Vec::new();
    for pkg in if workspace { packages } else { here } {
        let deps: BTreeSet<&str> = pkg["dependencies"].as_array().into_iter().flatten().filter_map(|d| d["name"].as_str()).collect();
        let net = deps.contains("wasmedge_wasi_socket") || deps.contains("wasmedge-wasi-socket");
        let threads_dep = deps.iter().find(|d| threads_crate(d)).map(|d| d.to_string());
        let kind_is = |t: &Value, kind: &str| t["kind"].as_array().is_some_and(|k| k.iter().any(|x| x == kind));
        let target_dir = |t: &Value| t["src_path"].as_str().map(PathBuf::from).and_then(|p| p.parent().map(Path::to_path_buf));
        // The package's library, which its binaries may start threads through.
        let lib_sources: Vec<PathBuf> = pkg["targets"].as_array().into_iter().flatten().filter(|t| kind_is(t, "lib")).filter_map(target_dir).flat_map(|d| rust_sources(&d)).collect();
        let bins: Vec<&Value> = pkg["targets"].as_array().into_iter().flatten().filter(|t| kind_is(t, "bin")).collect();
        for t in bins.into_iter().take(PROGRAMS_MAX) {
            let bin = t["name"].as_str().unwrap_or_default();
            let mut recipe = Map::new();
            recipe.insert("dir".into(), json!(recipe_dir(dir, config_dir)));
            if workspace {
                recipe.insert("package".into(), json!(pkg["name"].as_str().unwrap_or_default()));
            }
            recipe.insert("bin".into(), json!(bin));
            let mut why = vec![format!("The binary {bin} of {}{}.", pkg["name"].as_str().unwrap_or(""), if workspace { ", a member of the workspace" } else { "" })];
            if net {
                why.push("It depends on wasmedge_wasi_socket: its sockets are on the simulated network (docs/network.md#rust).".into());
            }
            let src = target_dir(t).unwrap_or_else(|| dir.join("src"));
            let sources = rust_sources(&src);
            let threads = match &threads_dep {
                Some(dep) => Some(format!("It depends on {dep}")),
                None => starts_threads(&sources).or_else(|| starts_threads(&lib_sources)).map(|(token, file)| format!("Its sources start threads ({token} in {file})")),
            };
            if let Some(reason) = threads {
                recipe.insert("target".into(), json!(seedfall_sim::config::RustTarget::Wasip1Threads.name()));
                why.push(format!("{reason}: built for wasm32-wasip1-threads, where each thread runs as a fiber of its node (docs/sdk-rust.md#threads)."));
            }
            programs.push(FoundProgram { name: node_name(bin).unwrap_or_else(|| "app".into()), recipe: ("cargo", Value::Object(recipe)), why, dirs: disk_dirs(&sources), net });
        }
    }
    Ok(programs)
}

fn rust_sources(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else { continue };
        for e in entries.flatten() {
            if out.len() >= SOURCE_FILES_MAX {
                return out;
            }
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// Absolute folders named by string literals in the sources: `"/data"`,
/// and the folder of `"/var/lib/kv/wal.log"`. A program that opens a file
/// in a folder nobody made fails at its first write; listing the folder in
/// `disk.dirs` makes it exist at t=0, as it would on a prepared machine.
/// How a literal is used says whether it names a file or a folder (a file
/// without an extension, `/var/lib/app/state`, is still a file when it is
/// written): on its own line, or through the name it is given.
fn disk_dirs(sources: &[PathBuf]) -> BTreeSet<String> {
    let mut dirs = BTreeSet::new();
    for f in sources.iter().take(SOURCE_FILES_MAX) {
        let Ok(text) = seedfall_sim::files::read_text(f, SOURCE_BYTES_MAX, "the source file") else { continue };
        let lines: Vec<&str> = text.lines().collect();
        for line in &lines {
            // Routes and URLs look like paths and are not folders.
            if ["Handle", "http", "url", "URL", "route", "Path =="].iter().any(|w| line.contains(w)) {
                continue;
            }
            for lit in line.split('"').skip(1).step_by(2) {
                let usage = use_on(line).or_else(|| named(line, lit).and_then(|name| lines.iter().filter(|l| mentions(l, name)).find_map(|l| use_on(l))));
                if let Some(d) = absolute_dir(lit, usage) {
                    dirs.insert(d);
                }
            }
        }
    }
    dirs
}

/// What a line does with a path it holds, when it says.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Use {
    File,
    Folder,
}

fn use_on(line: &str) -> Option<Use> {
    const FILE: [&str; 9] = ["OpenFile(", "Create(", "WriteFile(", "ReadFile(", "os.Open(", "Truncate(", "File::create(", "File::open(", "fs::write("];
    const FOLDER: [&str; 6] = ["MkdirAll(", "Mkdir(", "ReadDir(", "create_dir_all(", "create_dir(", "read_dir("];
    if FOLDER.iter().any(|w| line.contains(w)) {
        Some(Use::Folder)
    } else if FILE.iter().any(|w| line.contains(w)) {
        Some(Use::File)
    } else {
        None
    }
}

/// The name a line gives literal `lit` (`stateFile = "/var/lib/app/state"`,
/// `const DIR: &str = "/data";`), if it gives one.
fn named<'a>(line: &'a str, lit: &str) -> Option<&'a str> {
    let before = line.split(&format!("\"{lit}\"")).next()?.trim_end();
    let before = before.strip_suffix('=')?.trim_end().trim_end_matches(':').trim_end();
    // `name`, `name string`, `const NAME: &str`
    let before = before.trim_end_matches("&str").trim_end().trim_end_matches(':').trim_end();
    let name = before.split_whitespace().find(|w| w.chars().next().is_some_and(|c| c.is_alphabetic() || c == '_') && !["const", "var", "let", "static", "pub", "string"].contains(w))?;
    name.chars().all(|c| c.is_alphanumeric() || c == '_').then_some(name)
}

/// Whether `line` uses the identifier `name` (not inside a longer one).
fn mentions(line: &str, name: &str) -> bool {
    line.match_indices(name).any(|(i, _)| {
        let ok = |c: Option<char>| c.is_none_or(|c| !(c.is_alphanumeric() || c == '_'));
        ok(line[..i].chars().next_back()) && ok(line[i + name.len()..].chars().next())
    })
}

/// The folder an absolute path literal names, if it looks like a path of
/// the program's own data (not `/`, not the system's folders, no spaces or
/// format verbs).
fn absolute_dir(lit: &str, usage: Option<Use>) -> Option<String> {
    const SYSTEM: [&str; 6] = ["/dev", "/proc", "/sys", "/etc", "/usr", "/bin"];
    if !lit.starts_with('/') || lit.len() < 2 || lit.len() > 200 || lit.contains("//") {
        return None;
    }
    if !lit.chars().all(|c| c.is_ascii_alphanumeric() || "/._-".contains(c)) {
        return None;
    }
    let trimmed = lit.trim_end_matches('/');
    let last = trimmed.rsplit('/').next().unwrap_or("");
    // A file (written or read as one, or a last part with an extension):
    // its folder is wanted.
    let file = match usage {
        Some(u) => u == Use::File,
        None => last.contains('.'),
    };
    let dir = if file { trimmed.rsplit_once('/').map(|(d, _)| d).unwrap_or("") } else { trimmed };
    if dir.is_empty() || SYSTEM.iter().any(|s| dir == *s || dir.starts_with(&format!("{s}/"))) {
        return None;
    }
    Some(dir.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sees_data_folders_in_literals() {
        assert_eq!(absolute_dir("/data", None), Some("/data".into()));
        assert_eq!(absolute_dir("/var/lib/kv/wal.log", None), Some("/var/lib/kv".into()));
        assert_eq!(absolute_dir("/kv.log", None), None);
        assert_eq!(absolute_dir("/etc/hosts", None), None);
        assert_eq!(absolute_dir("/api/v1/%s", None), None);
        assert_eq!(absolute_dir("/", None), None);
        assert_eq!(absolute_dir("/var/lib/app/state", Some(Use::File)), Some("/var/lib/app".into()));
    }

    #[test]
    fn a_file_without_an_extension_is_a_file_when_it_is_written() {
        let dir = std::env::temp_dir().join(format!("seedfall-init-dirs-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let src = dir.join("main.go");
        std::fs::write(
            &src,
            "package main\n\nconst stateFile = \"/var/lib/app/state\"\n\nfunc main() {\n\tos.MkdirAll(\"/var/lib/app\", 0o755)\n\tos.WriteFile(stateFile, nil, 0o644)\n\tos.WriteFile(\"/srv/db/current\", nil, 0o644)\n\tos.MkdirAll(\"/srv/db/wal\", 0o755)\n}\n",
        )
        .unwrap();
        let dirs: Vec<String> = disk_dirs(&[src]).into_iter().collect();
        assert_eq!(dirs, ["/srv/db", "/srv/db/wal", "/var/lib/app"]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn threads_are_seen_where_they_start_not_where_a_thread_sleeps() {
        let dir = std::env::temp_dir().join(format!("seedfall-init-threads-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = |name: &str, text: &str| {
            let p = dir.join(name);
            std::fs::write(&p, text).unwrap();
            p
        };
        let sleeps = file("sleeps.rs", "use std::thread;\nfn main() {\n    // thread::spawn would need threads\n    thread::sleep(std::time::Duration::from_millis(1));\n    std::thread::yield_now();\n}\n");
        assert_eq!(starts_threads(&[sleeps.clone()]), None);
        let spawns = file("spawns.rs", "fn main() {\n    let h = std::thread::spawn(|| 1);\n    h.join().unwrap();\n}\n");
        assert_eq!(starts_threads(&[sleeps.clone(), spawns]), Some(("thread::spawn".into(), "spawns.rs".into())));
        let imported = file("imported.rs", "use std::thread::{self, scope};\nfn main() { scope(|_| {}); }\n");
        assert_eq!(starts_threads(&[imported]), Some(("use std::thread::{self, scope}".into(), "imported.rs".into())));
        let pool = file("pool.rs", "use rayon::prelude::*;\nfn main() {}\n");
        assert_eq!(starts_threads(&[pool]).unwrap().0, "rayon::");
        assert!(threads_crate("rayon") && threads_crate("crossbeam-channel") && !threads_crate("serde"));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn node_names_are_config_names() {
        assert_eq!(node_name("kv.v2").as_deref(), Some("kv-v2"));
        assert_eq!(node_name("..."), None);
    }
}

