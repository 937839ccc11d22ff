//! The conformance check: for every litmus workload, the trees a real file
//! system left (a recording of `real`) against the trees a seedfall model
//! allows (`seedfall crash-states`, every moment and every choice of kept
//! sectors).
//!
//! - missed: trees the real file system produced that the model never
//!   allows: a state seedfall would never test. Must be 0.
//! - extra: trees the model allows that the real file system never
//!   produced: each is fixed or justified in docs/disk.md.
use crate::tree::{Entry, Tree};
use crate::Recording;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The model each real file system is checked against, beside posix.
pub fn model_for(fs: &str) -> &str {
    fs
}

#[derive(Debug, Serialize, Deserialize)]
pub struct ModelTrees {
    pub moments: u64,
    pub sampled_moments: u64,
    pub trees: Vec<Vec<Entry>>,
}

/// One (model, file system, workload) cell.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Cell {
    pub workload: String,
    pub real: usize,
    pub model: usize,
    pub missed: Vec<String>,
    pub extra: Vec<String>,
    /// Real images that did not mount (not comparable).
    pub unmountable: usize,
    /// The model's enumeration was sampled somewhere (not exhaustive).
    pub sampled: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Pair {
    pub model: String,
    pub fs: String,
    pub kernel: String,
    pub cells: Vec<Cell>,
}

impl Pair {
    pub fn missed(&self) -> usize {
        self.cells.iter().map(|c| c.missed.len()).sum()
    }
    pub fn extra(&self) -> usize {
        self.cells.iter().map(|c| c.extra.len()).sum()
    }

    /// Extras per class, and those no class justifies ("model/workload: tree").
    pub fn classes(&self, j: &Justified) -> (BTreeMap<String, usize>, Vec<String>) {
        let mut by = BTreeMap::new();
        let mut none = Vec::new();
        for c in &self.cells {
            for e in &c.extra {
                match j.class(&self.model, &c.workload, e) {
                    Some(class) => *by.entry(class.to_string()).or_insert(0) += 1,
                    None => none.push(format!("{}/{}: {e}", self.model, c.workload)),
                }
            }
        }
        (by, none)
    }
}

/// Justifications that no longer match an extra (the model changed): the
/// file must stay true.
pub fn stale(report: &Report, j: &Justified) -> Vec<String> {
    let mut out = Vec::new();
    for (key, trees) in &j.extras {
        let (model, workload) = key.split_once('/').unwrap_or((key, ""));
        for tree in trees.keys() {
            let still = report.pairs.iter().filter(|p| p.model == model).flat_map(|p| &p.cells).any(|c| c.workload == workload && c.extra.contains(tree));
            if !still && report.pairs.iter().any(|p| p.model == model) {
                out.push(format!("{key}: {tree}"));
            }
        }
    }
    out
}

#[derive(Debug, Serialize, Deserialize)]
pub struct Report {
    pub version: u32,
    pub sector_bytes: u64,
    pub pairs: Vec<Pair>,
}

/// Why an extra tree is not a false alarm, by class; read from
/// tests/oracle/justified.json.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Justified {
    pub version: u32,
    /// Class name -> the documented reason (docs/disk.md quotes it).
    pub classes: BTreeMap<String, String>,
    /// Model -> class: every extra of that model is of this class.
    #[serde(default)]
    pub whole_models: BTreeMap<String, String>,
    /// "model/workload" -> tree key -> class.
    #[serde(default)]
    pub extras: BTreeMap<String, BTreeMap<String, String>>,
}

impl Justified {
    pub fn read(path: &Path) -> Result<Justified, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let j: Justified = serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        if j.version != 1 {
            return Err(format!("{}: $.version: expected 1, found {}", path.display(), j.version));
        }
        for (what, class) in j.whole_models.iter().map(|(m, c)| (m.clone(), c)).chain(j.extras.iter().flat_map(|(k, t)| t.iter().map(move |(tree, c)| (format!("{k}: {tree}"), c)))) {
            if !j.classes.contains_key(class) {
                return Err(format!("{}: {what}: class {class:?} is not in $.classes", path.display()));
            }
        }
        Ok(j)
    }

    /// The class justifying `tree`, an extra of `model` on `workload`.
    pub fn class(&self, model: &str, workload: &str, tree: &str) -> Option<&str> {
        self.whole_models.get(model).or_else(|| self.extras.get(&format!("{model}/{workload}")).and_then(|t| t.get(tree))).map(String::as_str)
    }
}

