//! peer-turmoil: seedfall's rust-net echo workload (tests/guests/rust-net,
//! the `rust-echo` config of scripts/bench) written against turmoil 0.7.2,
//! one simulation per seed, seeds 1..=N in order on this thread.
//!
//! The workload mirrors the guest's code: a server on port 7000 echoes one
//! connection at a time (reads of up to 4096 bytes, each written back whole)
//! until EOF; the client makes 3 sequential connections, each one write of
//! 10,000 bytes (the guest's pattern), a shutdown of its write side, a read
//! to EOF and a byte-for-byte check. A refused connect is retried every
//! 100ms, up to 50 attempts, as the guest does.
//!
//! Two pairs:
//!   echo       the workload as is
//!   partition  the same, with the link between server and client cut from
//!              `--partition-at-ms` for `--partition-ms` (turmoil's
//!              `hold`/`release`: segments wait on the cut link and are
//!              delivered at the heal, as seedfall's partition stalls a
//!              stream and resumes it; turmoil's `partition` would drop
//!              them, and its TCP does not retransmit)
//!
//! Usage: peer-turmoil [N] [--pair echo|partition|both] [--partition-at-ms T] [--partition-ms D]
//!        peer-turmoil --show SEED [--pair ...]   one run's connections in virtual time
//!
//! Prints one `key=value` line per pair (read by scripts/bench), then a
//! sanity line; exits 1 if any run did not echo every byte back.
use std::cell::RefCell;
use std::io::ErrorKind;
use std::process::exit;
use std::rc::Rc;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use turmoil::net::{TcpListener, TcpStream};

const PORT: u16 = 7000;
const CONNS: usize = 3;
const BYTES: usize = 10_000;

/// What one run's client saw, in virtual time since the start of the run.
#[derive(Default)]
struct ClientLog {
    /// Per connection: when it was connected, and when its echo was checked.
    conns: Vec<(Duration, Duration)>,
    /// Bytes that came back equal to what was sent.
    echoed: usize,
    /// Refused connects retried.
    retries: u32,
}

/// Byte `j` of connection `i`'s message (the guest's `pattern`).
fn pattern(i: usize, len: usize) -> Vec<u8> {
    (0..len).map(|j| ((i * 31 + j * 7) % 251) as u8).collect()
}

fn now() -> Duration {
    turmoil::sim_elapsed().unwrap_or_default()
}

async fn server() -> turmoil::Result {
    let listener = TcpListener::bind(("0.0.0.0", PORT)).await?;
    loop {
        let (stream, _peer) = listener.accept().await?;
        // A failed connection is the guest's stderr line and the next accept.
        let _ = echo(stream).await;
    }
}

/// Echoes until the peer's EOF; the stream is closed when dropped.
async fn echo(mut stream: TcpStream) -> std::io::Result<u64> {
    let mut buf = [0u8; 4096];
    let mut total = 0u64;
    loop {
        let n = stream.read(&mut buf).await?;
        if n == 0 {
            return Ok(total);
        }
        stream.write_all(&buf[..n]).await?;
        total += n as u64;
    }
}

