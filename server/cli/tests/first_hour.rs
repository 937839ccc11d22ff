//! A newcomer's first hour: `seedfall init` on programs that have no
//! config, then `seedfall run` straight after it; `seedfall doctor` on a
//! good config, a broken one and a machine without Go.
mod common;
use common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A copy of a repo folder (an example or a test guest) without its
/// configs or state, at the same depth below a root whose `sdk` is the
/// repo's, so relative `replace` lines still resolve.
fn copy_of(test: &str, rel: &str) -> PathBuf {
    let root = scratch(test);
    std::os::unix::fs::symlink(repo().join("sdk"), root.join("sdk")).unwrap();
    let to = root.join(rel);
    std::fs::create_dir_all(to.parent().unwrap()).unwrap();
    let status = Command::new("cp").arg("-a").arg(repo().join(rel)).arg(&to).status().unwrap();
    assert!(status.success());
    for e in std::fs::read_dir(&to).unwrap().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with("seedfall") && name.ends_with(".json") {
            std::fs::remove_file(e.path()).unwrap();
        }
    }
    let _ = std::fs::remove_dir_all(to.join(".seedfall"));
    to
}

fn seedfall_in(dir: &Path, args: &[&str]) -> Out {
    let out = Command::new(env!("CARGO_BIN_EXE_seedfall"))
        .args(args)
        .current_dir(dir)
        .env("SEEDFALL_CACHE_DIR", repo().join("target/seedfall-test-cache"))
        .env("GOTOOLCHAIN", "local")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    Out { code: out.status.code().unwrap_or(-1), stdout: String::from_utf8_lossy(&out.stdout).into_owned(), stderr: String::from_utf8_lossy(&out.stderr).into_owned() }
}

fn config(dir: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("seedfall.json")).unwrap()).unwrap()
}

/// `init`, then `run -seeds 1-N -json`: the runs happened (exit 0 or 1,
/// never a config or build error).
fn init_then_run(dir: &Path, init: &[&str], seeds: &str) -> (Value, Value) {
    let mut args = vec!["init"];
    args.extend_from_slice(init);
    let out = seedfall_in(dir, &args);
    assert_eq!(out.code, 0, "init: {}\n{}", out.stdout, out.stderr);
    assert!(out.stdout.contains("next:") && out.stdout.contains("seedfall run -c seedfall.json"), "{}", out.stdout);
    let run = seedfall_in(dir, &["run", "-seeds", seeds, "-json"]);
    assert!(run.code <= 1, "run after init: {}\n{}", run.stdout, run.stderr);
    (config(dir), json(&run))
}

#[test]
fn init_a_go_storage_program_sees_its_data_folder_and_the_run_finds_the_bug() {
    let dir = copy_of("init-kvlog", "examples/kvlog");
    let (cfg, run) = init_then_run(&dir, &[], "1-40");
    let node = &cfg["nodes"][0];
    assert_eq!(node["name"], "kvlog");
    assert_eq!(node["go"]["dir"], ".");
    assert_eq!(node["disk"]["dirs"], serde_json::json!(["/data"]), "kvlog writes /data/kv.log: {cfg}");
    assert!(node.get("workload").is_none());
    assert_eq!(cfg["faults"]["torn_writes"], true);
    assert!(cfg["faults"].get("partition").is_none(), "no network, no partitions");
    assert!(cfg["//"].is_array() && node["//"].is_array(), "every choice is explained");
    assert_eq!(run["runs"], 40);
    assert!(run["failed"].as_u64().unwrap() > 0, "crashes with torn writes lose kvlog's acknowledged writes");
    // It does not overwrite a config without -force.
    let again = seedfall_in(&dir, &["init"]);
    assert_eq!(again.code, 2);
    assert!(again.stderr.contains("seedfall.json exists: give -force"), "{}", again.stderr);
}

#[test]
fn init_a_plain_go_program_without_the_sdk() {
    // examples/explore-coverage imports nothing of seedfall.
    let dir = copy_of("init-plain", "examples/explore-coverage");
    assert!(!std::fs::read_to_string(dir.join("main.go")).unwrap().contains("seedfall.dev/sdk"));
    let (cfg, run) = init_then_run(&dir, &[], "1-20");
    assert_eq!(cfg["nodes"].as_array().unwrap().len(), 1);
    assert_eq!(run["runs"], 20);
    assert_eq!(run["failed"], 0);
}

