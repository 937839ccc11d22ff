//! `seedfall init`: a first `seedfall.json` for a Go module or a cargo
//! package. It finds the programs (Go main packages, cargo binaries), sees
//! what they need (the network, disk folders), and writes one node per
//! program with a fault mix to start from, each choice explained in a
//! `"//"` comment. On a terminal it asks what it cannot see (replicas,
//! arguments); elsewhere flags say it, and it asks nothing.
use clap::Args;
use serde_json::{json, Map, Value};
use std::collections::BTreeSet;
use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::Command;

#[derive(Args)]
pub struct InitArgs {
    /// The Go module or cargo package (a folder with go.mod or Cargo.toml).
    #[arg(long, default_value = ".")]
    pub dir: PathBuf,
    /// Where to write the config (default: seedfall.json in -dir).
    #[arg(short = 'o', long = "out", value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Overwrite an existing config.
    #[arg(long)]
    pub force: bool,
    /// Virtual time a run lasts.
    #[arg(long, default_value = "10s")]
    pub duration: String,
    /// Only these programs (a Go package path such as ./cmd/server or its
    /// last element, a cargo binary name); repeatable.
    #[arg(long = "bin", value_name = "NAME")]
    pub bins: Vec<String>,
    /// Instances of each node (`name#1` .. `name#N`).
    #[arg(long)]
    pub replicas: Option<u32>,
    /// Arguments every node's program gets, as one string: `-args "-port 7000"`.
    #[arg(long, value_name = "ARGS", allow_hyphen_values = true)]
    pub args: Option<String>,
    /// Instead of one node per program: a node NAME of the (one chosen)
    /// program with these arguments, `-node "server=-mode server"`; repeatable.
    #[arg(long = "node", value_name = "NAME=ARGS", allow_hyphen_values = true)]
    pub nodes: Vec<String>,
    /// Nodes that serve until the run's end (`workload: false`); repeatable.
    #[arg(long = "server", value_name = "NAME")]
    pub servers: Vec<String>,
}

/// One program found in the project.
#[derive(Clone, Debug)]
struct Program {
    /// Its node name.
    name: String,
    /// The recipe (`go` or `cargo` object), relative to the config's folder.
    recipe: (&'static str, Value),
    /// Why each recipe switch is on.
    why: Vec<String>,
    /// Absolute folders its sources name (`"/data/kv.log"` gives `/data`).
    dirs: BTreeSet<String>,
    net: bool,
}

/// Bounds on what init reads.
const SOURCE_FILES_MAX: usize = 2_000;
const SOURCE_BYTES_MAX: u64 = 4 << 20;
const PROGRAMS_MAX: usize = 64;

/// Go modules whose storage code needs seedfall's storage overlay on wasip1
/// (mmap, flock, x/sys/unix): docs/sdk-go.md#storage.
const GO_STORAGE_MODULES: [&str; 6] = ["go.etcd.io/bbolt", "github.com/dgraph-io/badger", "github.com/cockroachdb/pebble", "go.etcd.io/etcd/server/v3/storage/wal", "github.com/hashicorp/raft-boltdb", "github.com/hashicorp/raft-wal"];

pub fn main(a: InitArgs) -> i32 {
    match run(a) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("seedfall init: {e}");
            2
        }
    }
}

