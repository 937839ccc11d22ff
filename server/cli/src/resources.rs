//! The host resources a command may use: `-memory-budget`, `-output-cap`,
//! `-failures-budget` (docs/limits.md).
//!
//! The memory budget is for the whole process. Three quarters of it are
//! the runs': each run gets `limits.run_memory_mb` when the config sets one
//! (then `-j` is lowered so that the runs fit), or else those three quarters
//! divided by the workers. The last quarter is the snapshots' (their worlds
//! stay in memory while children fork from them; a child shares their
//! pages and holds what it writes within its own share). Together they
//! never hold more than the budget.
use clap::Args;
use seedfall_search::Project;
use seedfall_sim::memory::human;

/// The failure folders' disk budget when `-failures-budget` is not given.
pub const FAILURES_BUDGET_DEFAULT: u64 = 1 << 30;
/// The least memory a run's share may be.
pub const RUN_SHARE_MIN: u64 = 64 << 20;

/// The runs' part of a memory budget; the rest is the snapshots'.
pub fn runs_part(budget: u64) -> u64 {
    budget / 4 * 3
}

/// The snapshots' part of a memory budget.
pub fn snapshots_part(budget: u64) -> u64 {
    budget - runs_part(budget)
}

#[derive(Args, Clone, Debug, Default)]
pub struct Resources {
    /// Host memory all runs of this command may hold together: node memories
    /// and simulated disks (default: half the machine's memory), e.g. `8GiB`.
    #[arg(long = "memory-budget", value_name = "SIZE")]
    pub memory_budget: Option<String>,
    /// Output a run keeps per node instance and stream (default: the
    /// config's limits.output_mb, 4 MiB), e.g. `16MiB`; the rest is counted.
    #[arg(long = "output-cap", value_name = "SIZE")]
    pub output_cap: Option<String>,
    /// Disk space the failure folders of a config may take; past it the
    /// oldest folders of already-kept failures go first (default `1GiB`).
    #[arg(long = "failures-budget", value_name = "SIZE")]
    pub failures_budget: Option<String>,
    /// Failure folders kept per finding: its shortest failing runs (default
    /// 3); `.seedfall/failures-index.json` lists every failing seed.
    #[arg(long = "keep-failures", value_name = "N", default_value_t = seedfall_search::kept::KEEP_DEFAULT)]
    pub keep_failures: usize,
    /// Coverage probes: `functions` (the default) or `edges` (AFL-style
    /// edge probes, which move virtual time: replay, shrink and cause a
    /// failure found under them with `-coverage edges` too).
    #[arg(long = "coverage", default_value = "functions", value_parser = ["functions", "edges"])]
    pub coverage: String,
}

impl Resources {
    /// The probes `-coverage` asks for (None: the default, which
    /// `SEEDFALL_COVERAGE` may change).
    pub fn coverage_mode(&self) -> Option<seedfall_sim::coverage::Mode> {
        (self.coverage == "edges").then_some(seedfall_sim::coverage::Mode::Edges)
    }

    pub fn edges(&self) -> bool {
        self.coverage == "edges"
    }
}

/// "8GiB", "512MiB", "4M", "100k", "0": bytes. Units are binary.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let digits = t.find(|c: char| !c.is_ascii_digit() && c != '.').unwrap_or(t.len());
    let (num, unit) = t.split_at(digits);
    let n: f64 = num.parse().map_err(|_| format!("expected a size such as 512MiB or 8GiB, found {text:?}"))?;
    let mul: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        "t" | "tb" | "tib" => 1 << 40,
        _ => return Err(format!("expected a size such as 512MiB or 8GiB, found {text:?} (units: KiB, MiB, GiB, TiB)")),
    };
    let bytes = n * mul as f64;
    if !bytes.is_finite() || bytes > (1u64 << 50) as f64 {
        return Err(format!("expected a size of at most 1024TiB, found {text:?}"));
    }
    Ok(bytes as u64)
}

/// The machine's physical memory (`/proc/meminfo`), when it can be read.
fn physical_memory() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb << 10)
}

fn flag(name: &str, text: &Option<String>) -> Result<Option<u64>, i32> {
    text.as_deref().map(parse_size).transpose().map_err(|e| {
        eprintln!("seedfall: -{name}: {e}");
        2
    })
}