#[test]
fn init_a_networked_go_program_as_a_server_and_a_client() {
    let dir = copy_of("init-net", "tests/guests/go-net-plain");
    let (cfg, run) = init_then_run(&dir, &["-node", "web=-mode server -port 8080", "-node", "browser=-mode client -to web:8080 -n 5", "-server", "web"], "1-10");
    let nodes = cfg["nodes"].as_array().unwrap();
    assert_eq!(nodes.len(), 2);
    assert_eq!(nodes[0]["go"]["net"], true, "it imports net/http: {cfg}");
    assert_eq!(nodes[0]["workload"], false);
    assert_eq!(nodes[1]["args"], serde_json::json!(["-mode", "client", "-to", "web:8080", "-n", "5"]));
    assert!(cfg["faults"]["partition"].is_object(), "networked: partitions too");
    assert_eq!(run["runs"], 10);
}

#[test]
fn init_a_networked_rust_program() {
    let dir = copy_of("init-rust-net", "tests/guests/rust-net");
    let (cfg, run) = init_then_run(&dir, &["-node", "server=server --port 7001", "-node", "client=client --to server:7001 --conns 2 --bytes 1000", "-server", "server"], "1-10");
    assert_eq!(cfg["nodes"][0]["cargo"]["bin"], "rust-net");
    assert!(cfg["faults"]["partition"].is_object(), "wasmedge_wasi_socket: networked");
    assert_eq!(run["runs"], 10);
    assert_eq!(run["failed"], 0, "{run}");
}

#[test]
fn init_builds_a_threaded_rust_program_for_the_threads_target() {
    let dir = copy_of("init-rust-threads", "tests/guests/rust-threads");
    let out = seedfall_in(&dir, &["init"]);
    assert_eq!(out.code, 0, "init: {}\n{}", out.stdout, out.stderr);
    let cfg = config(&dir);
    let nodes = cfg["nodes"].as_array().unwrap();
    let bins: Vec<&str> = nodes.iter().map(|n| n["cargo"]["bin"].as_str().unwrap()).collect();
    assert_eq!(bins.len(), 4, "{cfg}");
    for bin in ["race", "pingpong", "pool", "panic"] {
        assert!(bins.contains(&bin), "{bin}: {cfg}");
    }
    for n in nodes {
        assert_eq!(n["cargo"]["target"], "wasm32-wasip1-threads", "{n}");
        let why = n["//"].as_array().map(|w| w.iter().filter_map(Value::as_str).collect::<Vec<_>>().join(" ")).unwrap_or_default();
        assert!(why.contains("It depends on rayon: built for wasm32-wasip1-threads"), "{n}");
    }
    // doctor checks the threads target for it, with its own line.
    let doctor = seedfall_in(&dir, &["doctor"]);
    assert!(doctor.stdout.contains("ok    rust: the wasm32-wasip1-threads target is installed (for programs that start threads)"), "{}", doctor.stdout);
    // A program that only sleeps on std::thread stays on wasm32-wasip1.
    let dir = copy_of("init-rust-sleeps", "tests/guests/rust-basic");
    assert_eq!(seedfall_in(&dir, &["init"]).code, 0);
    let cfg = config(&dir);
    assert!(cfg["nodes"][0]["cargo"].get("target").is_none(), "{cfg}");
}

