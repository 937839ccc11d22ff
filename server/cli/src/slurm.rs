//! `seedfall slurm`: a sweep, exploration or mutation run as a Slurm job
//! array (`SLURM_ARRAY_TASK_ID` picks the shard) and a merge job that
//! depends on the whole array. It writes both batch scripts into the
//! results folder and submits them with `-submit` (then `-wait` waits for
//! the merge and prints it). docs/scale-out.md.
use crate::launch::{quote, Wrapped};
use clap::Args;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

#[derive(Args)]
pub struct SlurmArgs {
    /// How many shards (array tasks).
    #[arg(long, value_name = "N")]
    pub shards: u32,
    /// The folder for shard results, logs and the merged result (on a file
    /// system every node shares).
    #[arg(long, value_name = "DIR")]
    pub results: PathBuf,
    /// Submit the array and the merge with sbatch (else print how).
    #[arg(long)]
    pub submit: bool,
    /// With -submit: wait for the merge, print it and exit with its code.
    #[arg(long)]
    pub wait: bool,
    /// With -wait: give up after this long, like `2h`.
    #[arg(long = "wait-max", default_value = "24h")]
    pub wait_max: String,
    /// CPUs per task; each shard runs that many workers.
    #[arg(long = "cpus-per-task", default_value_t = 1)]
    pub cpus_per_task: u32,
    /// At most this many tasks at once (`--array=...%K`).
    #[arg(long = "max-parallel", value_name = "K")]
    pub max_parallel: Option<u32>,
    /// The partition (default: the cluster's default).
    #[arg(long)]
    pub partition: Option<String>,
    /// Time limit per task, in Slurm's form (`1:00:00`).
    #[arg(long)]
    pub time: Option<String>,
    /// The seedfall executable the nodes run (default: this one).
    #[arg(long)]
    pub seedfall: Option<String>,
    /// The command every shard runs: `-- run -c seedfall.json -seeds 1-10000`.
    #[arg(last = true, required = true, value_name = "COMMAND")]
    pub command: Vec<String>,
}

pub fn main(a: SlurmArgs) -> i32 {
    match run(&a) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("seedfall slurm: {e}");
            2
        }
    }
}

