//! The instrumentation cache (`modules::instrumented`): a module rewritten
//! for coverage once is loaded from the cache after, runs the same, is
//! shared by nodes that run the same module, and an entry that cannot be
//! read is said and rewritten.
use seedfall_search::{cache::Cache, project, recipe};
use seedfall_sim::{run, Config, RunOptions, Schedule};
use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Loads the config, returning what the load logged.
fn load(config: &Path) -> (project::Project, Vec<String>) {
    let mut lines = Vec::new();
    let p = project::load(config, &mut |l| lines.push(l.to_string())).unwrap_or_else(|e| panic!("{e:?}"));
    (p, lines)
}

fn hashes(p: &project::Project) -> Vec<u64> {
    (1..=4).map(|s| run(&p.program, &Schedule::seed(s), &RunOptions::default()).trace_hash).collect()
}

fn entries(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir.join(".seedfall/cache/instrumented")).map(|r| r.map(|e| e.unwrap().path()).collect()).unwrap_or_default();
    v.sort();
    v
}

#[test]
fn a_rewritten_module_is_cached_shared_and_rewritten_when_unreadable() {
    // This binary's only test: the cache is the config's own, not the
    // shared test cache, so what it holds is this test's doing.
    std::env::remove_var("SEEDFALL_CACHE_DIR");
    let shared = Cache { dir: repo().join("target/seedfall-test-cache") };
    let source = Config::load(&repo().join("tests/guests/basics.json")).unwrap();
    let rust = source.nodes.iter().find(|n| matches!(n.source, seedfall_sim::config::WasmSource::Cargo { .. })).expect("basics.json has a Rust node");
    let built = recipe::wasm_for(rust, &shared, &mut |_| {}).unwrap();

    let dir = std::env::temp_dir().join(format!("seedfall-instrumented-cache-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(&built.wasm, dir.join("guest.wasm")).unwrap();
    let config = dir.join("seedfall.json");
    std::fs::write(&config, r#"{ "name": "cached", "duration": "2s", "nodes": [
        { "name": "a", "wasm": "guest.wasm", "args": ["work"] },
        { "name": "b", "wasm": "guest.wasm", "args": ["work"] } ] }"#).unwrap();

    let (first, log) = load(&config);
    assert_eq!(log.iter().filter(|l| l.starts_with("compiling")).count(), 1, "one module, compiled once for both nodes: {log:?}");
    let cached = entries(&dir);
    assert_eq!(cached.len(), 1, "one rewrite for the two nodes: {cached:?}");
    let want = hashes(&first);

    let (second, log) = load(&config);
    assert!(log.is_empty(), "the second load rewrites and compiles nothing: {log:?}");
    assert_eq!(entries(&dir), cached);
    assert_eq!(hashes(&second), want, "a cached rewrite runs the same");
    assert_eq!(second.digest, first.digest);
    assert_eq!(second.program.function_names, first.program.function_names);

    std::fs::write(&cached[0], b"{ not json").unwrap();
    let (third, log) = load(&config);
    assert!(log.iter().any(|l| l.contains("ignoring an unreadable instrumentation cache entry") && l.contains(&cached[0].display().to_string())), "{log:?}");
    let text = std::fs::read(&cached[0]).unwrap();
    assert!(serde_json::from_slice::<serde_json::Value>(&text).is_ok(), "the entry is written again");
    assert_eq!(hashes(&third), want);
    std::fs::remove_dir_all(&dir).unwrap();
}
