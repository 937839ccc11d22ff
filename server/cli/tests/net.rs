//! The simulated network, tested on real guests: a Rust program on the
//! `wasmedge_wasi_socket` crate and a Go program on `seedfall.dev/sdk/simnet`,
//! neither of which knows it is simulated.
mod common;
use common::*;
use std::path::{Path, PathBuf};

fn rust_net(name: &str, args: &str, workload: bool) -> String {
    format!(r#"{{ "name": "{name}", "cargo": {{ "dir": "$GUESTS/rust-net" }}, "args": [{args}], "workload": {workload} }}"#)
}

fn go_net(name: &str, args: &str, workload: bool) -> String {
    format!(r#"{{ "name": "{name}", "go": {{ "dir": "$GUESTS/go-net" }}, "args": [{args}], "workload": {workload} }}"#)
}

fn cluster(test: &str, duration: &str, nodes: &[String]) -> PathBuf {
    config(test, &format!(r#"{{ "duration": "{duration}", "nodes": [ {} ] }}"#, nodes.join(", ")))
}

/// Writes a schedule file next to `cfg` with these faults (JSON objects).
fn schedule(cfg: &Path, faults: &str) -> PathBuf {
    let path = cfg.with_file_name("faults.json");
    std::fs::write(&path, format!(r#"{{ "version": 1, "config": "seedfall", "seed": 1, "faults": [ {faults} ] }}"#)).unwrap();
    path
}

fn replay(cfg: &Path, faults: Option<&Path>) -> Out {
    let cfg = cfg.to_str().unwrap();
    let mut args = vec!["replay", "-c", cfg, "-seed", "1"];
    if let Some(f) = faults {
        args.extend(["-faults", f.to_str().unwrap()]);
    }
    seedfall(&args)
}

/// The virtual time (ms) of the first trace line containing `needle`.
fn time_of(out: &Out, needle: &str) -> f64 {
    let line = out.stdout.lines().find(|l| l.contains(needle)).unwrap_or_else(|| panic!("no line with {needle:?}:\n{}", out.stdout));
    let t = line.split_whitespace().next().unwrap();
    match t.strip_suffix("ms") {
        Some(ms) => ms.parse().unwrap(),
        None => t.strip_suffix('s').unwrap().parse::<f64>().unwrap() * 1000.0,
    }
}

fn passes(out: &Out) {
    assert_eq!(out.code, 0, "stdout:\n{}\nstderr:\n{}", out.stdout, out.stderr);
    assert!(out.stdout.contains("PASS seed"), "{}", out.stdout);
}

fn echo_server_rust() -> String {
    rust_net("server", r#""server", "--port", "7000""#, false)
}

#[test]
fn rust_echo_over_tcp_by_name() {
    let cfg = cluster("net-echo", "10s", &[echo_server_rust(), rust_net("client", r#""client", "--to", "server:7000", "--conns", "3", "--bytes", "10000""#, true)]);
    let out = replay(&cfg, None);
    passes(&out);
    assert!(out.stdout.contains("client ok conns=3 bytes=10000"), "{}", out.stdout);
    assert_eq!(out.stdout.matches("served 10000 bytes").count(), 3, "{}", out.stdout);
}

#[test]
fn many_connections_and_large_transfers() {
    // 1 MB each way in 1460-byte segments, each with its own latency: the
    // stream arrives whole and in order.
    let big = cluster("net-big", "30s", &[echo_server_rust(), rust_net("client", r#""client", "--to", "server:7000", "--conns", "2", "--bytes", "1000000""#, true)]);
    let out = replay(&big, None);
    passes(&out);
    assert!(out.stdout.contains("client ok conns=2 bytes=1000000"), "{}", out.stdout);
    let many = cluster("net-many", "30s", &[echo_server_rust(), rust_net("client", r#""client", "--to", "server:7000", "--conns", "60", "--bytes", "3000""#, true)]);
    let out = replay(&many, None);
    passes(&out);
    assert_eq!(out.stdout.matches("served 3000 bytes").count(), 60, "{}", out.stdout);
}

#[test]
fn connect_to_a_port_nobody_listens_on_is_refused() {
    let cfg = cluster("net-refused", "5s", &[echo_server_rust(), rust_net("client", r#""refused", "--to", "server:7001""#, true)]);
    let out = replay(&cfg, None);
    passes(&out);
    assert!(out.stdout.contains("refused ok: ConnectionRefused"), "{}", out.stdout);
    assert!(out.stdout.contains("client  net: connect to server:7001 refused"), "{}", out.stdout);
}

#[test]
fn a_partition_mid_transfer_stalls_until_it_heals() {
    let nodes = [echo_server_rust(), rust_net("client", r#""client", "--to", "server:7000", "--conns", "1", "--bytes", "500000""#, true)];
    let cfg = cluster("net-partition", "10s", &nodes);
    let plain = replay(&cfg, None);
    passes(&plain);
    let done_plain = time_of(&plain, "client ok");
    // Cut the server off 2ms in (the transfer is under way), for 300ms.
    let faults = schedule(&cfg, r#"{ "kind": "partition", "node": "server", "at_ns": 2000000, "duration_ns": 300000000 }"#);
    let out = replay(&cfg, Some(&faults));
    passes(&out);
    assert!(done_plain < 2.0 + 300.0, "the plain transfer takes {done_plain}ms");
    assert!(out.stdout.contains("fault: partition server from every other node for 300.000000ms"), "{}", out.stdout);
    let cut = time_of(&out, "fault: partition");
    let healed = time_of(&out, "partition healed");
    assert!((2.0..2.1).contains(&cut), "cut at {cut}");
    assert!((healed - cut - 300.0).abs() < 0.001, "cut at {cut}, healed at {healed}");
    assert!(time_of(&out, "client ok") > healed, "{}", out.stdout);
    assert!(time_of(&out, "served 500000 bytes") > healed, "{}", out.stdout);
}

/// `run -faults`: every seed of a sweep under the same explicit cut, each
/// drawing its own latencies; a failure it finds keeps those faults.
#[test]
fn run_sweeps_seeds_under_one_schedule_files_faults() {
    let nodes = [echo_server_rust(), rust_net("client", r#""client", "--to", "server:7000", "--conns", "3", "--bytes", "10000""#, true)];
    let cfg = cluster("net-run-faults", "10s", &nodes);
    let c = cfg.to_str().unwrap();
    let faults = schedule(&cfg, r#"{ "kind": "partition", "node": "server", "at_ns": 3000000, "duration_ns": 300000000 }"#);
    let f = faults.to_str().unwrap();
    let plain = json(&seedfall(&["run", "-c", c, "-seeds", "1-20", "-j", "2", "-json", "-hashes"]));
    let cut = json(&seedfall(&["run", "-c", c, "-seeds", "1-20", "-j", "2", "-json", "-hashes", "-faults", f]));
    assert_eq!(cut["passed"], 20, "{cut}");
    let per_run_ms = |d: &serde_json::Value| d["totals"]["virtual_ns"].as_u64().unwrap() as f64 / 20.0 / 1e6;
    // Every run waits out the cut: it lasts 300ms longer, give or take the
    // handshake that crossed it.
    assert!(per_run_ms(&plain) < 50.0, "{plain}");
    assert!(per_run_ms(&cut) > per_run_ms(&plain) + 250.0, "plain {} ms, cut {} ms", per_run_ms(&plain), per_run_ms(&cut));
    // The seeds still differ from one another under the same faults.
    let hashes: std::collections::BTreeSet<String> = cut["trace_hashes"].as_array().unwrap().iter().map(|h| h[1].as_str().unwrap().to_string()).collect();
    assert!(hashes.len() > 15, "{hashes:?}");
    let text = seedfall(&["run", "-c", c, "-seeds", "1-2", "-faults", f]);
    assert!(text.stdout.contains("seeds 1-2, each with the 1 fault of "), "{}", text.stdout);
    // -from draws faults after its prefix: the two do not mix.
    let both = seedfall(&["run", "-c", c, "-seeds", "1-2", "-faults", f, "-from", "1ms"]);
    assert_eq!(both.code, 2);
    assert!(both.stderr.contains("-faults and -from: give one"), "{}", both.stderr);
    let missing = seedfall(&["run", "-c", c, "-seeds", "1-2", "-faults", "/nonexistent/faults.json"]);
    assert_eq!(missing.code, 2);
    assert!(missing.stderr.contains("/nonexistent/faults.json"), "{}", missing.stderr);
}

#[test]
fn one_way_partitions_stop_one_direction() {
    let nodes = [echo_server_rust(), rust_net("client", r#""client", "--to", "server:7000", "--conns", "1", "--bytes", "100000""#, true)];
    let cfg = cluster("net-oneway", "10s", &nodes);
    // The cut lands at 4ms: connected (a handshake needs both directions)
    // and mid-transfer.
    let plain = replay(&cfg, None);
    assert!(time_of(&plain, "served 100000 bytes") > 4.0, "{}", plain.stdout);
    for direction in ["outbound", "inbound"] {
        let faults = schedule(&cfg, &format!(r#"{{ "kind": "partition", "node": "server", "at_ns": 4000000, "duration_ns": 400000000, "direction": "{direction}" }}"#));
        let out = replay(&cfg, Some(&faults));
        passes(&out);
        let healed = time_of(&out, "partition healed");
        assert!(time_of(&out, "client ok") > healed, "{direction}: {}", out.stdout);
        match direction {
            // The server hears everything but its echoes wait: it finishes
            // reading the whole request before the heal.
            "outbound" => {
                assert!(out.stdout.contains("one-way partition: server cannot reach every other node"), "{}", out.stdout);
                assert!(time_of(&out, "served 100000 bytes") < healed, "{}", out.stdout);
            }
            // The server hears nothing until the heal.
            _ => {
                assert!(out.stdout.contains("one-way partition: every other node cannot reach server"), "{}", out.stdout);
                assert!(time_of(&out, "served 100000 bytes") > healed, "{}", out.stdout);
            }
        }
    }
}

#[test]
fn a_receive_timeout_ends_a_blocking_read() {
    let nodes = [echo_server_rust(), rust_net("client", r#""read-timeout", "--to", "server:7000", "--ms", "250""#, true)];
    let cfg = cluster("net-rcvtimeo", "10s", &nodes);
    let out = replay(&cfg, None);
    passes(&out);
    assert!(out.stdout.contains("read timeout ok: WouldBlock"), "{}", out.stdout);
    let waited = time_of(&out, "read timeout ok") - time_of(&out, "connected; reading");
    assert!((250.0..251.0).contains(&waited), "waited {waited}ms");
}

#[test]
fn a_connect_across_a_partition_times_out() {
    let nodes = [echo_server_rust(), go_net("client", r#""-mode", "dial-timeout", "-to", "server:7000", "-timeout", "1s""#, true)];
    let cfg = cluster("net-timeout", "10s", &nodes);
    let faults = schedule(&cfg, r#"{ "kind": "partition", "node": "client", "at_ns": 0, "duration_ns": 5000000000 }"#);
    let out = replay(&cfg, Some(&faults));
    passes(&out);
    assert!(out.stdout.contains("timeout ok"), "{}", out.stdout);
    let t = time_of(&out, "timeout ok");
    assert!((1000.0..1100.0).contains(&t), "gave up at {t}ms");
}

#[test]
fn a_crashed_peer_resets_its_connections_and_listens_again_after_restart() {
    let nodes = [
        go_net("server", r#""-mode", "server", "-port", "7000""#, false),
        go_net("client", r#""-mode", "expect-reset", "-to", "server:7000""#, true),
    ];
    let cfg = cluster("net-crash", "10s", &nodes);
    let faults = schedule(&cfg, r#"{ "kind": "crash", "node": "server", "at_ns": 50000000, "restart_after_ns": 10000000 }"#);
    let out = replay(&cfg, Some(&faults));
    passes(&out);
    assert!(out.stdout.contains("reset ok"), "{}", out.stdout);
    assert!(time_of(&out, "reset ok") > 50.0, "{}", out.stdout);
    assert!(time_of(&out, "client  net: connection with server:7000 reset") > 50.0, "{}", out.stdout);
    assert!(time_of(&out, "reconnected ok") > 60.0, "{}", out.stdout);
    // The restarted server listens on the same port again.
    let again = out.stdout.lines().filter(|l| l.contains("echo server listening on :7000")).count();
    assert_eq!(again, 2, "{}", out.stdout);
}

#[test]
fn a_rust_client_talks_to_a_go_server_and_back() {
    let nodes = [
        go_net("goserver", r#""-mode", "server", "-port", "7000""#, false),
        rust_net("rustserver", r#""server", "--port", "7001""#, false),
        rust_net("rustclient", r#""client", "--to", "goserver:7000", "--conns", "4", "--bytes", "50000""#, true),
        go_net("goclient", r#""-mode", "client", "-to", "rustserver:7001", "-conns", "4", "-bytes", "50000", "-parallel""#, true),
    ];
    let cfg = cluster("net-mixed", "10s", &nodes);
    let out = replay(&cfg, None);
    passes(&out);
    assert!(out.stdout.contains("client ok conns=4 bytes=50000"), "{}", out.stdout);
    assert_eq!(out.stdout.matches("client ok conns=4 bytes=50000").count(), 2, "{}", out.stdout);
}

#[test]
fn go_http_over_the_simulated_network() {
    let nodes = [
        go_net("web", r#""-mode", "http-server", "-port", "8080""#, false),
        go_net("browser", r#""-mode", "http-client", "-to", "web:8080", "-n", "20""#, true),
    ];
    let cfg = cluster("net-http", "10s", &nodes);
    let out = replay(&cfg, None);
    passes(&out);
    assert!(out.stdout.contains("http ok n=20"), "{}", out.stdout);
}

#[test]
fn network_runs_replay_to_the_same_trace_hash() {
    let nodes = [echo_server_rust(), rust_net("client", r#""client", "--to", "server:7000", "--conns", "5", "--bytes", "20000""#, true)];
    let cfg = cluster("net-determinism", "10s", &nodes);
    let faults = schedule(&cfg, r#"{ "kind": "partition", "node": "server", "at_ns": 1000000, "duration_ns": 20000000, "direction": "inbound" }, { "kind": "partition", "node": "client", "at_ns": 30000000, "duration_ns": 20000000 }"#);
    let a = replay(&cfg, Some(&faults));
    let b = replay(&cfg, Some(&faults));
    passes(&a);
    assert_eq!(without_real_times(&a.stdout), without_real_times(&b.stdout));
    let c = cfg.to_str().unwrap();
    let j1 = json(&seedfall(&["run", "-c", c, "-seeds", "1-12", "-j", "1", "-json", "-hashes"]));
    let j2 = json(&seedfall(&["run", "-c", c, "-seeds", "1-12", "-j", "2", "-json", "-hashes"]));
    assert_eq!(j1["trace_hashes"], j2["trace_hashes"]);
    let distinct: std::collections::BTreeSet<&str> = j1["trace_hashes"].as_array().unwrap().iter().map(|h| h[1].as_str().unwrap()).collect();
    assert!(distinct.len() > 6, "latency draws should make seeds differ: {distinct:?}");
}