fn run(a: &SlurmArgs) -> Result<i32, String> {
    let wrapped = Wrapped::parse(&a.command)?;
    if a.shards == 0 || a.shards > seedfall_search::shard::SHARDS_MAX {
        return Err(format!("-shards: expected 1 to {}, found {}", seedfall_search::shard::SHARDS_MAX, a.shards));
    }
    if a.cpus_per_task == 0 {
        return Err("-cpus-per-task: expected at least 1".into());
    }
    if a.wait && !a.submit {
        return Err("-wait: give -submit too (without it nothing is submitted to wait for)".into());
    }
    let wait_max = seedfall_sim::vtime::parse_duration(&a.wait_max).filter(|d| d.nanos() > 0).ok_or_else(|| format!("-wait-max: expected a duration like 2h, found \"{}\"", a.wait_max))?;
    let cwd = std::env::current_dir().map_err(|e| format!("cannot read the current folder: {e}"))?;
    if !Path::new(&wrapped.config()).is_file() {
        return Err(format!("the command's config {} is not here (run seedfall slurm where the command would run)", wrapped.config()));
    }
    std::fs::create_dir_all(a.results.join("logs")).map_err(|e| format!("-results {}: cannot create it: {e}", a.results.display()))?;
    let results = std::fs::canonicalize(&a.results).map_err(|e| format!("-results {}: {e}", a.results.display()))?;
    let results_text = results.display().to_string();
    let seedfall = match &a.seedfall {
        Some(s) => s.clone(),
        None => std::env::current_exe().map_err(|e| format!("cannot tell where seedfall is ({e}): give -seedfall PATH"))?.display().to_string(),
    };
    let config = seedfall_sim::Config::load(Path::new(&wrapped.config())).map_err(|e| e.to_string())?;
    let name = format!("seedfall-{}", config.name);
    let mut head = vec!["#!/bin/bash".to_string(), format!("#SBATCH --chdir={}", quote(&cwd.display().to_string()))];
    if let Some(p) = &a.partition {
        head.push(format!("#SBATCH --partition={}", quote(p)));
    }
    if let Some(t) = &a.time {
        head.push(format!("#SBATCH --time={}", quote(t)));
    }
    let throttle = a.max_parallel.map(|k| format!("%{k}")).unwrap_or_default();
    let shards = format!(
        "{}\n#SBATCH --job-name={name}\n#SBATCH --array=0-{}{throttle}\n#SBATCH --cpus-per-task={}\n#SBATCH --output={}/logs/shard-%a.out\n# Written by seedfall slurm: shard i of {} is array task i-1.\nset -u\ni=$((SLURM_ARRAY_TASK_ID + 1))\n{}",
        head.join("\n"),
        a.shards - 1,
        a.cpus_per_task,
        quote(&results_text),
        a.shards,
        wrapped.shard_script(&seedfall, a.shards, &results_text, "\"${SLURM_CPUS_PER_TASK:-1}\"")
    );
    let merge = format!(
        "{}\n#SBATCH --job-name={name}-merge\n#SBATCH --output={}/merge.out\n# Written by seedfall slurm: runs after every task of the array.\nset -u\n{}",
        head.join("\n"),
        quote(&results_text),
        wrapped.merge_script(&seedfall, &results_text)
    );
    let shards_path = results.join("shards.sbatch");
    let merge_path = results.join("merge.sbatch");
    for (p, text) in [(&shards_path, &shards), (&merge_path, &merge)] {
        seedfall_search::cache::write_atomic(p, text.as_bytes()).map_err(|e| format!("cannot write {}: {e}", p.display()))?;
    }
    // Results of an earlier submission into this folder would be merged as
    // this one's.
    for e in std::fs::read_dir(&results).map_err(|e| format!("{}: {e}", results.display()))?.flatten() {
        let n = e.file_name().to_string_lossy().into_owned();
        if (n.starts_with("shard-") && n.ends_with(".json")) || ["merged.json", "junit.xml", "merge.exit", "merge.out"].contains(&n.as_str()) {
            let _ = std::fs::remove_file(e.path());
        }
    }
    let _ = std::fs::remove_dir_all(results.join("sync"));
    let (sp, mp) = (quote(&shards_path.display().to_string()), quote(&merge_path.display().to_string()));
    if !a.submit {
        println!("wrote {} and {}; submit them with:", crate::output::relative(&shards_path), crate::output::relative(&merge_path));
        println!("  jobid=$(sbatch --parsable {sp})");
        println!("  sbatch --dependency=afterany:\"$jobid\" {mp}");
        println!("the merged result will be in {}/merge.out (text), merged.json and junit.xml", crate::output::relative(&results));
        return Ok(0);
    }
    let array = sbatch(&[&shards_path.display().to_string()])?;
    let merge_job = sbatch(&[&format!("--dependency=afterany:{array}"), &merge_path.display().to_string()])?;
    println!("submitted {} shard{} as job array {array}, and the merge as job {merge_job} after it", a.shards, if a.shards == 1 { "" } else { "s" });
    println!("results: {}/ (logs/shard-N.out, shard-NNNNN.json, merge.out, merged.json, junit.xml)", crate::output::relative(&results));
    if !a.wait {
        return Ok(0);
    }
    let exit_file = results.join("merge.exit");
    let started = Instant::now();
    let limit = Duration::from_nanos(wait_max.nanos());
    // The merge writes merge.exit last; a merge job that Slurm cancelled
    // (its dependency can never be met) leaves the queue without it.
    let mut written = 0;
    loop {
        if exit_file.is_file() {
            break;
        }
        // Progress on stderr: how many shards have written their result.
        let now = (1..=a.shards).filter(|i| results.join(format!("shard-{i:05}.json")).is_file()).count();
        if now != written {
            written = now;
            eprintln!("seedfall slurm: {written} of {} shard results written", a.shards);
        }
        if !in_queue(&merge_job)? {
            std::thread::sleep(Duration::from_millis(500));
            if exit_file.is_file() {
                break;
            }
            return Err(format!("the merge job {merge_job} left the queue without a result: see {}/merge.out and logs/", results.display()));
        }
        if started.elapsed() > limit {
            return Err(format!("gave up waiting after {}: jobs {array} and {merge_job} are still queued or running", a.wait_max));
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    // The merge's output, as it wrote it (copied, not held: it lists every failing run).
    if let Ok(mut out) = std::fs::File::open(results.join("merge.out")) {
        let _ = std::io::copy(&mut out, &mut std::io::stdout().lock());
    }
    let code = seedfall_sim::files::read_text(&exit_file, 64, "the merge's exit status")
        .ok()
        .and_then(|t| t.trim().parse::<i32>().ok())
        .unwrap_or(2);
    Ok(code)
}

fn sbatch(args: &[&str]) -> Result<String, String> {
    let out = std::process::Command::new("sbatch").arg("--parsable").args(args).output().map_err(|e| format!("cannot run sbatch ({e}): is Slurm's client installed and on PATH?"))?;
    if !out.status.success() {
        return Err(format!("sbatch {} failed: {}", args.join(" "), String::from_utf8_lossy(&out.stderr).trim()));
    }
    // `--parsable` prints `jobid` or `jobid;cluster`.
    let text = String::from_utf8_lossy(&out.stdout);
    let id = text.trim().split(';').next().unwrap_or("").to_string();
    if id.is_empty() || !id.chars().all(|c| c.is_ascii_digit()) {
        return Err(format!("sbatch printed no job id: {:?}", text.trim()));
    }
    Ok(id)
}

fn in_queue(job: &str) -> Result<bool, String> {
    let out = std::process::Command::new("squeue").args(["-h", "-j", job, "-o", "%i"]).output().map_err(|e| format!("cannot run squeue: {e}"))?;
    // squeue exits non-zero for a job id it no longer knows.
    Ok(out.status.success() && !String::from_utf8_lossy(&out.stdout).trim().is_empty())
}