fn run(a: InitArgs) -> Result<(), String> {
    let dir = std::fs::canonicalize(&a.dir).map_err(|e| format!("-dir {}: {e}", a.dir.display()))?;
    let out = a.out.clone().unwrap_or_else(|| dir.join("seedfall.json"));
    if out.exists() && !a.force {
        return Err(format!("{} exists: give -force to overwrite it, or -o FILE for another name", crate::output::relative(&out)));
    }
    let config_dir = std::fs::canonicalize(out.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."))).map_err(|e| format!("-o {}: {e}", out.display()))?;
    let (kind, mut programs) = if dir.join("go.mod").is_file() {
        ("Go module", go_programs(&dir, &config_dir)?)
    } else if dir.join("Cargo.toml").is_file() {
        ("cargo package", cargo_programs(&dir, &config_dir)?)
    } else {
        return Err(format!("{} has no go.mod or Cargo.toml: run seedfall init in a Go module or a cargo package (or give -dir)", dir.display()));
    };
    if !a.bins.is_empty() {
        programs.retain(|p| a.bins.iter().any(|b| *b == p.name || p.recipe.1.get("package").and_then(Value::as_str) == Some(b.as_str()) || p.recipe.1.get("bin").and_then(Value::as_str) == Some(b.as_str())));
        if programs.is_empty() {
            return Err(format!("-bin {}: no such program here", a.bins.join(", ")));
        }
    }
    if programs.is_empty() {
        return Err(format!("no program found in {} (a Go main package, a cargo binary)", dir.display()));
    }
    let interactive = std::io::stdin().is_terminal() && std::io::stdout().is_terminal();
    let nodes = nodes_of(&a, &programs, interactive)?;
    let networked = programs.iter().any(|p| p.net);
    let config = config_of(&a, kind, &dir, &nodes, networked);
    let mut text = serde_json::to_string_pretty(&config).unwrap();
    text.push('\n');
    seedfall_search::cache::write_atomic(&out, text.as_bytes()).map_err(|e| format!("cannot write {}: {e}", out.display()))?;
    // What it wrote must load: the same parser as every command.
    if let Err(e) = seedfall_sim::Config::load(&out) {
        return Err(format!("wrote a config this seedfall does not read (a bug, please report it): {e}"));
    }
    let rel = crate::output::relative(&out);
    let shown = crate::output::relative(&dir);
    println!("wrote {rel}: {} node{} from the {kind} in {}", nodes.len(), if nodes.len() == 1 { "" } else { "s" }, if shown.is_empty() { "." } else { &shown });
    for n in &nodes {
        println!("  {}", n.summary());
    }
    println!("faults: crashes with torn writes{}", if networked { ", and network partitions (a program uses the network)" } else { "" });
    println!();
    println!("next:");
    println!("  seedfall doctor -c {rel}        checks the machine and builds every node");
    println!("  seedfall run -c {rel} -seeds 1-100");
    println!();
    println!("A run passes unless a program fails. To say what must hold, add a property:");
    match kind {
        "Go module" => println!("  import sim \"seedfall.dev/sdk\"   then   sim.Always(acked <= stored, \"acknowledged writes survive crashes\", nil)"),
        _ => println!("  seedfall-sdk = {{ path = ... }}   then   seedfall::always!(acked <= stored, \"acknowledged writes survive crashes\")"),
    }
    println!("  (docs/properties.md; every field of the config: docs/config.md)");
    Ok(())
}

/// A node to write.
struct Node {
    name: String,
    program: Program,
    args: Vec<String>,
    replicas: Option<u32>,
    server: bool,
}

impl Node {
    fn summary(&self) -> String {
        let replicas = self.replicas.map(|r| format!(" x{r}")).unwrap_or_default();
        let args = if self.args.is_empty() { String::new() } else { format!(" {}", self.args.join(" ")) };
        let role = if self.server { " (serves until the end)" } else { "" };
        format!("{}{replicas}: {}{args}{role}", self.name, recipe_line(&self.program))
    }
}

fn recipe_line(p: &Program) -> String {
    let (kind, r) = &p.recipe;
    match *kind {
        "go" => format!("go {}{}", r["package"].as_str().unwrap_or("."), if p.net { " (net)" } else { "" }),
        _ => format!("cargo --bin {}", r["bin"].as_str().unwrap_or("")),
    }
}

fn nodes_of(a: &InitArgs, programs: &[Program], interactive: bool) -> Result<Vec<Node>, String> {
    let args = a.args.as_deref().map(split_args).unwrap_or_default();
    let mut nodes = Vec::new();
    if !a.nodes.is_empty() {
        let [program] = programs else {
            return Err(format!("-node makes nodes of one program, and there are {} here: choose one with -bin ({})", programs.len(), programs.iter().map(|p| p.name.as_str()).collect::<Vec<_>>().join(", ")));
        };
        for spec in &a.nodes {
            let (name, rest) = spec.split_once('=').unwrap_or((spec.as_str(), ""));
            let name = node_name(name).ok_or_else(|| format!("-node {spec:?}: a node name is letters, digits, '-' or '_'"))?;
            let mut node_args = args.clone();
            node_args.extend(split_args(rest));
            nodes.push(Node { name, program: program.clone(), args: node_args, replicas: a.replicas, server: false });
        }
    } else {
        for p in programs {
            nodes.push(Node { name: p.name.clone(), program: p.clone(), args: args.clone(), replicas: a.replicas, server: false });
        }
    }
    let mut seen = BTreeSet::new();
    for n in &mut nodes {
        if !seen.insert(n.name.clone()) {
            return Err(format!("two nodes would be named \"{}\": name them with -node NAME=ARGS", n.name));
        }
        n.server = a.servers.contains(&n.name);
    }
    for s in &a.servers {
        if !seen.contains(s) {
            return Err(format!("-server {s}: no node of that name (nodes: {})", seen.iter().cloned().collect::<Vec<_>>().join(", ")));
        }
    }
    if interactive {
        ask(&mut nodes)?;
    }
    Ok(nodes)
}

/// On a terminal: what flags did not say, node by node (Enter keeps it).
fn ask(nodes: &mut [Node]) -> Result<(), String> {
    let stdin = std::io::stdin();
    let mut line = String::new();
    let mut prompt = |q: &str| -> Result<String, String> {
        print!("{q}");
        std::io::stdout().flush().map_err(|e| e.to_string())?;
        line.clear();
        stdin.lock().read_line(&mut line).map_err(|e| e.to_string())?;
        Ok(line.trim().to_string())
    };
    for n in nodes {
        let args = prompt(&format!("{}: arguments [{}]: ", n.name, n.args.join(" ")))?;
        if !args.is_empty() {
            n.args = split_args(&args);
        }
        let replicas = prompt(&format!("{}: instances [{}]: ", n.name, n.replicas.unwrap_or(1)))?;
        if let Ok(r) = replicas.parse::<u32>() {
            n.replicas = (r > 1).then_some(r).or(n.replicas.filter(|_| r == 1));
        }
        let server = prompt(&format!("{}: does it serve until the run ends, rather than finish its work? [{}]: ", n.name, if n.server { "y" } else { "n" }))?;
        if !server.is_empty() {
            n.server = server.starts_with(['y', 'Y']);
        }
    }
    Ok(())
}

/// Arguments as a shell would split them (quotes group; no expansion).
fn split_args(text: &str) -> Vec<String> {
    let (mut out, mut cur, mut quote, mut any) = (Vec::new(), String::new(), None, false);
    for c in text.chars() {
        match (quote, c) {
            (None, '\'' | '"') => {
                quote = Some(c);
                any = true;
            }
            (Some(q), c) if c == q => quote = None,
            (None, c) if c.is_whitespace() => {
                if any {
                    out.push(std::mem::take(&mut cur));
                    any = false;
                }
            }
            (_, c) => {
                cur.push(c);
                any = true;
            }
        }
    }
    if any {
        out.push(cur);
    }
    out
}

/// A node name from a program's name: letters, digits, `-`, `_`.
fn node_name(raw: &str) -> Option<String> {
    let name: String = raw.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '-' }).collect();
    let name = name.trim_matches('-').to_string();
    (!name.is_empty()).then_some(name)
}

