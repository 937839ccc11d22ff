//! The storage overlay's coverage matrix (docs/sdk-go.md#storage): every cell
//! of `tests/matrix/cells`, a release of a storage library (the newest of
//! each release line the module proxy serves, or a line's first and last),
//! or of golang.org/x/sys, pinned in the cell's go.mod, is built with the
//! storage overlay and swept: each run opens a store, writes records that
//! are each synced before they are acknowledged, is crashed with torn writes
//! and restarted, and checks every acknowledged record
//! (`tests/matrix/harness`).
//!
//! Every cell must build, reopen its store after a crash in a fair share of
//! its seeds, and fail only by losing acknowledged records, in exactly the
//! seeds docs/sdk-go.md's table says (the runs are deterministic: a change of
//! outcome is a change of the overlay, the models or a library). The table
//! measured is written to `target/storage-matrix.md`; `scripts/storage-matrix`
//! puts it into the docs.
mod common;
use common::*;
use std::path::{Path, PathBuf};

/// Seeds each cell is swept over.
const SEEDS: u64 = 20;
/// Seeds of `SEEDS` that must restart after a crash with acknowledged
/// records to check, at least.
const REOPENED_MIN: u64 = 5;
/// The libraries, in the order a cell's go.mod is searched for one (a raft
/// log store's cell requires raft too).
const LIBRARIES: &[&str] = &[
    "github.com/hashicorp/raft-boltdb",
    "github.com/hashicorp/raft-wal",
    "go.etcd.io/bbolt",
    "github.com/boltdb/bolt",
    "github.com/dgraph-io/badger",
    "github.com/cockroachdb/pebble",
    "go.etcd.io/etcd/server",
];
const BEGIN: &str = "<!-- storage-matrix:begin (scripts/storage-matrix writes this table) -->";
const END: &str = "<!-- storage-matrix:end -->";

/// What one cell is and did.
struct Cell {
    name: String,
    library: String,
    release: String,
    xsys: String,
    /// None: it did not build (the error).
    swept: Result<Swept, String>,
}

struct Swept {
    passed: u64,
    reopened: u64,
    runs_per_s: f64,
    /// The failures' messages, other than a lost acknowledged record.
    other_failures: Vec<String>,
}

/// The required modules of a go.mod: (path, version, indirect).
fn requires(go_mod: &str) -> Vec<(String, String, bool)> {
    let mut out = Vec::new();
    let mut block = false;
    for line in go_mod.lines() {
        let l = line.trim();
        if l.starts_with("require (") {
            block = true;
            continue;
        }
        if block && l == ")" {
            block = false;
            continue;
        }
        let spec = if block { Some(l) } else { l.strip_prefix("require ") };
        if let Some(spec) = spec {
            let mut words = spec.split_whitespace();
            if let (Some(path), Some(version)) = (words.next(), words.next()) {
                out.push((path.to_string(), version.to_string(), spec.contains("// indirect")));
            }
        }
    }
    out
}

fn cell_dirs() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(repo().join("tests/matrix/cells")).unwrap().flatten().map(|e| e.path()).filter(|p| p.join("go.mod").is_file()).collect();
    dirs.sort();
    dirs
}

fn describe(dir: &Path) -> (String, String, String) {
    let reqs = requires(&std::fs::read_to_string(dir.join("go.mod")).unwrap());
    let direct = |family: &str| reqs.iter().find(|(p, _, indirect)| !indirect && shims_family(p, family));
    let (library, release) = LIBRARIES
        .iter()
        .find_map(|f| direct(f))
        .or_else(|| reqs.iter().find(|(p, _, _)| p == "golang.org/x/sys"))
        .map(|(p, v, _)| (p.clone(), v.clone()))
        .unwrap_or_else(|| panic!("{}: its go.mod requires none of the matrix's libraries", dir.display()));
    let xsys = reqs.iter().find(|(p, _, _)| p == "golang.org/x/sys").map_or("-".to_string(), |(_, v, _)| v.clone());
    (library, release, xsys)
}

/// `module` is `family` or one of its major versions.
fn shims_family(module: &str, family: &str) -> bool {
    seedfall_search::go_overlay::shims::is_of(module, family)
}