/// A workload's seedfall config: the litmus guest, its start tree seeded.
pub fn write_config(litmus_dir: &Path, litmus_bin: &Path, workload: &str, dir: &Path, sector_bytes: u64) -> Result<PathBuf, String> {
    let seed = dir.join("seed");
    let _ = std::fs::remove_dir_all(&seed);
    std::fs::create_dir_all(&seed).map_err(|e| format!("{}: {e}", seed.display()))?;
    crate::fs::run(Command::new(litmus_bin).args(["setup", workload]).arg(&seed))?;
    let mut dirs = Vec::new();
    let mut files = BTreeMap::new();
    collect(&seed, "", &mut dirs, &mut files)?;
    let litmus_dir = litmus_dir.canonicalize().map_err(|e| format!("{}: {e}", litmus_dir.display()))?;
    let config = serde_json::json!({
        "version": 1,
        "name": format!("litmus-{workload}"),
        "duration": "10s",
        "disk": { "sector_bytes": sector_bytes },
        "nodes": [{
            "name": "litmus",
            "cargo": { "dir": litmus_dir },
            "args": ["run", workload, "/"],
            "disk": { "dirs": dirs, "files": files },
        }],
    });
    let path = dir.join("seedfall.json");
    crate::write_atomic(&path, serde_json::to_string_pretty(&config).unwrap().as_bytes())?;
    Ok(path)
}

fn collect(dir: &Path, prefix: &str, dirs: &mut Vec<String>, files: &mut BTreeMap<String, String>) -> Result<(), String> {
    let mut names: Vec<String> = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    for n in names {
        let p = dir.join(&n);
        let guest = format!("{prefix}/{n}");
        if p.is_dir() {
            dirs.push(guest.clone());
            collect(&p, &guest, dirs, files)?;
        } else {
            files.insert(guest.clone(), format!("seed{guest}"));
        }
    }
    Ok(())
}

/// `seedfall crash-states` of one config under one model.
pub fn model_trees(seedfall: &Path, config: &Path, model: &str) -> Result<ModelTrees, String> {
    let out = Command::new(seedfall)
        .args(["crash-states", "-seed", "1", "-json", "-model", model, "-c"])
        .arg(config)
        .output()
        .map_err(|e| format!("{}: {e}", seedfall.display()))?;
    if !out.status.success() {
        return Err(format!("seedfall crash-states -c {} -model {model}: {}", config.display(), String::from_utf8_lossy(&out.stderr).trim()));
    }
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).map_err(|e| format!("seedfall crash-states printed no JSON: {e}"))?;
    let node = &doc["nodes"][0];
    let trees = node["trees"]
        .as_array()
        .ok_or("seedfall crash-states: no trees")?
        .iter()
        .map(|t| serde_json::from_value::<Vec<Entry>>(t["entries"].clone()).map_err(|e| format!("a tree of seedfall crash-states: {e}")))
        .collect::<Result<_, _>>()?;
    Ok(ModelTrees { moments: node["moments"].as_u64().unwrap_or(0), sampled_moments: node["sampled_moments"].as_u64().unwrap_or(0), trees })
}

pub fn cell(workload: &str, real: &crate::real::Workload, model: &ModelTrees) -> Cell {
    let mut unmountable = 0;
    let real_keys: BTreeSet<String> = real
        .trees
        .iter()
        .filter(|s| {
            let broken = matches!(s.tree, Tree::Broken { .. });
            unmountable += usize::from(broken) * s.images;
            !broken
        })
        .map(|s| s.tree.key())
        .collect();
    let model_keys: BTreeSet<String> = model.trees.iter().map(|t| Tree::Entries(t.clone()).key()).collect();
    Cell {
        workload: workload.into(),
        real: real_keys.len(),
        model: model_keys.len(),
        missed: real_keys.difference(&model_keys).cloned().collect(),
        extra: model_keys.difference(&real_keys).cloned().collect(),
        unmountable,
        sampled: model.sampled_moments > 0,
    }
}

pub fn read_recording(path: &Path) -> Result<Recording, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let rec: Recording = serde_json::from_str(&text).map_err(|e| format!("{}: not an oracle recording: {e}", path.display()))?;
    if rec.version != crate::RECORDING_VERSION {
        return Err(format!("{}: $.version: expected {}, found {}", path.display(), crate::RECORDING_VERSION, rec.version));
    }
    Ok(rec)
}