/// The config as written: fields in the order the docs list them (a JSON
/// map would sort them), each choice explained in its object's `"//"`.
#[derive(serde::Serialize)]
struct ConfigOut {
    #[serde(rename = "//")]
    comment: Vec<String>,
    version: u32,
    duration: String,
    nodes: Vec<NodeOut>,
    faults: FaultsOut,
}

#[derive(serde::Serialize)]
struct NodeOut {
    #[serde(rename = "//", skip_serializing_if = "Vec::is_empty")]
    comment: Vec<String>,
    name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    replicas: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    go: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    cargo: Option<Value>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    args: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    workload: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    disk: Option<Value>,
}

#[derive(serde::Serialize)]
struct FaultsOut {
    #[serde(rename = "//")]
    comment: Vec<String>,
    crash: Value,
    torn_writes: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    partition: Option<Value>,
}

fn config_of(a: &InitArgs, kind: &str, dir: &Path, nodes: &[Node], networked: bool) -> ConfigOut {
    let folder = dir.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default();
    let mut why = vec!["Power loss twice a virtual second per instance, back 5-50 ms later; half of the crashes land inside a disk operation, and unsynced writes tear.".to_string()];
    if networked {
        why.push("A program uses the network: partitions once a virtual second, 20-300 ms long, half of them one way.".into());
    }
    why.push("More families (fsync errors, pauses, clock faults, storage faults): docs/faults.md.".into());
    ConfigOut {
        comment: vec![format!("Written by seedfall init for the {kind} in {folder}."), "Every field: docs/config.md. Comments (\"//\") are allowed in any object.".into()],
        version: 1,
        duration: a.duration.clone(),
        nodes: nodes.iter().map(node_out).collect(),
        faults: FaultsOut {
            comment: why,
            crash: json!({ "rate": 2, "restart_after": "5ms-50ms", "during_disk_op": 0.5 }),
            torn_writes: true,
            partition: networked.then(|| json!({ "rate": 1, "duration": "20ms-300ms", "one_way": 0.5 })),
        },
    }
}

fn node_out(n: &Node) -> NodeOut {
    let mut why = n.program.why.clone();
    if n.server {
        why.push("It serves until the run ends (workload: false): a run ends early only once every workload node has exited 0.".into());
    }
    if !n.program.dirs.is_empty() {
        why.push(format!("Its sources name {}: they exist at t=0 (disk.dirs).", n.program.dirs.iter().cloned().collect::<Vec<_>>().join(", ")));
    }
    let (kind, recipe) = &n.program.recipe;
    NodeOut {
        comment: why,
        name: n.name.clone(),
        replicas: n.replicas,
        go: (*kind == "go").then(|| recipe.clone()),
        cargo: (*kind == "cargo").then(|| recipe.clone()),
        args: n.args.clone(),
        workload: n.server.then_some(false),
        disk: (!n.program.dirs.is_empty()).then(|| json!({ "dirs": n.program.dirs })),
    }
}

