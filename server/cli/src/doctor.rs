//! `seedfall doctor`: is this machine and this config ready to run? Each
//! check prints `ok`, `warn` or `FAIL`, and every problem comes with the
//! command that fixes it. Exit 0 only when everything the config needs
//! passes (without a config: everything any config could need). The
//! machine is probed by `seedfall_search::toolchain`.
use clap::Args;
use seedfall_search::toolchain::{self, WasmTarget, GO_MIN};
use seedfall_sim::config::{RustTarget, WasmSource};
use seedfall_sim::memory::human;
use std::path::{Path, PathBuf};

#[derive(Args)]
pub struct DoctorArgs {
    /// The config to check (its nodes are built). Without -c, seedfall.json
    /// when there is one, else only the machine is checked; a config given
    /// with -c must be a file.
    #[arg(short = 'c', long = "config")]
    pub config: Option<PathBuf>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Level {
    Ok,
    Warn,
    Fail,
}

struct Check {
    level: Level,
    what: String,
    detail: Vec<String>,
    fix: Option<String>,
}

fn ok(what: String) -> Check {
    Check { level: Level::Ok, what, detail: Vec::new(), fix: None }
}

fn problem(level: Level, what: String, fix: &str) -> Check {
    Check { level, what, detail: Vec::new(), fix: Some(fix.to_string()) }
}

pub fn main(a: DoctorArgs) -> i32 {
    let given = a.config.is_some();
    let path = a.config.unwrap_or_else(|| PathBuf::from("seedfall.json"));
    // Loading names what is wrong with a given path (missing, a folder, a
    // device); only the default may be absent.
    let config = (given || path.is_file()).then(|| seedfall_sim::Config::load(&path));
    let (needs_go, needs_rust, needs_threads) = match &config {
        Some(Ok(c)) => (
            c.nodes.iter().any(|n| matches!(n.source, WasmSource::Go { .. })),
            c.nodes.iter().any(|n| matches!(n.source, WasmSource::Cargo { .. })),
            c.nodes.iter().any(|n| matches!(n.source, WasmSource::Cargo { target: RustTarget::Wasip1Threads, .. })),
        ),
        // No config (or a broken one): whatever a config could need.
        _ => (true, true, true),
    };
    // What a config does not need is a warning, not a failure.
    let need = |needed: bool| if needed { Level::Fail } else { Level::Warn };
    let mut checks = vec![go(need(needs_go)), rust_target(need(needs_rust))];
    // The threads target only where something may build for it: a config
    // without threaded nodes is not warned about it.
    if needs_threads {
        checks.extend(rust_threads_target());
    }
    checks.push(cache(&path));
    checks.push(machine());
    match config {
        None => checks.push(Check {
            level: Level::Warn,
            what: format!("no config at {} (only the machine was checked)", path.display()),
            detail: Vec::new(),
            fix: Some("give one with -c FILE, or write one: docs/getting-started.md".into()),
        }),
        Some(Err(e)) => checks.push(Check { level: Level::Fail, what: format!("config: {e}"), detail: Vec::new(), fix: Some("fix the field it names: docs/config.md".into()) }),
        Some(Ok(c)) => {
            checks.push(ok(format!("config {}: {} node{}, {} a run", crate::output::relative(&c.path), c.nodes.len(), if c.nodes.len() == 1 { "" } else { "s" }, crate::output::real(c.duration.nanos()))));
            checks.extend(builds(&path, &c));
        }
    }
    println!("seedfall doctor");
    for c in &checks {
        let mark = match c.level {
            Level::Ok => "ok  ",
            Level::Warn => "warn",
            Level::Fail => "FAIL",
        };
        println!("  {mark}  {}", c.what);
        for d in &c.detail {
            println!("        {d}");
        }
        if let Some(f) = &c.fix {
            println!("        fix: {f}");
        }
    }
    let failed = checks.iter().filter(|c| c.level == Level::Fail).count();
    let warned = checks.iter().filter(|c| c.level == Level::Warn).count();
    match (failed, warned) {
        (0, 0) => println!("everything checked is ready"),
        (0, w) => println!("ready; {w} warning{}", if w == 1 { "" } else { "s" }),
        (f, _) => println!("{f} problem{} to fix first", if f == 1 { "" } else { "s" }),
    }
    i32::from(failed > 0)
}

fn go(level: Level) -> Check {
    let Some(toolchain::Go { text, version }) = toolchain::go() else {
        return problem(level, "go: not found on PATH (Go guests build with the machine's Go)".into(), "install Go 1.22 or newer from https://go.dev/dl/ and put its bin folder on PATH");
    };
    if version < GO_MIN {
        return problem(level, format!("go: {text}: older than go{}.{}, which building for wasip1 needs", GO_MIN.0, GO_MIN.1), "install Go 1.22 or newer from https://go.dev/dl/");
    }
    ok(format!("go: {text}"))
}

fn rust_target(level: Level) -> Check {
    match toolchain::rust_wasm_target(RustTarget::Wasip1.name()) {
        WasmTarget::NoRustup => problem(level, "rustup: not found (Rust guests build with cargo for wasm32-wasip1)".into(), "install Rust with rustup (https://rustup.rs), then: rustup target add wasm32-wasip1"),
        WasmTarget::Installed => ok("rust: the wasm32-wasip1 target is installed".into()),
        WasmTarget::Missing => problem(level, "rust: the wasm32-wasip1 target is not installed".into(), "rustup target add wasm32-wasip1"),
    }
}

/// The target of Rust programs that start threads (`"cargo": {"target":
/// "wasm32-wasip1-threads"}`); nothing when rustup is missing, which the
/// wasm32-wasip1 check already says with its fix.
fn rust_threads_target() -> Option<Check> {
    let target = RustTarget::Wasip1Threads.name();
    match toolchain::rust_wasm_target(target) {
        WasmTarget::NoRustup => None,
        WasmTarget::Installed => Some(ok(format!("rust: the {target} target is installed (for programs that start threads)"))),
        WasmTarget::Missing => Some(problem(Level::Fail, format!("rust: the {target} target is not installed (nodes with \"cargo\": {{\"target\": \"{target}\"}} build for it)"), &format!("rustup target add {target}"))),
    }
}

/// The cache's size, its entries, and what a crash left behind in it.
fn cache(config: &Path) -> Check {
    let dir = seedfall_search::cache::Cache::for_config(config.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."))).dir;
    let Some(toolchain::CacheSurvey { bytes, files, leftovers }) = toolchain::survey_cache(&dir) else {
        return ok(format!("cache: {} (empty: the first run builds and compiles every guest)", crate::output::relative(&dir)));
    };
    let what = format!("cache: {} ({}, {files} files)", crate::output::relative(&dir), human(bytes));
    if leftovers.is_empty() {
        return ok(what);
    }
    // Harmless (never read, and the next build in that folder clears them):
    // said, not counted against readiness.
    let mut c = ok(format!("{what}, with {} half-written file{} of a process that stopped mid-write (never read; the next build in that folder clears them)", leftovers.len(), if leftovers.len() == 1 { "" } else { "s" }));
    c.detail = leftovers.iter().take(3).map(|p| crate::output::relative(p)).collect();
    c
}

fn machine() -> Check {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let budget = crate::resources::Resources::default().memory_budget().unwrap_or(0);
    let share = crate::resources::runs_part(budget) / cores as u64;
    ok(format!("machine: {cores} core{}, memory budget {} (half the memory; -memory-budget), {} a run at -j {cores}", if cores == 1 { "" } else { "s" }, human(budget), human(share)))
}

/// Every node built and compiled, as a run would; a failure shows the
/// builder's own message.
fn builds(path: &Path, config: &seedfall_sim::Config) -> Vec<Check> {
    let started = std::time::Instant::now();
    let mut steps = Vec::new();
    let loaded = seedfall_search::load(path, &mut |m| steps.push(m.to_string()));
    let took = format!("{:.1}s", started.elapsed().as_secs_f64());
    match loaded {
        Ok(p) => {
            let mut c = ok(format!("build: {} node{} built and compiled in {took}", config.nodes.len(), if config.nodes.len() == 1 { "" } else { "s" }));
            c.detail = steps;
            let mut out = vec![c];
            if !p.catalog_warnings.is_empty() {
                out.push(Check { level: Level::Warn, what: format!("{} property call{} the catalog cannot list (non-literal messages)", p.catalog_warnings.len(), if p.catalog_warnings.len() == 1 { "" } else { "s" }), detail: p.catalog_warnings.iter().take(3).cloned().collect(), fix: Some("give properties literal messages: docs/properties.md#the-catalog".into()) });
            }
            out
        }
        Err(e) => {
            let text = e.to_string();
            let mut lines = text.lines();
            let first = lines.next().unwrap_or("").to_string();
            let mut c = problem(Level::Fail, format!("build: {first}"), "fix what the builder says (above); seedfall replays the same build with seedfall run -seeds 1");
            c.detail = lines.take(20).map(str::to_string).collect();
            vec![c]
        }
    }
}
