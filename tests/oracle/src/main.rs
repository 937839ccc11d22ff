//! seedfall-oracle: seedfall's disk models checked against the real kernel.
//!
//! `real` runs the litmus workloads (tests/oracle/litmus) natively on a
//! fresh ext4, xfs or btrfs behind a recording block device, builds crash
//! images from the block write log, mounts each and records the trees that
//! survived. `compare` (with `seedfall crash-states`, which enumerates the
//! trees a model allows) gives the conformance table of docs/disk.md.
//! `available` says whether this machine can run `real`.
//!
//! Not part of the product: the test command runs it on a few workloads
//! (tests/conformance.rs), `scripts/oracle` on all of them.
mod compare;
mod device;
mod fs;
mod images;
mod real;
mod tree;

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// What `real` writes: one file system's trees, per workload.
#[derive(Debug, Serialize, Deserialize)]
pub struct Recording {
    pub version: u32,
    pub fs: String,
    pub kernel: String,
    pub mkfs: String,
    pub image_bytes: u64,
    pub workloads: BTreeMap<String, real::Workload>,
}

pub const RECORDING_VERSION: u32 = 1;
/// Crash images per workload unless `-images` says otherwise.
const IMAGES_DEFAULT: usize = 400;

fn usage() -> ! {
    eprintln!(
        "usage:\n  seedfall-oracle available [-fs ext4|xfs|btrfs]\n  seedfall-oracle real -fs ext4|xfs|btrfs -litmus BIN -out FILE [-workloads a,b] [-images N] [-scratch DIR]\n  seedfall-oracle compare -seedfall BIN -litmus-dir DIR -real FILE... [-workloads a,b] [-json FILE] [-markdown FILE]"
    );
    std::process::exit(2)
}

/// `-name value` pairs (and `-name=value`); repeated names collect.
fn flags(args: &[String]) -> BTreeMap<String, Vec<String>> {
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut i = 0;
    while i < args.len() {
        let a = args[i].trim_start_matches('-');
        if let Some((k, v)) = a.split_once('=') {
            out.entry(k.into()).or_default().push(v.into());
            i += 1;
        } else if i + 1 < args.len() {
            out.entry(a.into()).or_default().push(args[i + 1].clone());
            i += 2;
        } else {
            eprintln!("seedfall-oracle: {} needs a value", args[i]);
            usage()
        }
    }
    out
}

fn one<'a>(f: &'a BTreeMap<String, Vec<String>>, name: &str) -> Option<&'a str> {
    f.get(name).and_then(|v| v.last()).map(String::as_str)
}

fn need<'a>(f: &'a BTreeMap<String, Vec<String>>, name: &str) -> &'a str {
    one(f, name).unwrap_or_else(|| {
        eprintln!("seedfall-oracle: -{name} is required");
        usage()
    })
}

fn parse_fs(s: &str) -> fs::Fs {
    fs::Fs::parse(s).unwrap_or_else(|| {
        eprintln!("seedfall-oracle: -fs: expected ext4, xfs or btrfs, found {s:?}");
        std::process::exit(2)
    })
}

/// Writes `bytes` to `path` through a temporary name.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), String> {
    let tmp = path.with_extension(format!("tmp-{}", std::process::id()));
    std::fs::write(&tmp, bytes).and_then(|_| std::fs::rename(&tmp, path)).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// The workloads `litmus list` names, or those `-workloads` picks.
pub fn workloads(litmus: &Path, pick: Option<&str>) -> Result<Vec<String>, String> {
    let listed = fs::output(std::process::Command::new(litmus).arg("list"))?;
    let all: Vec<String> = listed.lines().filter_map(|l| l.split('\t').next()).map(String::from).collect();
    match pick {
        None => Ok(all),
        Some(p) => p
            .split(',')
            .map(|w| if all.iter().any(|a| a == w) { Ok(w.to_string()) } else { Err(format!("-workloads: litmus has no workload {w:?}")) })
            .collect(),
    }
}

fn cmd_real(f: &BTreeMap<String, Vec<String>>) -> Result<(), String> {
    let fs = parse_fs(need(f, "fs"));
    if let Some(why) = fs::unavailable(fs) {
        return Err(format!("cannot run the oracle on {}: {why}", fs.name()));
    }
    let litmus = PathBuf::from(need(f, "litmus"));
    let out = PathBuf::from(need(f, "out"));
    let max_images = match one(f, "images") {
        Some(n) => n.parse().map_err(|_| format!("-images: expected a number, found {n:?}"))?,
        None => IMAGES_DEFAULT,
    };
    let scratch = one(f, "scratch").map(PathBuf::from).unwrap_or_else(|| std::env::temp_dir().join(format!("seedfall-oracle-{}", std::process::id())));
    let names = workloads(&litmus, one(f, "workloads"))?;
    let mut rec = Recording {
        version: RECORDING_VERSION,
        fs: fs.name().into(),
        kernel: fs::kernel(),
        mkfs: format!("{} {}", fs.mkfs_program(), fs.mkfs_args().join(" ")),
        image_bytes: fs.image_bytes(),
        workloads: BTreeMap::new(),
    };
    for (i, name) in names.iter().enumerate() {
        let started = std::time::Instant::now();
        let dir = scratch.join(fs.name()).join(name);
        let w = real::workload(fs, &litmus, name, &dir, max_images)?;
        let _ = std::fs::remove_dir_all(&dir);
        eprintln!(
            "{} [{}/{}] {name}: {} writes, {} flushes, {} images, {} trees ({:.1}s)",
            fs.name(),
            i + 1,
            names.len(),
            w.writes,
            w.flushes,
            w.images,
            w.trees.len(),
            started.elapsed().as_secs_f64()
        );
        rec.workloads.insert(name.clone(), w);
    }
    let _ = std::fs::remove_dir_all(&scratch);
    write_atomic(&out, serde_json::to_string_pretty(&rec).unwrap().as_bytes())
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(cmd) = args.first() else { usage() };
    let f = flags(&args[1..]);
    let r = match cmd.as_str() {
        "available" => {
            let fss: Vec<fs::Fs> = match one(&f, "fs") {
                Some(s) => vec![parse_fs(s)],
                None => fs::Fs::ALL.to_vec(),
            };
            let missing: Vec<String> = fss.iter().filter_map(|&x| fs::unavailable(x).map(|why| format!("{}: {why}", x.name()))).collect();
            if missing.is_empty() {
                println!("the oracle can run here (kernel {})", fs::kernel());
                Ok(())
            } else {
                Err(missing.join("\n"))
            }
        }
        "real" => cmd_real(&f),
        "compare" => compare::main(&f),
        _ => usage(),
    };
    if let Err(e) = r {
        eprintln!("seedfall-oracle: {e}");
        std::process::exit(1);
    }
}
