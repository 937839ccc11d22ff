//! `seedfall init`: a first `seedfall.json` for a Go module or a cargo
//! package. `seedfall_search::discover` finds the programs (Go main
//! packages, cargo binaries) and what they need (the network, disk
//! folders); this writes one node per program with a fault mix to start
//! from, each choice explained in a `"//"` comment. On a terminal it asks
//! what it cannot see (replicas, arguments); elsewhere flags say it, and it
//! asks nothing.
use clap::Args;
use seedfall_search::discover::{self, node_name, FoundProgram, HostOnly};
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};

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
        let (programs, host_only) = discover::go_programs(&dir, &config_dir)?;
        for HostOnly { import, package } in host_only {
            eprintln!("seedfall init: skipped {import} ({package}): a main package whose Go files are all for other systems (their build constraints leave none for GOOS=wasip1); seedfall runs programs built for wasip1 (docs/sdk-go.md)");
        }
        ("Go module", programs)
    } else if dir.join("Cargo.toml").is_file() {
        ("cargo package", discover::cargo_programs(&dir, &config_dir)?)
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
    program: FoundProgram,
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

fn recipe_line(p: &FoundProgram) -> String {
    let (kind, r) = &p.recipe;
    match *kind {
        "go" => format!("go {}{}", r["package"].as_str().unwrap_or("."), if p.net { " (net)" } else { "" }),
        _ => format!("cargo --bin {}{}", r["bin"].as_str().unwrap_or(""), r.get("target").and_then(Value::as_str).map(|t| format!(" ({t})")).unwrap_or_default()),
    }
}

fn nodes_of(a: &InitArgs, programs: &[FoundProgram], interactive: bool) -> Result<Vec<Node>, String> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_arguments_like_a_shell() {
        assert_eq!(split_args("-mode server -port 7000"), ["-mode", "server", "-port", "7000"]);
        assert_eq!(split_args("-msg 'a b' \"\" x"), ["-msg", "a b", "", "x"]);
    }
}
