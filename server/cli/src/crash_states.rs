//! `seedfall crash-states`: every tree a power loss could leave on each
//! node's disk during one run, under its file-system model.
//!
//! At every moment a crash can land (the start, after each host call that
//! touched the disk, before each fsync takes effect, the end), the disk is
//! crashed in a copy once per choice of torn sectors kept, and each distinct
//! tree is listed with the first moment it could appear. It is what the
//! conformance check of docs/disk.md compares with a real file system, and a
//! way to see what recovery code must cope with.
use clap::Args;
use seedfall_sim::disk::{FsModel, TreeEntry};
use seedfall_sim::{run, RunOptions, VTime};

#[derive(Args)]
pub struct CrashStatesArgs {
    #[command(flatten)]
    pub run: crate::schedule::RunSpec,
    /// Every disk under this model, whatever the config says (ext4, posix, xfs).
    #[arg(long)]
    pub model: Option<String>,
    /// Only this node instance's disk.
    #[arg(long)]
    pub node: Option<String>,
    /// JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

pub const FORMAT_VERSION: u32 = 1;

#[derive(serde::Serialize)]
struct NodeStates<'a> {
    node: &'a str,
    model: &'static str,
    moments: u64,
    sampled_moments: u64,
    choices_max: u32,
    trees_dropped: u64,
    trees: Vec<&'a seedfall_sim::disk::CrashTree>,
}

fn entry_line(e: &TreeEntry) -> String {
    if e.dir {
        format!("{}/", e.path)
    } else {
        format!("{:<40} {:>10} bytes  {}", e.path, e.size, e.hash.as_deref().unwrap_or("-"))
    }
}

pub fn main(a: CrashStatesArgs) -> i32 {
    let model = match a.model.as_deref().map(|m| (m, FsModel::parse(m))) {
        None => None,
        Some((_, Some(m))) => Some(m),
        Some((m, None)) => {
            eprintln!("seedfall: -model: expected one of {}, found \"{m}\"", FsModel::ALL.iter().map(|m| m.name()).collect::<Vec<_>>().join(", "));
            return 2;
        }
    };
    let (project, schedule) = match a.run.load(a.json) {
        Ok(x) => x,
        Err(code) => return code,
    };
    let outcome = run(&project.program, &schedule, &RunOptions { crash_states: true, model, ..RunOptions::default() });
    let instances = project.program.config.instances();
    if let Some(n) = &a.node {
        if !instances.iter().any(|(_, name)| name == n) {
            let names: Vec<&str> = instances.iter().map(|(_, name)| name.as_str()).collect();
            eprintln!("seedfall: -node: no node instance \"{n}\" (instances: {})", names.join(", "));
            return 2;
        }
    }
    let nodes: Vec<NodeStates> = instances
        .iter()
        .zip(&outcome.crash_states)
        .zip(&outcome.disk_models)
        .filter(|(((_, name), _), _)| a.node.as_ref().is_none_or(|n| n == name))
        .map(|(((_, name), s), m)| NodeStates {
            node: name,
            model: m.name(),
            moments: s.moments,
            sampled_moments: s.sampled_moments,
            choices_max: s.choices_max,
            trees_dropped: s.trees_dropped,
            trees: s.trees.values().collect(),
        })
        .collect();
    if a.json {
        let doc = serde_json::json!({ "version": FORMAT_VERSION, "seed": outcome.seed, "trace_hash": format!("{:016x}", outcome.trace_hash), "nodes": nodes });
        println!("{}", serde_json::to_string_pretty(&doc).unwrap());
        return 0;
    }
    println!("seedfall crash-states: {}, seed {}", a.run.config.display(), outcome.seed);
    for n in &nodes {
        let sampled = if n.sampled_moments > 0 { format!("; {} moments had too many choices to try all, and were sampled", n.sampled_moments) } else { String::new() };
        let plural = |k: u64, one: &str, many: &str| if k == 1 { format!("{k} {one}") } else { format!("{k} {many}") };
        println!(
            "{} ({}): {} a crash could leave, over {} (at most {} at one moment{sampled})",
            n.node,
            n.model,
            plural(n.trees.len() as u64, "tree", "trees"),
            plural(n.moments, "moment", "moments"),
            plural(n.choices_max as u64, "choice", "choices")
        );
        for (i, t) in n.trees.iter().enumerate() {
            println!("  tree {} (first after disk op {}, t={}):", i + 1, t.first_op, VTime(t.first_ns));
            if t.entries.is_empty() {
                println!("    (empty)");
            }
            for e in &t.entries {
                println!("    {}", crate::output::safe(&entry_line(e)));
            }
        }
        if n.trees_dropped > 0 {
            println!("  and {} more trees, past the bound of {}", n.trees_dropped, seedfall_sim::disk::CRASH_TREES_MAX);
        }
    }
    if let Some(f) = &outcome.failure {
        println!("the run failed: {}: {}", f.node, crate::output::safe(&f.message));
    }
    0
}