/// The markdown of docs/disk.md: the table, and every extra of a real
/// file system's model with its class.
pub fn markdown(report: &Report, j: &Justified) -> String {
    let kernel = report.pairs.first().map_or("?", |p| p.kernel.as_str());
    let mut s = format!(
        "Measured on Linux {kernel}, {} litmus workloads, model sectors of {} bytes (the images tear at 4 KiB blocks):\n\n| model | real file system | trees the kernel left | trees the model allows | missed | extra, by reason |\n|---|---|---|---|---|---|\n",
        report.pairs.first().map_or(0, |p| p.cells.len()),
        report.sector_bytes
    );
    for p in &report.pairs {
        let real: usize = p.cells.iter().map(|c| c.real).sum();
        let model: usize = p.cells.iter().map(|c| c.model).sum();
        let (by, none) = p.classes(j);
        let mut reasons: Vec<String> = by.iter().map(|(c, n)| format!("{n} {c}")).collect();
        if !none.is_empty() {
            reasons.push(format!("{} not justified", none.len()));
        }
        let extra = if reasons.is_empty() { "0".to_string() } else { format!("{}: {}", p.extra(), reasons.join(", ")) };
        s += &format!("| `{}` | {} | {real} | {model} | {} | {extra} |\n", p.model, p.fs, p.missed());
    }
    let listed: Vec<(&Pair, &Cell, &String)> = report.pairs.iter().filter(|p| !j.whole_models.contains_key(&p.model)).flat_map(|p| p.cells.iter().flat_map(move |c| c.extra.iter().map(move |e| (p, c, e)))).collect();
    if !listed.is_empty() {
        s += "\nEach extra tree of a real file system's model:\n\n| model | workload | tree (path, length, digest) | reason |\n|---|---|---|---|\n";
        for (p, c, e) in listed {
            s += &format!("| `{}` | `{}` | `{e}` | {} |\n", p.model, c.workload, j.class(&p.model, &c.workload, e).unwrap_or("**not justified**"));
        }
    }
    s
}

pub fn main(f: &BTreeMap<String, Vec<String>>) -> Result<(), String> {
    let seedfall = PathBuf::from(crate::need(f, "seedfall"));
    let litmus_dir = PathBuf::from(crate::need(f, "litmus-dir"));
    let litmus_bin = litmus_dir.join("target/release/litmus");
    let sector_bytes: u64 = crate::one(f, "sector-bytes").unwrap_or("4096").parse().map_err(|_| "-sector-bytes: expected a number".to_string())?;
    let scratch = crate::one(f, "scratch").map(PathBuf::from).unwrap_or_else(|| std::env::temp_dir().join(format!("seedfall-oracle-compare-{}", std::process::id())));
    let recordings: Vec<Recording> = f.get("real").ok_or("-real is required")?.iter().map(|p| read_recording(Path::new(p))).collect::<Result<_, _>>()?;
    let pick: Option<BTreeSet<&str>> = crate::one(f, "workloads").map(|w| w.split(',').collect());
    let mut pairs = Vec::new();
    let mut cache: BTreeMap<(String, String), ModelTrees> = BTreeMap::new();
    for rec in &recordings {
        let mut models = vec!["posix".to_string()];
        if let Some(m) = crate::one(f, "models") {
            models = m.split(',').map(String::from).collect();
        } else if model_for(&rec.fs) != "posix" {
            models.insert(0, model_for(&rec.fs).to_string());
        }
        for model in models {
            let mut cells = Vec::new();
            for (name, w) in &rec.workloads {
                if pick.as_ref().is_some_and(|p| !p.contains(name.as_str())) {
                    continue;
                }
                let key = (name.clone(), model.clone());
                if !cache.contains_key(&key) {
                    let config = write_config(&litmus_dir, &litmus_bin, name, &scratch.join(name), sector_bytes)?;
                    cache.insert(key.clone(), model_trees(&seedfall, &config, &model)?);
                }
                cells.push(cell(name, w, &cache[&key]));
            }
            let pair = Pair { model, fs: rec.fs.clone(), kernel: rec.kernel.clone(), cells };
            eprintln!("{} against {}: {} workloads, missed {}, extra {}", pair.model, pair.fs, pair.cells.len(), pair.missed(), pair.extra());
            for c in &pair.cells {
                for m in &c.missed {
                    eprintln!("  missed  {}: {m}", c.workload);
                }
            }
            pairs.push(pair);
        }
    }
    let report = Report { version: 1, sector_bytes, pairs };
    let justified = match crate::one(f, "justified") {
        Some(p) => Justified::read(Path::new(p))?,
        None => Justified::default(),
    };
    if let Some(p) = crate::one(f, "json") {
        crate::write_atomic(Path::new(p), serde_json::to_string_pretty(&report).unwrap().as_bytes())?;
    }
    let md = markdown(&report, &justified);
    if let Some(p) = crate::one(f, "markdown") {
        crate::write_atomic(Path::new(p), md.as_bytes())?;
    }
    print!("{md}");
    let missed: usize = report.pairs.iter().map(Pair::missed).sum();
    let unjustified: Vec<String> = if crate::one(f, "justified").is_some() { report.pairs.iter().flat_map(|p| p.classes(&justified).1).collect() } else { Vec::new() };
    let stale = if crate::one(f, "justified").is_some() && pick.is_none() { stale(&report, &justified) } else { Vec::new() };
    for u in &unjustified {
        eprintln!("not justified: {u}");
    }
    for s in &stale {
        eprintln!("justified but no longer an extra: {s}");
    }
    if missed > 0 || !unjustified.is_empty() || !stale.is_empty() {
        return Err(format!("{missed} trees missed, {} extra trees not justified, {} stale justifications", unjustified.len(), stale.len()));
    }
    Ok(())
}
