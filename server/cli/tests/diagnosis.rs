//! What seedfall tells a user about a failure or a mistake, on real guests
//! through the real binary: the property table's false counts and FAIL
//! marks, where a Rust panic in std is located, `RUST_BACKTRACE` output kept
//! out of messages, demangled names in explore, inspect's kinds, config
//! errors (unknown fault nodes, torn writes without crashes, names), and the
//! Rust SDK's test oracle across crashes.
mod common;
use common::*;
use serde_json::Value;

fn p(path: &std::path::Path) -> &str {
    path.to_str().unwrap()
}

/// The table row of the property `message` in a sweep's text output.
fn row<'a>(stdout: &'a str, message: &str) -> &'a str {
    let quoted = format!("\"{message}\"");
    stdout
        .lines()
        .skip_while(|l| *l != "properties:")
        .find(|l| l.contains(&quoted))
        .unwrap_or_else(|| panic!("no row for {quoted} in:\n{stdout}"))
}

fn tally<'a>(out: &'a Value, message: &str) -> &'a Value {
    out["properties"].as_array().unwrap().iter().find(|p| p["message"] == message).unwrap_or_else(|| panic!("no property {message}"))
}

#[test]
fn the_property_table_counts_false_runs_and_marks_the_failing_rows() {
    let text = seedfall(&["run", "-c", "tests/guests/props.json", "-seeds", "1-20"]);
    assert_eq!(text.code, 1, "{}{}", text.stdout, text.stderr);
    let out = json(&seedfall(&["run", "-c", "tests/guests/props.json", "-seeds", "1-20", "-json"]));
    // The false count the table shows is the JSON's, and the row fails.
    let below9 = tally(&out, "x stays below 9");
    let (trues, falses) = (below9["runs_true"].as_u64().unwrap(), below9["runs_false"].as_u64().unwrap());
    assert!(falses > 0, "{below9}");
    let r = row(&text.stdout, "x stays below 9");
    assert!(r.starts_with("  FAIL always "), "{r}");
    assert!(r.contains(&format!("true {trues:>5}  false {falses:>5}")), "{r}");
    // A passing always: no mark, and a zero false count.
    let r = row(&text.stdout, "x is not negative");
    assert!(r.starts_with("       always ") && r.contains("false     0"), "{r}");
    // Findings are failing rows too: never reached, never true.
    assert!(row(&text.stdout, "only in dead-code mode").starts_with("  FAIL always "));
    assert!(row(&text.stdout, "x exceeds 100").starts_with("  FAIL sometimes "));
    assert!(!row(&text.stdout, "x is 3 sometimes").starts_with("  FAIL"), "true in some seeds: passes");
    // reachable and unreachable: the hit count is the whole story.
    for m in ["ready", "the impossible branch ran"] {
        let r = row(&text.stdout, m);
        assert!(!r.contains("true") && !r.contains("false") && !r.starts_with("  FAIL"), "{r}");
    }
}