impl Resources {
    /// The process's memory budget.
    pub fn memory_budget(&self) -> Result<u64, i32> {
        Ok(match flag("memory-budget", &self.memory_budget)? {
            Some(b) => b,
            None => physical_memory().map_or(8 << 30, |m| m / 2),
        })
    }

    pub fn failures_budget(&self) -> Result<u64, i32> {
        Ok(flag("failures-budget", &self.failures_budget)?.unwrap_or(FAILURES_BUDGET_DEFAULT))
    }

    /// Sets each run's memory share and output cap on the loaded project,
    /// for `jobs` workers; returns the workers that fit the budget. What it
    /// lowers it says on stderr, even under -json (stdout stays JSON).
    pub fn apply(&self, project: &mut Project, jobs: usize) -> Result<usize, i32> {
        let budget = self.memory_budget()?;
        if runs_part(budget) < RUN_SHARE_MIN {
            eprintln!("seedfall: -memory-budget: expected at least {}, found {}", human(RUN_SHARE_MIN / 3 * 4), human(budget));
            return Err(2);
        }
        let runs = runs_part(budget);
        if let Some(cap) = flag("output-cap", &self.output_cap)? {
            project.program.config.limits.output_bytes = cap;
        }
        let limits = &mut project.program.config.limits;
        let mut jobs = jobs;
        if limits.run_memory_set {
            if limits.run_memory_bytes > runs {
                eprintln!("seedfall: limits.run_memory_mb is {}, more than the runs' {} of the memory budget of {}: each run gets {} (-memory-budget)", human(limits.run_memory_bytes), human(runs), human(budget), human(runs));
                limits.run_memory_bytes = runs;
                limits.run_memory_source = format!("limits.run_memory_mb, lowered to the runs' {} of the memory budget of {}: -memory-budget", human(runs), human(budget));
            }
            let fit = (runs / limits.run_memory_bytes).max(1) as usize;
            if jobs > fit {
                eprintln!("seedfall: {jobs} workers of {} each would pass the runs' {} of the memory budget of {}: running {fit} at a time (-memory-budget, limits.run_memory_mb)", human(limits.run_memory_bytes), human(runs), human(budget));
                jobs = fit;
            }
        } else {
            limits.run_memory_bytes = (runs / jobs as u64).max(RUN_SHARE_MIN);
            limits.run_memory_source = format!("the share of each of {jobs} worker{} in the runs' {} of the memory budget of {}: -memory-budget, -j, or limits.run_memory_mb", if jobs == 1 { "" } else { "s" }, human(runs), human(budget));
            let fit = (runs / limits.run_memory_bytes).max(1) as usize;
            jobs = jobs.min(fit);
        }
        Ok(jobs)
    }

    /// Writes a failure folder, then keeps the config's failure folders
    /// within their budget, saying what went.
    pub fn write_failure(&self, project: &Project, outcome: &seedfall_sim::Outcome) -> Result<std::path::PathBuf, String> {
        let folder = seedfall_search::artifacts::write_failure(project, outcome)?;
        let budget = self.failures_budget().unwrap_or(FAILURES_BUDGET_DEFAULT);
        let pruned = seedfall_search::artifacts::prune(&project.program.config, budget, &folder);
        if !pruned.removed.is_empty() {
            let names: Vec<&str> = pruned.removed.iter().map(String::as_str).collect();
            eprintln!(
                "seedfall: failure folders held {}, over their budget of {} (-failures-budget): removed {} ({})",
                human(pruned.bytes_before),
                human(budget),
                names.len(),
                names.join(", ")
            );
        }
        Ok(folder)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_in_binary_units() {
        assert_eq!(parse_size("8GiB"), Ok(8 << 30));
        assert_eq!(parse_size("512MiB"), Ok(512 << 20));
        assert_eq!(parse_size("4m"), Ok(4 << 20));
        assert_eq!(parse_size("1.5G"), Ok(3 << 29));
        assert_eq!(parse_size("0"), Ok(0));
        assert!(parse_size("lots").unwrap_err().contains("expected a size"));
        assert!(parse_size("3 parsecs").unwrap_err().contains("units"));
        assert!(parse_size("99999999TiB").unwrap_err().contains("at most"));
    }
}