/// `dir` as a recipe writes it: relative to the config's folder.
fn recipe_dir(dir: &Path, config_dir: &Path) -> String {
    match dir.strip_prefix(config_dir) {
        Ok(r) if r.as_os_str().is_empty() => ".".into(),
        Ok(r) => r.display().to_string(),
        Err(_) => seedfall_search::paths::relative(config_dir, dir).display().to_string(),
    }
}

fn go_programs(dir: &Path, config_dir: &Path) -> Result<Vec<Program>, String> {
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
        programs.push(Program { name, recipe: ("go", Value::Object(recipe)), why, dirs: disk_dirs(&sources), net });
    }
    // A main package whose files are all for other systems (`//go:build
    // linux`) is not there for wasip1 at all: say so rather than leave it
    // out without a word.
    for (pkg_dir, import) in host_main_packages(dir)
        .into_iter()
        .filter(|(d, _)| !found.contains(d))
        .take(PROGRAMS_MAX)
    {
        let shown = match pkg_dir.strip_prefix(&module_root) {
            Ok(r) if r.as_os_str().is_empty() => ".".to_string(),
            Ok(r) => format!("./{}", r.display()),
            Err(_) => pkg_dir.display().to_string(),
        };
        eprintln!("seedfall init: skipped {import} ({shown}): a main package whose Go files are all for other systems (their build constraints leave none for GOOS=wasip1); seedfall runs programs built for wasip1 (docs/sdk-go.md)");
    }
    Ok(programs)
}

/// The main packages `go list` sees for the host's own system (folder and
/// import path); nothing when it fails: this only adds a warning.
fn host_main_packages(dir: &Path) -> Vec<(PathBuf, String)> {
    let Ok(out) = Command::new("go")
        .args([
            "list",
            "-e",
            "-f",
            "{{.Name}}\t{{.Dir}}\t{{.ImportPath}}",
            "./...",
        ])
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

fn cargo_programs(dir: &Path, config_dir: &Path) -> Result<Vec<Program>, String> {
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
    let here: Vec<&Value> = packages
        .iter()
        .copied()
        .filter(|pkg| {
            pkg["manifest_path"]
                .as_str()
                .and_then(|p| std::fs::canonicalize(p).ok())
                == manifest
        })
        .collect();
    let workspace = here.is_empty();
    let mut programs = Vec::new();
    for pkg in if workspace { packages } else { here } {
        let deps: BTreeSet<&str> = pkg["dependencies"].as_array().into_iter().flatten().filter_map(|d| d["name"].as_str()).collect();
        let net = deps.contains("wasmedge_wasi_socket") || deps.contains("wasmedge-wasi-socket");
        let bins: Vec<&Value> = pkg["targets"].as_array().into_iter().flatten().filter(|t| t["kind"].as_array().is_some_and(|k| k.iter().any(|x| x == "bin"))).collect();
        for t in bins.into_iter().take(PROGRAMS_MAX) {
            let bin = t["name"].as_str().unwrap_or_default();
            let mut recipe = Map::new();
            recipe.insert("dir".into(), json!(recipe_dir(dir, config_dir)));
            if workspace {
                recipe.insert(
                    "package".into(),
                    json!(pkg["name"].as_str().unwrap_or_default()),
                );
            }
            recipe.insert("bin".into(), json!(bin));
            let mut why = vec![format!(
                "The binary {bin} of {}{}.",
                pkg["name"].as_str().unwrap_or(""),
                if workspace {
                    ", a member of the workspace"
                } else {
                    ""
                }
            )];
            if net {
                why.push("It depends on wasmedge_wasi_socket: its sockets are on the simulated network (docs/network.md#rust).".into());
            }
            let src = t["src_path"].as_str().map(PathBuf::from).and_then(|p| p.parent().map(Path::to_path_buf)).unwrap_or_else(|| dir.join("src"));
            let sources = rust_sources(&src);
            programs.push(Program { name: node_name(bin).unwrap_or_else(|| "app".into()), recipe: ("cargo", Value::Object(recipe)), why, dirs: disk_dirs(&sources), net });
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
    fn splits_arguments_like_a_shell() {
        assert_eq!(split_args("-mode server -port 7000"), ["-mode", "server", "-port", "7000"]);
        assert_eq!(split_args("-msg 'a b' \"\" x"), ["-msg", "a b", "", "x"]);
    }

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
    fn node_names_are_config_names() {
        assert_eq!(node_name("kv.v2").as_deref(), Some("kv-v2"));
        assert_eq!(node_name("..."), None);
    }
}
