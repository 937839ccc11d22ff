//! seedfall-sweep: seeds 1..=N of a config, each with the faults of one
//! schedule file, sequentially on this thread; for the partition pair of
//! scripts/bench's peer section.
//!
//! `seedfall run` draws faults from the config's rates and takes no
//! schedule, and a config cannot carry explicit faults (docs/config.md);
//! `seedfall replay -faults FILE` takes one, but runs one seed per process.
//! This is `seedfall run -j 1 -snapshots off`'s loop (`seedfall_search::sweep`:
//! load the project once, then `seedfall_sim::run` per seed, traces of
//! passing runs dropped) with the schedule file's faults in every seed's
//! schedule. Without `-faults` it runs plain seeds, which is how scripts/bench
//! checks that this loop measures what `seedfall run` does.
//!
//! Usage: seedfall-sweep -c CONFIG [-seeds N] [-faults FILE] [-pair NAME]
//!
//! Prints the same `key=value` line as peer-turmoil, then sanity lines; a
//! run is ok when every workload node exited 0 and the client printed
//! `client ok` (it checks every byte it got back). The time spent checking
//! the traces is left out of the rate.
use seedfall_sim::outcome::EndReason;
use seedfall_sim::trace::EventKind;
use seedfall_sim::{run, Fault, RunOptions, Schedule, ScheduleFile, Verdict};
use std::path::PathBuf;
use std::process::exit;
use std::time::{Duration, Instant};

fn usage(why: &str) -> ! {
    eprintln!("seedfall-sweep: {why}");
    eprintln!("usage: seedfall-sweep -c CONFIG [-seeds N] [-faults FILE] [-pair NAME]");
    exit(2);
}

/// What the trace says about one run: the client's `client ok`, and for a
/// partition, whether it began inside a transfer (after a connect of the
/// client and before the server had echoed that connection's bytes) and
/// whether it healed.
#[derive(Default)]
struct Check {
    client_ok: bool,
    cut_at: Option<u64>,
    cut_in_transfer: bool,
    healed: bool,
}

fn check(trace: &[seedfall_sim::trace::TraceEvent]) -> Check {
    let mut c = Check::default();
    let (mut connected, mut served) = (Vec::new(), Vec::new());
    for e in trace {
        let node = e.node.as_deref();
        match &e.kind {
            EventKind::Net { text } if node == Some("client") && text.starts_with("connected to") => connected.push(e.time_ns),
            EventKind::Net { text } if text.contains("partition healed") => c.healed = true,
            EventKind::Output { text, .. } if node == Some("server") && text.starts_with("served ") => served.push(e.time_ns),
            EventKind::Output { text, .. } if node == Some("client") && text.starts_with("client ok") => c.client_ok = true,
            EventKind::Fault { fault: Fault::Partition { at_ns, .. } } => c.cut_at = Some(*at_ns),
            _ => {}
        }
    }
    if let Some(at) = c.cut_at {
        c.cut_in_transfer = connected.iter().zip(&served).any(|(&from, &to)| from <= at && at < to);
    }
    c
}

fn main() {
    let (mut config, mut seeds, mut faults, mut pair) = (None::<PathBuf>, 2000u64, None::<PathBuf>, None::<String>);
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = |name: &str| args.next().unwrap_or_else(|| usage(&format!("{name} needs a value")));
        match a.trim_start_matches('-') {
            "c" | "config" => config = Some(value("-c").into()),
            "seeds" => seeds = value("-seeds").parse().unwrap_or_else(|_| usage("-seeds must be a number (seeds 1..=N)")),
            "faults" => faults = Some(value("-faults").into()),
            "pair" => pair = Some(value("-pair")),
            other => usage(&format!("unknown flag -{other}")),
        }
    }
    let config = config.unwrap_or_else(|| usage("-c CONFIG is required"));
    let project = seedfall_search::load(&config, &mut |msg| eprintln!("seedfall-sweep: {msg}")).unwrap_or_else(|e| {
        eprintln!("seedfall-sweep: {e}");
        exit(2);
    });
    let program = &project.program;
    let base = match &faults {
        None => Schedule::seed(0),
        Some(path) => {
            let text = std::fs::read_to_string(path).unwrap_or_else(|e| {
                eprintln!("seedfall-sweep: {}: {e}", path.display());
                exit(2);
            });
            ScheduleFile::parse(&text, &program.config)
                .unwrap_or_else(|e| {
                    eprintln!("seedfall-sweep: {}: {e}", path.display());
                    exit(2);
                })
                .schedule()
        }
    };
    let pair = pair.unwrap_or_else(|| if faults.is_some() { "partition" } else { "echo" }.to_string());
    let options = RunOptions::default();
    let (mut ok, mut virtual_ns, mut cuts, mut in_transfer, mut healed) = (0u64, 0u64, 0u64, 0u64, 0u64);
    let mut first_bad: Option<(u64, String)> = None;
    let mut checking = Duration::ZERO;
    let started = Instant::now();
    for seed in 1..=seeds {
        let mut outcome = run(program, &Schedule { seed, ..base.clone() }, &options);
        virtual_ns += outcome.stats.virtual_ns;
        let t = Instant::now();
        let c = check(&outcome.trace);
        if outcome.verdict == Verdict::Pass && outcome.end == EndReason::WorkloadDone && c.client_ok {
            ok += 1;
        } else if first_bad.is_none() {
            let why = outcome.failure.as_ref().map(|f| format!("{f:?}")).unwrap_or_else(|| format!("{:?}, client ok: {}", outcome.end, c.client_ok));
            first_bad = Some((seed, why));
        }
        cuts += u64::from(c.cut_at.is_some());
        in_transfer += u64::from(c.cut_in_transfer);
        healed += u64::from(c.healed);
        checking += t.elapsed();
        // As the sweep does: a passing run's trace is dropped on the worker.
        if outcome.verdict == Verdict::Pass {
            outcome.trace = Vec::new();
        }
        drop(outcome);
    }
    let wall = (started.elapsed() - checking).as_secs_f64().max(1e-9);
    println!(
        "pair={pair} runs={seeds} ok={ok} wall_s={wall:.3} runs_per_second={:.1} virtual_ms_per_run={:.2} partitions={cuts} healed={healed} cut_in_transfer={in_transfer}",
        seeds as f64 / wall,
        virtual_ns as f64 / 1e6 / seeds.max(1) as f64,
    );
    match &first_bad {
        Some((seed, why)) => eprintln!("seedfall-sweep: {pair}: {} of {seeds} runs did not finish with every byte echoed (first: seed {seed}: {why})", seeds - ok),
        None => eprintln!("seedfall-sweep: {pair}: sanity: all {seeds} runs finished, the client checked every byte"),
    }
    if faults.is_some() {
        eprintln!("seedfall-sweep: {pair}: sanity: {cuts} runs partitioned, {healed} healed; the cut began inside a transfer in {in_transfer} of {seeds} runs");
    }
    if first_bad.is_some() {
        exit(1);
    }
}