async fn connect_with_retry(to: &str, log: &RefCell<ClientLog>) -> std::io::Result<TcpStream> {
    const ATTEMPTS: u32 = 50;
    let mut attempt = 1;
    loop {
        match TcpStream::connect(to).await {
            Ok(s) => return Ok(s),
            Err(e) if e.kind() == ErrorKind::ConnectionRefused && attempt < ATTEMPTS => {
                attempt += 1;
                log.borrow_mut().retries += 1;
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            Err(e) => return Err(e),
        }
    }
}

async fn client(to: &'static str, log: Rc<RefCell<ClientLog>>) -> turmoil::Result {
    for i in 0..CONNS {
        let sent = pattern(i, BYTES);
        let mut stream = connect_with_retry(to, &log).await?;
        let connected = now();
        stream.write_all(&sent).await?;
        stream.shutdown().await?;
        let mut got = Vec::with_capacity(BYTES);
        stream.read_to_end(&mut got).await?;
        if got != sent {
            return Err(format!("conn {i}: echo mismatch: sent {} bytes, got {}", sent.len(), got.len()).into());
        }
        drop(stream);
        let mut l = log.borrow_mut();
        l.echoed += got.len();
        l.conns.push((connected, now()));
    }
    Ok(())
}

/// A cut between the two hosts: from `at`, for `duration`.
#[derive(Clone, Copy)]
struct Cut {
    at: Duration,
    duration: Duration,
}

struct RunResult {
    log: ClientLog,
    virtual_time: Duration,
}

fn one_run(seed: u64, cut: Option<Cut>) -> Result<RunResult, String> {
    let mut sim = turmoil::Builder::new()
        .rng_seed(seed)
        // The rust-echo config's duration, and seedfall's default latency
        // (net.latency "100us-2ms"). turmoil's default tick (1ms) stays.
        .simulation_duration(Duration::from_secs(5))
        .min_message_latency(Duration::from_micros(100))
        .max_message_latency(Duration::from_millis(2))
        .build();
    sim.host("server", server);
    let log = Rc::new(RefCell::new(ClientLog::default()));
    sim.client("client", client("server:7000", log.clone()));
    match cut {
        None => sim.run().map_err(|e| e.to_string())?,
        Some(c) => {
            // Sim::run, with the cut applied between steps.
            let (mut held, mut released) = (false, false);
            loop {
                if !held && sim.elapsed() >= c.at {
                    sim.hold("server", "client");
                    held = true;
                }
                if held && !released && sim.elapsed() >= c.at + c.duration {
                    sim.release("server", "client");
                    released = true;
                }
                if sim.step().map_err(|e| e.to_string())? {
                    break;
                }
            }
        }
    }
    let virtual_time = sim.elapsed();
    drop(sim);
    let log = Rc::try_unwrap(log).map_err(|_| "client log still shared".to_string())?.into_inner();
    Ok(RunResult { log, virtual_time })
}

struct PairReport {
    runs: u64,
    ok: u64,
    wall: Duration,
    virtual_total: Duration,
    /// Runs in which the cut began while a connection was open (between its
    /// connect and its checked echo).
    cut_in_transfer: u64,
    retries: u64,
    first_error: Option<(u64, String)>,
}

fn pair(seeds: u64, cut: Option<Cut>) -> PairReport {
    let mut r = PairReport { runs: 0, ok: 0, wall: Duration::ZERO, virtual_total: Duration::ZERO, cut_in_transfer: 0, retries: 0, first_error: None };
    let started = Instant::now();
    for seed in 1..=seeds {
        r.runs += 1;
        match one_run(seed, cut) {
            Ok(run) => {
                r.virtual_total += run.virtual_time;
                r.retries += u64::from(run.log.retries);
                if run.log.echoed == CONNS * BYTES && run.log.conns.len() == CONNS {
                    r.ok += 1;
                } else if r.first_error.is_none() {
                    r.first_error = Some((seed, format!("echoed {} of {} bytes", run.log.echoed, CONNS * BYTES)));
                }
                if let Some(c) = cut {
                    if run.log.conns.iter().any(|&(from, to)| from <= c.at && c.at < to) {
                        r.cut_in_transfer += 1;
                    }
                }
            }
            Err(e) => {
                if r.first_error.is_none() {
                    r.first_error = Some((seed, e));
                }
            }
        }
    }
    r.wall = started.elapsed();
    r
}

fn usage(why: &str) -> ! {
    eprintln!("peer-turmoil: {why}");
    eprintln!("usage: peer-turmoil [N] [--pair echo|partition|both] [--partition-at-ms T] [--partition-ms D]");
    eprintln!("       peer-turmoil --show SEED [--pair ...]");
    exit(2);
}

fn main() {
    let mut seeds = 2000u64;
    let mut which = "both".to_string();
    let (mut at_ms, mut dur_ms) = (10u64, 300u64);
    let mut show: Option<u64> = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = |name: &str| args.next().unwrap_or_else(|| usage(&format!("{name} needs a value")));
        match a.as_str() {
            "--pair" => which = value("--pair"),
            "--partition-at-ms" => at_ms = value("--partition-at-ms").parse().unwrap_or_else(|_| usage("--partition-at-ms must be a number")),
            "--show" => show = Some(value("--show").parse().unwrap_or_else(|_| usage("--show must be a seed"))),
            "--partition-ms" => dur_ms = value("--partition-ms").parse().unwrap_or_else(|_| usage("--partition-ms must be a number")),
            n if !n.starts_with('-') => seeds = n.parse().unwrap_or_else(|_| usage(&format!("N must be a number, got {n}"))),
            other => usage(&format!("unknown flag {other}")),
        }
    }
    let cut = Cut { at: Duration::from_millis(at_ms), duration: Duration::from_millis(dur_ms) };
    let pairs: Vec<(&str, Option<Cut>)> = match which.as_str() {
        "echo" => vec![("echo", None)],
        "partition" => vec![("partition", Some(cut))],
        "both" => vec![("echo", None), ("partition", Some(cut))],
        other => usage(&format!("--pair: expected echo, partition or both, got {other}")),
    };
    if let Some(seed) = show {
        for (name, cut) in pairs {
            match one_run(seed, cut) {
                Ok(run) => {
                    let conns: Vec<String> = run.log.conns.iter().map(|(a, b)| format!("{:.3}-{:.3}ms", a.as_secs_f64() * 1e3, b.as_secs_f64() * 1e3)).collect();
                    println!("{name} seed {seed}: connections {} ended at {:.3}ms", conns.join(" "), run.virtual_time.as_secs_f64() * 1e3);
                }
                Err(e) => println!("{name} seed {seed}: {e}"),
            }
        }
        return;
    }
    let mut failed = false;
    for (name, cut) in pairs {
        let r = pair(seeds, cut);
        let secs = r.wall.as_secs_f64().max(1e-9);
        println!(
            "pair={name} runs={} ok={} wall_s={:.3} runs_per_second={:.1} virtual_ms_per_run={:.2} connect_retries={} cut_in_transfer={}",
            r.runs,
            r.ok,
            secs,
            r.runs as f64 / secs,
            r.virtual_total.as_secs_f64() * 1e3 / r.runs.max(1) as f64,
            r.retries,
            r.cut_in_transfer,
        );
        match &r.first_error {
            Some((seed, e)) => {
                failed = true;
                eprintln!("peer-turmoil: {name}: {} of {} runs did not echo every byte (first: seed {seed}: {e})", r.runs - r.ok, r.runs);
            }
            None => eprintln!("peer-turmoil: {name}: sanity: all {} runs echoed {CONNS}x{BYTES} bytes", r.runs),
        }
        if let Some(c) = cut {
            eprintln!(
                "peer-turmoil: {name}: sanity: the cut at {}ms for {}ms began inside a transfer in {} of {} runs",
                c.at.as_millis(),
                c.duration.as_millis(),
                r.cut_in_transfer,
                r.runs
            );
        }
    }
    if failed {
        exit(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_connection_echoes_its_bytes() {
        let run = one_run(1, None).unwrap();
        assert_eq!(run.log.echoed, CONNS * BYTES);
        assert_eq!(run.log.conns.len(), CONNS);
    }

    #[test]
    fn the_cut_holds_a_transfer_until_the_heal_and_loses_nothing() {
        let cut = Cut { at: Duration::from_millis(3), duration: Duration::from_millis(300) };
        let run = one_run(1, Some(cut)).unwrap();
        assert_eq!(run.log.echoed, CONNS * BYTES);
        assert!(run.log.conns.iter().any(|&(from, to)| from <= cut.at && cut.at + cut.duration <= to), "no connection spans the cut: {:?}", run.log.conns);
    }
}