#[test]
fn the_property_table_marks_a_rust_guests_failing_always_with_its_false_count() {
    let cfg = config("table-rust", r#"{ "name": "rtable", "duration": "2s", "nodes": [ { "name": "r", "cargo": { "dir": "$GUESTS/rust-props" } } ] }"#);
    let text = seedfall(&["run", "-c", p(&cfg), "-seeds", "1-40"]);
    let out = json(&seedfall(&["run", "-c", p(&cfg), "-seeds", "1-40", "-json"]));
    let falses = tally(&out, "rust x stays below 9")["runs_false"].as_u64().unwrap();
    assert_eq!(falses, out["failed"].as_u64().unwrap(), "every failing run is a false evaluation");
    let r = row(&text.stdout, "rust x stays below 9");
    assert!(r.starts_with("  FAIL always ") && r.contains(&format!("false {falses:>5}")), "{r}");
}

#[test]
fn a_rust_panic_inside_std_is_located_at_the_users_function() {
    let cfg = one_node_config("std-panic", &rust_node("b", "std-panic"), "");
    let out = json(&seedfall(&["run", "-c", p(&cfg), "-seeds", "1", "-json"]));
    let n = &out["failures"][0]["nodes"][0];
    assert_eq!(n["kind"], "panic", "{n}");
    assert_eq!(n["message"], "unsupported", "{n}");
    let location = n["location"].as_str().unwrap();
    assert!(location.starts_with("rust_basic::pid (std: library/std/src/"), "{location}");
    assert!(!location.contains("/rustc/"), "the toolchain's commit path is cut: {location}");
    let text = seedfall(&["run", "-c", p(&cfg), "-seeds", "1"]);
    assert!(text.stdout.contains(&format!("    at {location}")), "{}", text.stdout);
    // A panic in the user's own code keeps its file and line.
    let cfg = one_node_config("own-panic", &rust_node("bank", "panic-sometimes"), "");
    let out = json(&seedfall(&["run", "-c", p(&cfg), "-seeds", "1-30", "-json"]));
    let line = line_of(&guests().join("rust-basic/src/main.rs"), "panic!(\"balance went negative");
    let own = out["failures"][0]["nodes"][0]["location"].as_str().unwrap().to_string();
    assert!(own.ends_with(&format!("rust-basic/src/main.rs:{line}")), "{own}");
}

#[test]
fn rust_backtrace_output_stays_out_of_the_failure_message() {
    let node = r#"{ "name": "bank", "cargo": { "dir": "$GUESTS/rust-basic" }, "args": ["panic-sometimes"], "env": { "RUST_BACKTRACE": "1" } }"#;
    let cfg = one_node_config("rust-backtrace", node, "");
    let text = seedfall(&["run", "-c", p(&cfg), "-seeds", "1-30"]);
    assert_eq!(text.code, 1, "{}{}", text.stdout, text.stderr);
    assert!(!text.stdout.contains("stack backtrace"), "{}", text.stdout);
    let out = json(&seedfall(&["run", "-c", p(&cfg), "-seeds", "1-30", "-json"]));
    let failures = out["failures"].as_array().unwrap();
    assert!(!failures.is_empty());
    for f in failures {
        let message = f["nodes"][0]["message"].as_str().unwrap();
        assert!(message.starts_with("balance went negative: ") && !message.contains('\n'), "{message:?}");
    }
    // The guest's stderr still has it: only the message leaves it out.
    let folder = failures.iter().find_map(|f| f["folder"].as_str()).expect("a failure folder is kept");
    let stderr = repo().join(folder).join("bank.stderr");
    assert!(std::fs::read_to_string(stderr).unwrap().contains("stack backtrace:"));
}

#[test]
fn explore_prints_rust_function_names_demangled() {
    let cfg = one_node_config("explore-demangle", &rust_node("bank", "rare"), "");
    let out = seedfall(&["explore", "-c", p(&cfg), "-seeds", "1-2", "-batch", "2", "-rounds", "20"]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    let news: Vec<&str> = out.stdout.lines().filter(|l| l.trim_start().starts_with("new functions: ")).collect();
    assert!(news.iter().any(|l| l.contains("bank: rust_basic::rare_path")), "{}", out.stdout);
    for l in &news {
        assert!(!l.contains(": _ZN") && !l.contains(": _R"), "a mangled name: {l}");
    }
}

#[test]
fn inspect_help_lists_every_kind_and_net_keeps_only_network_events() {
    let help = seedfall(&["inspect", "--help"]);
    for k in ["output", "property", "fault", "crash", "restart", "start", "exit", "fsync", "disk", "failure", "setup", "branch", "net", "other"] {
        assert!(help.stdout.contains(&format!(" {k},")) || help.stdout.contains(&format!(" {k}.")), "{k} missing:\n{}", help.stdout);
    }
    let out = seedfall(&["inspect", "-c", "tests/guests/net.json", "-seed", "1", "-kind", "net", "-node", "rustclient"]);
    let lines: Vec<&str> = out.stdout.lines().filter(|l| l.contains("  rustclient  ")).collect();
    assert!(!lines.is_empty(), "{}{}", out.stdout, out.stderr);
    assert!(lines.iter().all(|l| l.contains("  net  ")), "{lines:?}");
    let bad = seedfall(&["inspect", "-c", "tests/guests/net.json", "-seed", "1", "-kind", "nets"]);
    assert_eq!(bad.code, 2);
    assert!(bad.stderr.contains("net, other"), "{}", bad.stderr);
}

/// The config error seedfall prints for a config whose body is `body`.
fn config_error(test: &str, body: &str) -> String {
    let cfg = config(test, body);
    let out = seedfall(&["run", "-c", p(&cfg), "-seeds", "1"]);
    assert_eq!(out.code, 2, "{}{}", out.stdout, out.stderr);
    let relative = cfg.strip_prefix(repo()).unwrap().display().to_string();
    let line = out.stderr.lines().find(|l| l.starts_with("seedfall: config error: ")).unwrap_or_else(|| panic!("{}", out.stderr));
    line.replace(p(&cfg), "<file>").replace(&relative, "<file>")
}

#[test]
fn an_unknown_fault_node_lists_the_config_nodes() {
    let nodes = format!("{}, {}", rust_node("a", "work"), rust_node("b", "work"));
    let body = format!(r#"{{ "duration": "1s", "nodes": [ {nodes} ], "faults": {{ "partition": {{ "rate": 1, "duration": "1ms", "nodes": ["x"] }} }} }}"#);
    assert_eq!(config_error("unknown-fault-node", &body), "seedfall: config error: <file>: $.faults.partition.nodes[0]: no node \"x\" (nodes: a, b)");
    let body = body.replace(r#"["x"]"#, r#"["bb"]"#);
    assert_eq!(
        config_error("close-fault-node", &body),
        "seedfall: config error: <file>: $.faults.partition.nodes[0]: no node \"bb\" (did you mean \"b\"? nodes: a, b)"
    );
}

#[test]
fn torn_writes_without_crashes_is_a_config_error() {
    let body = format!(r#"{{ "duration": "1s", "nodes": [ {} ], "faults": {{ "torn_writes": true, "pause": {{ "rate": 1, "duration": "1ms" }} }} }}"#, rust_node("a", "work"));
    assert_eq!(
        config_error("torn-no-crash", &body),
        "seedfall: config error: <file>: $.faults.torn_writes: torn writes only change what a crash keeps, and no crash is configured: add \"crash\": {\"rate\": ...} to faults, or remove torn_writes"
    );
}

#[test]
fn an_explicit_name_with_a_dot_is_refused_with_the_name_a_file_would_get() {
    let body = format!(r#"{{ "name": "kv.v2", "duration": "1s", "nodes": [ {} ] }}"#, rust_node("a", "work"));
    assert_eq!(
        config_error("dotted-name", &body),
        "seedfall: config error: <file>: $.name: expected letters, digits, '-' or '_' (at most 64 bytes), found \"kv.v2\" (try \"kv-v2\"; names from the file name are rewritten like this, a name you chose is not)"
    );
    // The same name derived from a folder is rewritten to that form.
    let dir = scratch("dotted-folder").join("kv.v2");
    std::fs::create_dir_all(&dir).unwrap();
    let cfg = dir.join("seedfall.json");
    let node = rust_node("a", "work").replace("$GUESTS", &guests().display().to_string());
    std::fs::write(&cfg, format!(r#"{{ "duration": "1s", "nodes": [ {node} ] }}"#)).unwrap();
    let out = seedfall(&["run", "-c", p(&cfg), "-seeds", "1"]);
    assert!(out.stdout.starts_with("seedfall run: kv-v2 (1 node instance)"), "{}{}", out.stdout, out.stderr);
}

#[test]
fn the_rust_sdk_oracle_outlives_crashes() {
    let extra = r#""faults": { "crash": { "rate": 50, "restart_after": "1ms-5ms" } },"#;
    let node = r#"{ "name": "r", "cargo": { "dir": "$GUESTS/rust-props" }, "args": ["oracle"] }"#;
    let cfg = one_node_config("rust-oracle", node, extra);
    let replay = seedfall(&["replay", "-c", p(&cfg), "-seed", "1"]);
    assert_eq!(replay.code, 0, "{}{}", replay.stdout, replay.stderr);
    let starts: Vec<&str> = replay.stdout.lines().filter_map(|l| l.split("| ").nth(1)).filter(|l| l.starts_with("start ")).collect();
    assert!(starts.len() >= 3, "crashed and restarted: {starts:?}");
    for (i, l) in starts.iter().enumerate() {
        assert_eq!(*l, format!("start {}, blob of 1000 bytes recalled", i + 1), "the count and the 1000-byte value survive each crash");
    }
    let out = json(&seedfall(&["run", "-c", p(&cfg), "-seeds", "1-10", "-json"]));
    assert_eq!(out["failed"], 0, "{}", out["failures"]);
    for m in ["rust the oracle keeps a value whole across crashes", "rust the oracle recalls nothing for an unknown key"] {
        let t = tally(&out, m);
        assert_eq!((t["runs_hit"].as_u64(), t["runs_false"].as_u64()), (Some(10), Some(0)), "{m}: {t}");
    }
}