#[test]
fn init_in_a_virtual_cargo_workspace_finds_its_members_binaries() {
    let dir = scratch("init-workspace");
    std::fs::write(
        dir.join("Cargo.toml"),
        "[workspace]\nmembers = [\"tools/app\"]\nresolver = \"2\"\n",
    )
    .unwrap();
    let app = dir.join("tools/app");
    std::fs::create_dir_all(app.join("src")).unwrap();
    std::fs::write(
        app.join("Cargo.toml"),
        "[package]\nname = \"app\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    )
    .unwrap();
    std::fs::write(
        app.join("src/main.rs"),
        "fn main() {\n    std::fs::write(\"/var/lib/app/state\", b\"1\").unwrap();\n}\n",
    )
    .unwrap();
    // It said "no program found".
    let (cfg, run) = init_then_run(&dir, &[], "1-3");
    let cargo = &cfg["nodes"][0]["cargo"];
    assert_eq!(
        (
            cargo["dir"].as_str(),
            cargo["package"].as_str(),
            cargo["bin"].as_str()
        ),
        (Some("."), Some("app"), Some("app")),
        "{cfg}"
    );
    assert_eq!(
        cfg["nodes"][0]["disk"]["dirs"],
        serde_json::json!(["/var/lib/app"]),
        "{cfg}"
    );
    assert_eq!(
        (run["runs"].as_u64(), run["failed"].as_u64()),
        (Some(3), Some(0)),
        "{run}"
    );
}

#[test]
fn init_says_what_it_cannot_do() {
    let empty = scratch("init-empty");
    let out = seedfall_in(&empty, &["init"]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("has no go.mod or Cargo.toml"), "{}", out.stderr);
    let dir = copy_of("init-two-bins", "examples/kvlog");
    let out = seedfall_in(&dir, &["init", "-server", "nope"]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("-server nope: no node of that name (nodes: kvlog)"), "{}", out.stderr);
}

#[test]
fn comments_in_a_config_are_read_and_a_bad_one_is_named() {
    let dir = copy_of("init-comment", "examples/kvlog");
    seedfall_in(&dir, &["init"]);
    let text = std::fs::read_to_string(dir.join("seedfall.json")).unwrap();
    std::fs::write(dir.join("bad.json"), text.replacen("\"//\": [", "\"//\": 7, \"x\": [", 1)).unwrap();
    let out = seedfall_in(&dir, &["run", "-c", "bad.json", "-seeds", "1"]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("$.//: a comment is a string or a list of strings, found a number"), "{}", out.stderr);
}

#[test]
fn doctor_passes_a_good_config_and_names_each_problem_with_its_fix() {
    let dir = copy_of("doctor", "examples/kvlog");
    seedfall_in(&dir, &["init"]);
    let out = seedfall_in(&dir, &["doctor"]);
    assert_eq!(out.code, 0, "{}", out.stdout);
    for line in ["ok    go: go version go1.", "ok    rust: the wasm32-wasip1 target is installed", "ok    config seedfall.json: 1 node", "ok    build: 1 node built and compiled", "everything checked is ready"] {
        assert!(out.stdout.contains(line), "{line}:\n{}", out.stdout);
    }
    // A node that does not build: the builder's own message, and a fix.
    std::fs::write(dir.join("broken.go"), "package main\n\nfunc broken() { undefinedThing() }\n").unwrap();
    let out = seedfall_in(&dir, &["doctor"]);
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert!(out.stdout.contains("FAIL  build:") && out.stdout.contains("undefined: undefinedThing"), "{}", out.stdout);
    assert!(out.stdout.contains("1 problem to fix first"), "{}", out.stdout);
    assert!(out.stdout.contains("reproduce it: cd ") && out.stdout.contains("GOOS=wasip1 GOARCH=wasm go build -trimpath ."), "{}", out.stdout);
    std::fs::remove_file(dir.join("broken.go")).unwrap();
    // No Go on PATH: a failure for a Go config, with where to get it.
    let out = Command::new(env!("CARGO_BIN_EXE_seedfall")).arg("doctor").current_dir(&dir).env("PATH", "/nonexistent").env("SEEDFALL_CACHE_DIR", repo().join("target/seedfall-test-cache")).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("FAIL  go: not found on PATH") && text.contains("fix: install Go 1.22 or newer"), "{text}");
    // A config error names the file, the field and what was expected.
    std::fs::write(dir.join("typo.json"), r#"{"duration": "2s", "nodes": [{"name": "kv", "go": {"dir": "."}, "replica": 2}]}"#).unwrap();
    let out = seedfall_in(&dir, &["doctor", "-c", "typo.json"]);
    assert_eq!(out.code, 1);
    assert!(out.stdout.contains("$.nodes[0].replica: unknown field \"replica\" (did you mean \"replicas\"?)"), "{}", out.stdout);
    // A config given with -c that is no config file fails; it said "ready".
    for (given, why) in [("missing.json", "does not exist"), (".", "is a folder, expected a file"), ("/dev/zero", "is not a regular file")] {
        let out = seedfall_in(&dir, &["doctor", "-c", given]);
        assert_eq!(out.code, 1, "{given}: {}", out.stdout);
        assert!(out.stdout.contains("FAIL  config:") && out.stdout.contains(why) && !out.stdout.contains("ready"), "{given}: {}", out.stdout);
    }
}

#[test]
fn a_go_program_for_linux_only_fails_to_build_with_what_to_do() {
    let dir = scratch("linux-only");
    std::fs::write(dir.join("go.mod"), "module example.com/linuxonly\n\ngo 1.22\n").unwrap();
    std::fs::write(dir.join("main.go"), "//go:build linux\n\npackage main\n\nfunc main() {}\n").unwrap();
    let init = seedfall_in(&dir, &["init"]);
    assert_eq!(
        init.code, 2,
        "go list sees no program for wasip1: {}",
        init.stdout
    );
    // Not without a word: it said "no program found" alone.
    assert!(init.stderr.contains("skipped example.com/linuxonly (.): a main package whose Go files are all for other systems"), "{}", init.stderr);
    std::fs::write(
        dir.join("seedfall.json"),
        r#"{"duration": "1s", "nodes": [{"name": "app", "go": {"dir": "."}}]}"#,
    )
    .unwrap();
    let out = seedfall_in(&dir, &["run", "-seeds", "1"]);
    assert_eq!(out.code, 2);
    for needle in ["go build failed in", "build constraints exclude all Go files", "reproduce it: cd ", "hint: a package has no Go files for GOOS=wasip1"] {
        assert!(out.stderr.contains(needle), "{needle}:\n{}", out.stderr);
    }
}

/// A config of `nodes` (JSON objects) around the first-run guests.
fn firstrun(test: &str, nodes: &str) -> PathBuf {
    let cfg = scratch(test).join("seedfall.json");
    let g = guests();
    let body = format!(r#"{{ "duration": "3s", "nodes": [ {} ] }}"#, nodes.replace("$GO", &format!(r#"{{ "dir": "{}", "net": true }}"#, g.join("go-firstrun").display())).replace("$RUST", &format!(r#"{{ "dir": "{}" }}"#, g.join("rust-firstrun").display())));
    std::fs::write(&cfg, body).unwrap();
    cfg
}

/// The first failure of seed 1, as `run -json` reports it.
fn first_failure(cfg: &Path) -> Value {
    let out = seedfall(&["run", "-c", cfg.to_str().unwrap(), "-seeds", "1", "-json"]);
    assert_eq!(out.code, 1, "{}\n{}", out.stdout, out.stderr);
    json(&out)["failures"][0]["nodes"][0].clone()
}

#[test]
fn first_run_failures_say_what_happened_and_what_to_do() {
    // A Go program whose goroutines all wait on nothing.
    let f = first_failure(&firstrun("teach-deadlock", r#"{ "name": "app", "go": $GO, "args": ["-mode", "deadlock"] }"#));
    assert!(f["hint"].as_str().unwrap().contains("every goroutine of the node was waiting"), "{f}");
    // A client that dials once, before its server listens.
    let f = first_failure(&firstrun("teach-early", r#"{ "name": "server", "go": $GO, "args": ["-mode", "serve-late"], "workload": false }, { "name": "client", "go": $GO, "args": ["-mode", "dial", "-to", "server:7000"] }"#));
    assert!(f["message"].as_str().unwrap().to_lowercase().contains("connection refused"), "{f}");
    assert!(f["hint"].as_str().unwrap().contains("every node starts at t=0"), "{f}");
    // A host name that is no node.
    let f = first_failure(&firstrun("teach-host", r#"{ "name": "client", "go": $GO, "args": ["-mode", "lookup", "-to", "sever:7000"] }"#));
    assert!(f["hint"].as_str().unwrap().contains("a name that is not a node instance"), "{f}");
    // A usage error: what the program said about its arguments.
    let f = first_failure(&firstrun("teach-usage", r#"{ "name": "app", "go": $GO, "args": ["-mdoe", "dial"] }"#));
    assert!(f["hint"].as_str().unwrap().contains("it said on stderr: flag provided but not defined: -mdoe"), "{f}");
    // A file the program expects the machine to have.
    let f = first_failure(&firstrun("teach-file", r#"{ "name": "app", "go": $GO, "args": ["-mode", "config-file"] }"#));
    let hint = f["hint"].as_str().unwrap();
    assert!(hint.contains(r#"add "disk": {"dirs": ["/srv/app"]}"#) && hint.contains(r#""files": {"/srv/app/NAME""#), "{f}");
    // UDP, which is not simulated.
    let f = first_failure(&firstrun("teach-udp", r#"{ "name": "app", "go": $GO, "args": ["-mode", "udp", "-to", "app:9000"] }"#));
    assert!(f["hint"].as_str().unwrap().contains("datagram (UDP) sockets are not simulated"), "{f}");
    // A Rust program that needs a thread.
    let f = first_failure(&firstrun("teach-thread", r#"{ "name": "app", "cargo": $RUST, "args": ["thread"] }"#));
    assert!(f["hint"].as_str().unwrap().contains(r#"wasm32-wasip1 has no threads, so std::thread::spawn fails: build for wasm32-wasip1-threads with "cargo": {"target": "wasm32-wasip1-threads"}"#), "{f}");
    // A Rust error that names no path (`Os { code: 44, kind: NotFound }`).
    let f = first_failure(&firstrun("teach-rust-enoent", r#"{ "name": "app", "cargo": $RUST, "args": ["acks"] }"#));
    assert!(f["hint"].as_str().unwrap_or("").contains(r#"add "disk": {"dirs": ["/var/lib/acks"]}"#), "{f}");
}

#[test]
fn a_workload_that_never_finishes_is_noted() {
    let cfg = firstrun("teach-wait", r#"{ "name": "app", "go": $GO, "args": ["-mode", "wait"] }"#);
    let out = seedfall(&["run", "-c", cfg.to_str().unwrap(), "-seeds", "1-3"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stderr.contains("seedfall: note: every run lasted its whole duration (3.00s): the workload node app never all exited 0"), "{}", out.stderr);
    // A server marked as one is not a surprise.
    let cfg = firstrun("teach-wait-server", r#"{ "name": "app", "go": $GO, "args": ["-mode", "wait"], "workload": false }"#);
    let out = seedfall(&["run", "-c", cfg.to_str().unwrap(), "-seeds", "1-3"]);
    assert!(!out.stderr.contains("note: every run lasted"), "{}", out.stderr);
}

/// Lines of the page's output that depend on the machine or the clock.
const MACHINE_SPECIFIC: [&str; 8] = ["go version", "machine:", " real)", "runs/s", "built and compiled in", "building ", "compiling ", "cache:"];

#[test]
fn getting_started_as_written() {
    let page = std::fs::read_to_string(repo().join("docs/getting-started.md")).unwrap();
    let dir = copy_of("getting-started", "examples/kvlog");
    let mut blocks = Vec::new();
    let mut lines = page.lines();
    while let Some(l) = lines.next() {
        if l.starts_with("```") {
            blocks.push(lines.by_ref().take_while(|l| !l.starts_with("```")).map(str::to_string).collect::<Vec<_>>());
        }
    }
    let mut commands = 0;
    for block in &blocks {
        let Some(cmd) = block.first().and_then(|l| l.strip_prefix("$ seedfall ")) else { continue };
        commands += 1;
        let args: Vec<&str> = cmd.split_whitespace().collect();
        // As a newcomer runs it: no shared test cache, the first run builds.
        let out = Command::new(env!("CARGO_BIN_EXE_seedfall")).args(&args).current_dir(&dir).env_remove("SEEDFALL_CACHE_DIR").env("GOTOOLCHAIN", "local").stdin(std::process::Stdio::null()).output().unwrap();
        let code = out.status.code().unwrap_or(-1);
        let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert!(code <= 1, "$ seedfall {cmd}: exit {code}\n{text}");
        for want in &block[1..] {
            if MACHINE_SPECIFIC.iter().any(|m| want.contains(m)) {
                continue;
            }
            assert!(text.lines().any(|l| l == want), "$ seedfall {cmd}: the page shows\n{want}\nbut it printed:\n{text}");
        }
    }
    assert!(commands >= 5, "the page's commands were found ({commands})");
    // The config the page shows is the one init writes.
    let shown = blocks.iter().find(|b| b.iter().any(|l| l.contains("Written by seedfall init"))).expect("the page shows the config");
    assert_eq!(shown.join("\n").trim(), std::fs::read_to_string(dir.join("seedfall.json")).unwrap().trim());
}

#[test]
fn init_then_run_works_on_the_examples_and_test_guests() {
    // Programs as they are: their configs removed. Each run happens (exit 0
    // or 1: a program may fail without its arguments), never a config or
    // build error.
    for rel in ["examples/ledger", "examples/explore", "examples/explore-climb", "examples/walkv", "tests/guests/go-basic", "tests/guests/rust-basic", "tests/guests/go-disk"] {
        let dir = copy_of(&format!("init-{}", rel.replace('/', "-")), rel);
        let (cfg, run) = init_then_run(&dir, &[], "1-3");
        assert!(!cfg["nodes"].as_array().unwrap().is_empty(), "{rel}: {cfg}");
        assert_eq!(run["runs"], 3, "{rel}: {run}");
    }
}