fn sweep(dir: &Path, scratch: &Path) -> Result<Swept, String> {
    let name = dir.file_name().unwrap().to_string_lossy().replace('.', "-");
    let cfg = scratch.join(format!("{name}.json"));
    std::fs::write(
        &cfg,
        format!(
            r#"{{ "version": 1, "name": "{name}", "duration": "5s",
  "nodes": [ {{ "name": "store", "go": {{ "dir": "{}", "storage": true }}, "args": ["-records", "60"] }} ],
  "faults": {{ "crash": {{ "rate": 10, "restart_after": "1ms-50ms", "during_disk_op": 0.5 }}, "torn_writes": true }} }}"#,
            dir.display()
        ),
    )
    .unwrap();
    let out = seedfall(&["run", "-c", cfg.to_str().unwrap(), "-seeds", &format!("1-{SEEDS}"), "-json"]);
    if out.code == 2 {
        return Err(out.stderr.lines().filter(|l| !l.starts_with("seedfall: building") && !l.starts_with("seedfall: compiling")).collect::<Vec<_>>().join("\n"));
    }
    let v = json(&out);
    let hits = |msg: &str| v["properties"].as_array().unwrap().iter().find(|p| p["message"] == msg).and_then(|p| p["runs_hit"].as_u64()).unwrap_or(0);
    let other_failures = v["failures"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|f| f["nodes"].as_array().unwrap().iter().map(move |n| (f["seed"].clone(), n)))
        .filter(|(_, n)| n["message"] != "acknowledged records survive crashes")
        .map(|(seed, n)| format!("seed {seed}: {} {}", n["message"], n["details"]))
        .collect();
    Ok(Swept { passed: v["passed"].as_u64().unwrap(), reopened: hits("a boot reopened the store after a crash"), runs_per_s: v["seeds_per_second"].as_f64().unwrap(), other_failures })
}

fn row(c: &Cell) -> String {
    match &c.swept {
        Ok(s) => format!("| {} | {} | {} | {} | yes | {} of {SEEDS} | {} | {:.1} |", c.name, c.library, c.release, c.xsys, s.passed, s.reopened, s.runs_per_s),
        Err(_) => format!("| {} | {} | {} | {} | no | - | - | - |", c.name, c.library, c.release, c.xsys),
    }
}

/// A row without its last column (runs/s: this machine's, this minute's).
fn comparable(row: &str) -> String {
    let cols: Vec<&str> = row.trim().trim_matches('|').split('|').map(str::trim).collect();
    cols[..cols.len().saturating_sub(1)].join(" | ")
}

#[test]
fn every_cell_builds_reopens_after_crashes_and_loses_only_what_the_docs_say() {
    let scratch = scratch("storage-matrix");
    let cells: Vec<Cell> = cell_dirs()
        .iter()
        .map(|dir| {
            let (library, release, xsys) = describe(dir);
            Cell { name: dir.file_name().unwrap().to_string_lossy().into_owned(), library, release, xsys, swept: sweep(dir, &scratch) }
        })
        .collect();
    assert!(cells.len() >= 20, "the matrix has {} cells", cells.len());
    let header = "| cell | library | release | golang.org/x/sys | built | seeds that keep every acknowledged record | seeds that reopened after a crash | runs/s |\n|---|---|---|---|---|---|---|---|";
    let table = format!("{header}\n{}\n", cells.iter().map(row).collect::<Vec<_>>().join("\n"));
    let out = repo().join("target/storage-matrix.md");
    std::fs::write(&out, &table).unwrap();
    let mut problems = Vec::new();
    for c in &cells {
        match &c.swept {
            Err(e) => problems.push(format!("{} does not build:\n{e}", c.name)),
            Ok(s) => {
                if s.reopened < REOPENED_MIN {
                    problems.push(format!("{}: only {} of {SEEDS} seeds restarted after a crash to check their records", c.name, s.reopened));
                }
                for f in &s.other_failures {
                    problems.push(format!("{}: {f}", c.name));
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    // The docs carry the same table: every column but the machine's runs/s.
    let docs = std::fs::read_to_string(repo().join("docs/sdk-go.md")).unwrap();
    let (Some(a), Some(b)) = (docs.find(BEGIN), docs.find(END)) else { panic!("docs/sdk-go.md has no storage matrix between {BEGIN} and {END}") };
    let documented: Vec<String> = docs[a + BEGIN.len()..b].lines().filter(|l| l.starts_with("| ") && !l.starts_with("| cell ")).map(comparable).collect();
    let measured: Vec<String> = table.lines().filter(|l| l.starts_with("| ") && !l.starts_with("| cell ")).map(comparable).collect();
    assert_eq!(documented, measured, "docs/sdk-go.md's storage matrix is not what was measured ({}): run scripts/storage-matrix", out.display());
}

#[test]
fn a_go_mod_s_requires_are_read_with_their_versions() {
    let text = "module m\n\ngo 1.22\n\nrequire (\n\tgo.etcd.io/bbolt v1.3.12\n\tgolang.org/x/sys v0.4.0 // indirect\n)\n\nrequire github.com/boltdb/bolt v1.3.1\n";
    let r = requires(text);
    assert_eq!(r, [("go.etcd.io/bbolt".into(), "v1.3.12".into(), false), ("golang.org/x/sys".into(), "v0.4.0".into(), true), ("github.com/boltdb/bolt".into(), "v1.3.1".into(), false)]);
}
