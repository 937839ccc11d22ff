//! `seedfall slurm` on a real single-node Slurm (Debian's slurm-wlm and
//! munge, started by scripts/slurm-local): a sweep of 8 shards as a job
//! array, the merge as a job that depends on it, and the merged answer equal
//! to the one-machine sweep's. Every daemon it started is stopped.
mod common;
use common::*;
use serde_json::Value;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The cluster of one test, stopped when dropped (even when the test fails).
struct Cluster {
    dir: PathBuf,
    conf: String,
}

impl Cluster {
    fn start(dir: &Path) -> Cluster {
        let out = Command::new(repo().join("scripts/slurm-local")).arg("start").arg(dir).output().unwrap();
        assert!(out.status.success(), "scripts/slurm-local start: {}", String::from_utf8_lossy(&out.stderr));
        let line = String::from_utf8_lossy(&out.stdout).trim().to_string();
        let conf = line.strip_prefix("SLURM_CONF=").unwrap_or_else(|| panic!("start printed {line:?}")).to_string();
        Cluster { dir: dir.to_path_buf(), conf }
    }

    fn pids(&self) -> Vec<String> {
        ["slurmctld.pid", "slurmd.pid"].iter().filter_map(|f| std::fs::read_to_string(self.dir.join(f)).ok()).map(|s| s.trim().to_string()).collect()
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = Command::new(repo().join("scripts/slurm-local")).arg("stop").arg(&self.dir).status();
    }
}

fn alive(pid: &str) -> bool {
    // A zombie still answers kill -0: look at its state.
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| !s.rsplit(')').next().unwrap_or("").trim_start().starts_with('Z'))
}

fn without_wall(v: &Value) -> Value {
    const WALL: [&str; 7] = ["seeds_per_second", "virtual_seconds_per_wall_second", "wall_ns", "real_ns", "run_real_ns", "instantiate_ns", "host_ns"];
    match v {
        Value::Object(m) => Value::Object(m.iter().filter(|(k, _)| !WALL.contains(&k.as_str())).map(|(k, v)| (k.clone(), without_wall(v))).collect()),
        Value::Array(a) => Value::Array(a.iter().map(without_wall).collect()),
        other => other.clone(),
    }
}

#[test]
fn an_eight_shard_sweep_on_slurm_merges_to_the_one_machine_sweep() {
    let available = Command::new(repo().join("scripts/slurm-local")).arg("available").output().unwrap();
    if !available.status.success() {
        // Not captured by the test harness: seen in every run's output.
        let _ = writeln!(std::io::stderr(), "SKIPPED the Slurm test: {}", String::from_utf8_lossy(&available.stderr).trim());
        return;
    }
    let dir = scratch("slurm");
    let cfg = dir.join("seedfall.json");
    let text = std::fs::read_to_string(repo().join("examples/kvlog/seedfall.json")).unwrap();
    std::fs::write(&cfg, text.replace("\"dir\": \".\"", &format!("\"dir\": \"{}\"", repo().join("examples/kvlog").display()))).unwrap();
    let c = cfg.to_str().unwrap();
    let whole = json(&seedfall(&["run", "-c", c, "-seeds", "1-400", "-j", "8", "-json"]));
    let whole_text = seedfall(&["run", "-c", c, "-seeds", "1-400", "-j", "8"]);
    std::fs::remove_dir_all(dir.join(".seedfall")).unwrap();

    let cluster = Cluster::start(&dir.join("cluster"));
    let pids = cluster.pids();
    assert_eq!(pids.len(), 2, "slurmctld and slurmd are running");
    let results = dir.join("results");
    let out = Command::new(env!("CARGO_BIN_EXE_seedfall"))
        .args(["slurm", "-shards", "8", "-results"])
        .arg(&results)
        .args(["-submit", "-wait", "-wait-max", "5m", "--", "run", "-c", c, "-seeds", "1-400"])
        .current_dir(repo())
        .env("SLURM_CONF", &cluster.conf)
        .env("SEEDFALL_CACHE_DIR", repo().join("target/seedfall-test-cache"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(1), "the merge's verdict: kvlog loses writes\n{stdout}\n{stderr}");
    assert!(stdout.contains("submitted 8 shards as job array"), "{stdout}");
    for i in 1..=8 {
        assert!(results.join(format!("shard-{i:05}.json")).is_file(), "shard {i} wrote its result");
        let log = std::fs::read_to_string(results.join(format!("logs/shard-{}.out", i - 1))).unwrap();
        assert!(log.contains(&format!("(shard {i}/8: 50 of them)")), "{log}");
    }
    let merged: Value = serde_json::from_str(&std::fs::read_to_string(results.join("merged.json")).unwrap()).unwrap();
    assert_eq!(without_wall(&merged), without_wall(&whole));
    // What -wait printed is the merge job's output: the unsharded text.
    let strip = |t: &str| without_real_times(t).lines().filter(|l| !l.contains(" runs/s")).map(str::to_string).collect::<Vec<_>>();
    let printed = stdout.lines().skip_while(|l| !l.starts_with("seedfall run:")).collect::<Vec<_>>().join("\n");
    assert_eq!(strip(&printed), strip(&whole_text.stdout));
    assert!(results.join("junit.xml").is_file());
    drop(cluster);
    // Every daemon it started is gone.
    std::thread::sleep(std::time::Duration::from_secs(1));
    for pid in pids {
        assert!(!alive(&pid), "slurm daemon {pid} still runs after stop");
    }
}
