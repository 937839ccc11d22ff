//! Scale-out: shards of run, explore and mutate, `seedfall merge`, JUnit
//! output and the Kubernetes launcher's commands, on real guests. The Slurm
//! launcher has its own test on a real cluster (slurm.rs).
mod common;
use common::*;
use serde_json::Value;
use std::io::Write;
use std::path::{Path, PathBuf};

/// A kvlog config (crashes lose acknowledged writes) in its own folder.
fn kvlog(test: &str) -> PathBuf {
    let dir = scratch(test);
    let cfg = dir.join("seedfall.json");
    let text = std::fs::read_to_string(repo().join("examples/kvlog/seedfall.json")).unwrap();
    let text = text.replace("\"dir\": \".\"", &format!("\"dir\": \"{}\"", repo().join("examples/kvlog").display()));
    std::fs::write(&cfg, text).unwrap();
    cfg
}

fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// Wall-clock figures: the only fields a merge may give differently.
const WALL_FIELDS: [&str; 7] = ["seeds_per_second", "virtual_seconds_per_wall_second", "wall_ns", "real_ns", "run_real_ns", "instantiate_ns", "host_ns"];

fn without_wall(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(m.iter().filter(|(k, _)| !WALL_FIELDS.contains(&k.as_str())).map(|(k, v)| (k.clone(), without_wall(v))).collect()),
        Value::Array(a) => Value::Array(a.iter().map(without_wall).collect()),
        other => other.clone(),
    }
}

/// Text without wall-clock figures: `(N scheduler steps, 3ms real)` and the
/// summary line's `in 1.2s: 800 runs/s, ...`.
fn text_without_wall(text: &str) -> String {
    without_real_times(text)
        .lines()
        .map(|l| match (l.find(" in "), l.find(" runs/s")) {
            (Some(a), Some(_)) if l.contains(" runs, ") => l[..a].to_string(),
            _ => l.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn folders(cfg: &Path) -> Vec<String> {
    let dir = cfg.parent().unwrap().join(".seedfall/failures");
    let mut v: Vec<String> = std::fs::read_dir(&dir).map(|r| r.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect()).unwrap_or_default();
    v.sort();
    v
}

fn state(cfg: &Path) -> PathBuf {
    cfg.parent().unwrap().join(".seedfall")
}

/// Runs `count` shards of `args` (each -j 1) and returns their result files.
fn shards(cfg: &Path, command: &str, args: &[&str], count: u32) -> Vec<PathBuf> {
    let dir = cfg.parent().unwrap().join("results");
    std::fs::create_dir_all(&dir).unwrap();
    (1..=count)
        .map(|i| {
            let file = dir.join(format!("{command}-{i}.json"));
            let shard = format!("{i}/{count}");
            let mut a = vec![command, "-c", p(cfg), "-j", "1", "-shard", &shard];
            a.extend_from_slice(args);
            let json = format!("-json={}", p(&file));
            a.push(&json);
            let out = seedfall(&a);
            assert!(out.code <= 1, "shard {shard}: {}\n{}", out.stdout, out.stderr);
            // -json FILE prints the text too.
            assert!(out.stdout.contains("shard"), "{}", out.stdout);
            file
        })
        .collect()
}

fn merge(files: &[PathBuf], extra: &[&str]) -> Out {
    let mut a = vec!["merge"];
    a.extend_from_slice(extra);
    a.extend(files.iter().map(|f| p(f)));
    seedfall(&a)
}

#[test]
fn a_merged_sweep_is_the_unsharded_sweep() {
    let cfg = kvlog("shards-sweep");
    let whole_report = cfg.parent().unwrap().join("whole.md");
    let whole_text = seedfall(&["run", "-c", p(&cfg), "-seeds", "1-300", "-j", "3", "-hashes", "-report", p(&whole_report)]);
    assert_eq!(whole_text.code, 1, "kvlog loses writes: {}", whole_text.stderr);
    let whole = json(&seedfall(&["run", "-c", p(&cfg), "-seeds", "1-300", "-j", "3", "-hashes", "-json"]));
    let whole_folders = folders(&cfg);
    let whole_index = std::fs::read_to_string(state(&cfg).join("failures-index.json")).unwrap();
    let last_run = |cfg: &Path| {
        let dir = state(cfg).join("last-run");
        let only = std::fs::read_dir(&dir).unwrap().flatten().next().unwrap().path();
        std::fs::read_to_string(only).unwrap()
    };
    let whole_last = last_run(&cfg);
    assert!(whole_folders.len() >= 3, "{whole_folders:?}");
    std::fs::remove_dir_all(state(&cfg)).unwrap();

    let files = shards(&cfg, "run", &["-seeds", "1-300", "-hashes"], 3);
    // Shards leave the index and last-run to the merge.
    assert!(!state(&cfg).join("failures-index.json").exists());
    let shard_1: Value = serde_json::from_str(&std::fs::read_to_string(&files[0]).unwrap()).unwrap();
    assert_eq!(shard_1["shard"]["index"], 1);
    assert_eq!(shard_1["shard"]["count"], 3);
    assert_eq!(shard_1["runs"], 100, "round-robin shares of 300 seeds");
    assert!(shard_1["shard"]["identity"]["seedfall"].as_str().unwrap().starts_with(env!("CARGO_PKG_VERSION")));
    let text = merge(&files, &[]);
    assert_eq!(text.code, 1, "{}", text.stderr);
    assert_eq!(text_without_wall(&text.stdout), text_without_wall(&whole_text.stdout));
    assert_eq!(folders(&cfg), whole_folders, "the merge keeps the folders the unsharded run keeps");
    assert_eq!(std::fs::read_to_string(state(&cfg).join("failures-index.json")).unwrap(), whole_index);
    assert_eq!(last_run(&cfg), whole_last);
    let merged = merge(&files, &["-json"]);
    assert_eq!(merged.code, 1);
    let merged = json(&merged);
    assert_eq!(without_wall(&merged), without_wall(&whole));
    // The triage report too: each finding's shortest run replayed for it.
    let merged_report = cfg.parent().unwrap().join("merged.md");
    assert_eq!(merge(&files, &["-report", p(&merged_report)]).code, 1);
    let report = |f: &Path| std::fs::read_to_string(f).unwrap().lines().filter(|l| !l.contains(" runs/s")).map(str::to_string).collect::<Vec<_>>();
    assert_eq!(report(&merged_report), report(&whole_report));
    assert!(report(&merged_report).iter().any(|l| l.contains("acknowledged writes survive crashes")));
    // Given in any order, the same.
    let reversed: Vec<PathBuf> = files.iter().rev().cloned().collect();
    assert_eq!(without_wall(&json(&merge(&reversed, &["-json"]))), without_wall(&whole));
}

#[test]
fn merge_names_missing_duplicate_and_foreign_shards() {
    let cfg = kvlog("shards-refuse");
    let files = shards(&cfg, "run", &["-seeds", "1-40"], 2);
    let out = merge(&files[..1], &[]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("missing shard 2/2"), "{}", out.stderr);
    let out = merge(&[files[0].clone(), files[1].clone(), files[1].clone()], &[]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("given twice: shard 2/2"), "{}", out.stderr);
    // Another seed range is other work.
    let other = kvlog("shards-refuse-other");
    let theirs = shards(&other, "run", &["-seeds", "1-50"], 2);
    let out = merge(&[files[0].clone(), theirs[1].clone()], &[]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("differ in their options"), "{}", out.stderr);
    // Another program (here: the config's duration) is refused too.
    let changed = kvlog("shards-refuse-program");
    let text = std::fs::read_to_string(&changed).unwrap().replace("\"3s\"", "\"2s\"");
    std::fs::write(&changed, text).unwrap();
    let theirs = shards(&changed, "run", &["-seeds", "1-40"], 2);
    let out = merge(&[files[0].clone(), theirs[1].clone()], &[]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("differ in their program"), "{}", out.stderr);
    // A shard of another seedfall build, or of a shard format this one
    // does not read, is refused by name.
    // A shard's result edited by `f`, written as `name`.
    let edited = |from: &Path, name: &str, f: &dyn Fn(&mut Value)| {
        let mut doc: Value = serde_json::from_str(&std::fs::read_to_string(from).unwrap()).unwrap();
        f(&mut doc);
        let path = cfg.parent().unwrap().join(name);
        std::fs::write(&path, doc.to_string()).unwrap();
        path
    };
    let edit = |name: &str, f: &dyn Fn(&mut Value)| edited(&files[1], name, f);
    let other_build = edit("other-build.json", &|d| d["shard"]["identity"]["seedfall"] = Value::from("0.1.0 (0000000000000000)"));
    let out = merge(&[files[0].clone(), other_build], &[]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("differ in their seedfall build"), "{}", out.stderr);
    let future = edit("future.json", &|d| d["shard"]["version"] = Value::from(99));
    let out = merge(&[files[0].clone(), future], &[]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("$.shard.version: expected 1, found 99"), "{}", out.stderr);
    let future_doc = edit("future-doc.json", &|d| d["version"] = Value::from(99));
    let out = merge(&[files[0].clone(), future_doc], &[]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("future-doc.json: $.version: expected 2 for a run result, found 99"), "{}", out.stderr);
    // Counts are checked before anything is sized by them: four billion
    // shards once took 13 GB before exit; the docs' bound is 100,000.
    for (count, index) in [(4_000_000_000u64, 2u64), (100_001, 2), (0, 2), (2, 3)] {
        let name = format!("count-{count}-{index}.json");
        let bad = edit(&name, &|d| {
            d["shard"]["count"] = Value::from(count);
            d["shard"]["index"] = Value::from(index);
        });
        let out = merge(&[files[0].clone(), bad], &[]);
        assert_eq!(out.code, 2, "{name}: {}", out.stderr);
        let field = if count == 0 || count > 100_000 { "$.shard.count: expected 1 to 100000" } else { "$.shard.index: expected 1 to 2 (its count), found 3" };
        assert!(out.stderr.contains(&name) && out.stderr.contains(field), "{name}: {}", out.stderr);
    }
    // A shard that contradicts itself (a seed of another shard or outside
    // the range, a seed twice, counts that disagree) is refused by field:
    // once merged, its text and JSON said different failure counts.
    let shard_1: Value = serde_json::from_str(&std::fs::read_to_string(&files[0]).unwrap()).unwrap();
    assert!(shard_1["failed"].as_u64().unwrap() >= 2, "shard 1 has failures to edit: {}", shard_1["failed"]);
    let seed0 = shard_1["failures"][0]["seed"].as_u64().unwrap();
    let cases: [(&str, &dyn Fn(&mut Value), String); 5] = [
        (
            "foreign.json",
            &|d| d["failures"][0]["seed"] = Value::from(seed0 + 1),
            format!(
                "$.failures[0]: seed {} is not in shard 1/2 of seeds 1-40",
                seed0 + 1
            ),
        ),
        (
            "outside.json",
            &|d| d["failures"][0]["seed"] = Value::from(41),
            "$.failures[0]: seed 41 is not in shard 1/2 of seeds 1-40".into(),
        ),
        (
            "twice.json",
            &|d| d["failures"][1]["seed"] = d["failures"][0]["seed"].clone(),
            format!("$.failures[1]: seed {seed0} is listed twice"),
        ),
        (
            "counts.json",
            &|d| {
                d["totals"]["failures"] = Value::from(d["totals"]["failures"].as_u64().unwrap() + 1)
            },
            "they should agree".into(),
        ),
        (
            "runs.json",
            &|d| d["shard"]["runs"][0]["seed"] = Value::from(39 - seed0 % 2),
            "$.shard.runs[0]: seed".into(),
        ),
    ];
    for (name, f, says) in cases {
        let bad = edited(&files[0], name, f);
        let out = merge(&[bad, files[1].clone()], &[]);
        assert_eq!(out.code, 2, "{name}: {}", out.stderr);
        assert!(
            out.stderr.contains(name) && out.stderr.contains(&says),
            "{name}: {says:?} not in\n{}",
            out.stderr
        );
    }
    // A plain -json result is not a shard result.
    let plain = cfg.parent().unwrap().join("plain.json");
    let out = seedfall(&["run", "-c", p(&cfg), "-seeds", "1-5", &format!("-json={}", p(&plain))]);
    assert!(out.code <= 1);
    let out = merge(&[plain.clone()], &[]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("not a shard result") && out.stderr.contains("plain.json"), "{}", out.stderr);
    // A -json FILE that names a folder is an error, not a panic.
    let out = seedfall(&["run", "-c", p(&cfg), "-seeds", "1-2", "-json", ".."]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("-json ..: cannot write it: it is a folder"), "{}", out.stderr);
    // An output path that is a symlink writes where it points, and a device
    // stays a device: neither is replaced by a regular file.
    let dir = cfg.parent().unwrap();
    std::os::unix::fs::symlink("pointed.json", dir.join("link.json")).unwrap();
    let out = seedfall(&["run", "-c", p(&cfg), "-seeds", "1-2", "-json", p(&dir.join("link.json")), "-junit", "/dev/null"]);
    assert!(out.code <= 1, "{}", out.stderr);
    assert!(std::fs::symlink_metadata(dir.join("link.json")).unwrap().file_type().is_symlink());
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(dir.join("pointed.json")).unwrap()).unwrap();
    assert_eq!(doc["runs"], 2, "{doc}");
    assert!(!std::fs::metadata("/dev/null").unwrap().is_file(), "/dev/null is still a device");
    let out = seedfall(&["run", "-c", p(&cfg), "-seeds", "1-2", "-json", "/dev/stdout"]);
    assert!(out.code <= 1, "{}", out.stderr);
    assert!(out.stdout.contains("\"runs\": 2") || out.stdout.contains("\"runs\":2"), "the JSON reached stdout:\n{}", out.stdout);
    let out = seedfall(&["run", "-c", p(&cfg), "-seeds", "1-2", "-json", "/dev/full"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("-json /dev/full: cannot write it") && out.stderr.contains("No space left"), "{}", out.stderr);
    // A folder that cannot hold the temporary file is said as such.
    let out = seedfall(&["run", "-c", p(&cfg), "-seeds", "1-2", "-json", "/proc/seedfall.json"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("-json /proc/seedfall.json: cannot write it: /proc cannot hold the temporary file it is written to first"), "{}", out.stderr);
    let out = seedfall(&["run", "-c", p(&cfg), "-seeds", "1-5", "-shard", "3/2"]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("-shard: shard 3 of 2 does not exist"), "{}", out.stderr);
}

#[test]
fn merged_mutation_shards_are_the_unsharded_report() {
    let cfg = kvlog("shards-mutate");
    let whole = json(&seedfall(&["mutate", "-c", p(&cfg), "-seeds", "1-60", "-j", "2", "-json"]));
    let whole_text = seedfall(&["mutate", "-c", p(&cfg), "-seeds", "1-60", "-j", "2"]);
    let files = shards(&cfg, "mutate", &["-seeds", "1-60"], 2);
    let merged = json(&merge(&files, &["-json"]));
    assert_eq!(merged, whole);
    assert_eq!(merge(&files, &[]).stdout, whole_text.stdout);
    assert!(!whole["baseline_failed_seeds"].as_array().unwrap().is_empty());
}

fn vault(test: &str) -> PathBuf {
    let dir = scratch(test);
    let cfg = dir.join("seedfall.json");
    std::fs::write(&cfg, format!(r#"{{ "name": "vault", "duration": "2s", "nodes": [ {{ "name": "client", "replicas": 1, "go": {{ "dir": "{}" }} }} ] }}"#, repo().join("examples/explore").display())).unwrap();
    cfg
}

/// Two exploration shards side by side, trading entries in lockstep.
fn explore_pair(cfg: &Path, sync: &Path) -> Vec<(PathBuf, Value)> {
    let _ = std::fs::remove_dir_all(sync);
    let children: Vec<(PathBuf, std::process::Child)> = (1..=2)
        .map(|i| {
            let file = cfg.parent().unwrap().join(format!("explore-{i}.json"));
            let child = std::process::Command::new(env!("CARGO_BIN_EXE_seedfall"))
                .args(["explore", "-c", p(cfg), "-seeds", "1-8", "-batch", "4", "-rounds", "25", "-keep-going", "-j", "1", "-shard", &format!("{i}/2"), "-sync", p(sync), "-lockstep", "-sync-wait", "5m"])
                .arg(format!("-json={}", p(&file)))
                .current_dir(repo())
                .env("SEEDFALL_CACHE_DIR", repo().join("target/seedfall-test-cache"))
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .spawn()
                .unwrap();
            (file, child)
        })
        .collect();
    children
        .into_iter()
        .map(|(file, mut child)| {
            let status = child.wait().unwrap();
            assert!(status.code().is_some_and(|c| c <= 1), "{status}");
            let doc: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
            (file, doc)
        })
        .collect()
}

fn rounds_without_times(doc: &Value) -> Vec<Value> {
    doc["rounds"].as_array().unwrap().iter().map(|r| {
        let mut r = r.clone();
        r.as_object_mut().unwrap().remove("elapsed_ms");
        r
    }).collect()
}

#[test]
fn lockstep_exploration_shards_trade_entries_and_repeat_exactly() {
    let cfg = vault("shards-explore");
    let sync = cfg.parent().unwrap().join("sync");
    let first = explore_pair(&cfg, &sync);
    let imported: u64 = first.iter().flat_map(|(_, d)| d["rounds"].as_array().unwrap().iter().map(|r| r["imported"].as_u64().unwrap())).sum();
    assert!(imported > 0, "the shards ran each other's entries");
    // Each shard has its own exploration seed: their rounds differ.
    assert_ne!(rounds_without_times(&first[0].1), rounds_without_times(&first[1].1));
    // Lockstep: a second exploration from scratch is the same, round by round.
    std::fs::remove_dir_all(state(&cfg)).ok();
    let second = explore_pair(&cfg, &sync);
    for ((_, a), (_, b)) in first.iter().zip(&second) {
        assert_eq!(rounds_without_times(a), rounds_without_times(b));
        assert_eq!(a["runs"], b["runs"]);
    }
    let files: Vec<PathBuf> = second.iter().map(|(f, _)| f.clone()).collect();
    let merged = merge(&files, &["-json"]);
    let doc = json(&merged);
    let runs: u64 = second.iter().map(|(_, d)| d["runs"].as_u64().unwrap()).sum();
    assert_eq!(doc["runs"], runs);
    assert!(doc["corpus_entries_gathered"].as_u64().unwrap() > 0);
    let failures: usize = second.iter().map(|(_, d)| d["failures"].as_array().unwrap().len()).sum();
    assert_eq!(doc["failures"].as_array().unwrap().len(), failures);
    assert_eq!(merged.code, i32::from(failures > 0));
    let junit = cfg.parent().unwrap().join("explore.xml");
    merge(&files, &["-junit", p(&junit)]);
    let xml = std::fs::read_to_string(&junit).unwrap();
    let cases = roxmltree::Document::parse(&xml).unwrap().descendants().filter(|n| n.has_tag_name("testcase")).count();
    assert_eq!(cases, doc["failure_findings"].as_array().unwrap().len() + doc["properties"].as_array().unwrap().len(), "{xml}");
    // The gathered corpus is the config's own: a plain exploration starts from it.
    let next = json(&seedfall(&["explore", "-c", p(&cfg), "-seeds", "1-8", "-rounds", "1", "-json"]));
    assert!(next["rounds"][0]["runs"].as_u64().unwrap() > 8, "round 1 ran the gathered entries: {}", next["rounds"][0]);
}

#[test]
fn junit_has_a_case_per_finding_and_property() {
    let cfg = kvlog("shards-junit");
    let file = cfg.parent().unwrap().join("junit.xml");
    let out = seedfall(&["run", "-c", p(&cfg), "-seeds", "1-60", "-junit", p(&file), "-json"]);
    assert_eq!(out.code, 1);
    let doc = json(&out);
    let xml = std::fs::read_to_string(&file).unwrap();
    let tree = roxmltree::Document::parse(&xml).unwrap_or_else(|e| panic!("not XML ({e}):\n{xml}"));
    let suite = tree.descendants().find(|n| n.has_tag_name("testsuite")).unwrap();
    let cases: Vec<_> = suite.children().filter(|n| n.has_tag_name("testcase")).collect();
    let findings = doc["failure_findings"].as_array().unwrap().len();
    let properties = doc["properties"].as_array().unwrap().len();
    assert_eq!(cases.len(), findings + properties);
    assert_eq!(suite.attribute("tests"), Some(cases.len().to_string().as_str()));
    let failing: Vec<_> = cases.iter().filter(|c| c.children().any(|n| n.has_tag_name("failure"))).collect();
    assert_eq!(suite.attribute("failures"), Some(failing.len().to_string().as_str()));
    // The finding, and the property whose runs failed, are failures; the
    // reachable property that was reached passes.
    let finding = cases.iter().find(|c| c.attribute("classname").unwrap().ends_with(".findings")).unwrap();
    assert!(finding.attribute("name").unwrap().contains("acknowledged writes survive crashes"));
    let failure = finding.children().find(|n| n.has_tag_name("failure")).unwrap();
    assert!(failure.text().unwrap().contains("replay it: seedfall replay"), "{xml}");
    let reachable = cases.iter().find(|c| c.attribute("name").unwrap().starts_with("reachable")).unwrap();
    assert!(!reachable.children().any(|n| n.has_tag_name("failure")));
    assert!(reachable.attribute("file").unwrap().ends_with("main.go") && reachable.attribute("line").is_some(), "{xml}");
    // The merge writes the same cases.
    let files = shards(&cfg, "run", &["-seeds", "1-60"], 2);
    let merged_file = cfg.parent().unwrap().join("merged.xml");
    merge(&files, &["-junit", p(&merged_file)]);
    let names = |x: &str| {
        let t = roxmltree::Document::parse(x).unwrap();
        t.descendants().filter(|n| n.has_tag_name("testcase")).map(|n| (n.attribute("name").unwrap().to_string(), n.children().any(|c| c.has_tag_name("failure")))).collect::<Vec<_>>()
    };
    assert_eq!(names(&std::fs::read_to_string(&merged_file).unwrap()), names(&xml));
}

/// The tool at `path` (installed by scripts/dev test), or None with a
/// visible note; with SEEDFALL_REQUIRE_TOOLS=1 (scripts/dev test) a missing
/// tool fails the test instead.
pub fn tool(path: PathBuf, what: &str) -> Option<PathBuf> {
    if path.exists() {
        return Some(path);
    }
    let note = format!("{what} is not installed at {} (scripts/dev test installs it)", path.display());
    if std::env::var("SEEDFALL_REQUIRE_TOOLS").is_ok_and(|v| v == "1") {
        panic!("{note}");
    }
    eprintln!("SKIPPED: {note}");
    None
}

#[test]
fn kube_manifests_pass_the_job_schema_and_their_commands_merge_to_the_sweep() {
    let cfg = kvlog("shards-kube");
    let dir = cfg.parent().unwrap().to_path_buf();
    let out = dir.join("manifests");
    let kube = |format: &str| {
        let cmd = seedfall(&[
            "kube", "-shards", "4", "-parallelism", "2", "-image", "registry.example/seedfall:1", "-claim", "seedfall-work", "-mount", p(&dir), "-results", "results", "-cpus", "2", "-memory", "3Gi", "-seedfall", env!("CARGO_BIN_EXE_seedfall"), "-format", format, "-out", p(&out), "--",
            "run", "-c", p(&cfg), "-seeds", "1-200",
        ]);
        assert_eq!(cmd.code, 0, "{}", cmd.stderr);
        assert!(cmd.stdout.contains("kubectl wait --for=condition=complete --timeout=24h job/seedfall-shards"), "{}", cmd.stdout);
    };
    kube("yaml");
    kube("json");
    let read = |name: &str| -> Value { serde_json::from_str(&std::fs::read_to_string(out.join(name)).unwrap()).unwrap() };
    let (shards, merge_job) = (read("shards.json"), read("merge.json"));
    // The Kubernetes JSON schema of batch/v1 Job, strict: no unknown field,
    // every type right, every required field there.
    if let Some(validate) = tool(repo().join("target/tools/k8s/bin/kubernetes-validate"), "kubernetes-validate") {
        let check = |files: &[PathBuf]| {
            let v = std::process::Command::new(&validate).args(["--strict", "-k", "1.37.0"]).args(files).output().unwrap();
            (v.status.success(), format!("{}{}", String::from_utf8_lossy(&v.stdout), String::from_utf8_lossy(&v.stderr)))
        };
        let (ok, text) = check(&[out.join("shards.yaml"), out.join("merge.yaml")]);
        assert!(ok, "{text}");
        assert_eq!(text.matches("passed for resource job/").count(), 2, "{text}");
        // The validator does reject what the schema forbids.
        let bad = dir.join("bad.yaml");
        std::fs::write(&bad, std::fs::read_to_string(out.join("shards.yaml")).unwrap().replace("completionMode:", "completionsMode:")).unwrap();
        assert!(!check(&[bad]).0);
        // The YAML is the JSON: read back by PyYAML, the same documents.
        let python = repo().join("target/tools/k8s/bin/python");
        for (name, doc) in [("shards.yaml", &shards), ("merge.yaml", &merge_job)] {
            let back = std::process::Command::new(&python).args(["-c", "import sys, json, yaml; print(json.dumps(yaml.safe_load(open(sys.argv[1]))))"]).arg(out.join(name)).output().unwrap();
            assert!(back.status.success(), "{}", String::from_utf8_lossy(&back.stderr));
            assert_eq!(&serde_json::from_slice::<Value>(&back.stdout).unwrap(), doc, "{name}");
        }
    }
    let spec = &shards["spec"];
    assert_eq!((spec["completionMode"].as_str(), spec["completions"].as_u64(), spec["parallelism"].as_u64()), (Some("Indexed"), Some(4), Some(2)));
    assert_eq!(spec["template"]["spec"]["volumes"][0]["persistentVolumeClaim"]["claimName"], "seedfall-work");
    // Each pod's command is what Kubernetes runs with its completion index:
    // run them here, then the merge Job's, and get the sweep.
    let script = |job: &Value| -> String {
        let command = &job["spec"]["template"]["spec"]["containers"][0]["command"];
        assert_eq!((command[0].as_str(), command[1].as_str()), (Some("sh"), Some("-c")));
        command[2].as_str().unwrap().to_string()
    };
    let env = repo().join("target/seedfall-test-cache");
    for index in 0..4 {
        let s = std::process::Command::new("sh").arg("-c").arg(script(&shards)).current_dir(&dir).env("JOB_COMPLETION_INDEX", index.to_string()).env("SEEDFALL_CACHE_DIR", &env).output().unwrap();
        assert!(s.status.success(), "shard {index}: {}", String::from_utf8_lossy(&s.stderr));
    }
    let m = std::process::Command::new("sh").arg("-c").arg(script(&merge_job)).current_dir(&dir).env("SEEDFALL_CACHE_DIR", &env).output().unwrap();
    assert_eq!(m.status.code(), Some(1), "the merge gives the verdict: {}", String::from_utf8_lossy(&m.stderr));
    let merged: Value = serde_json::from_str(&std::fs::read_to_string(dir.join("results/merged.json")).unwrap()).unwrap();
    assert_eq!(std::fs::read_to_string(dir.join("results/merge.exit")).unwrap().trim(), "1");
    std::fs::remove_dir_all(state(&cfg)).unwrap();
    // The unsharded sweep, from the pods' working folder (paths in the
    // results are relative to it).
    let whole = std::process::Command::new(env!("CARGO_BIN_EXE_seedfall")).args(["run", "-c", p(&cfg), "-seeds", "1-200", "-j", "8", "-json"]).current_dir(&dir).env("SEEDFALL_CACHE_DIR", &env).output().unwrap();
    let whole: Value = serde_json::from_slice(&whole.stdout).unwrap();
    assert_eq!(without_wall(&merged), without_wall(&whole));
    assert!(dir.join("results/junit.xml").is_file());
}

#[test]
fn the_github_actions_example_is_a_valid_workflow() {
    let workflow = repo().join("docs/examples/github-actions-shards.yml");
    let text = std::fs::read_to_string(&workflow).unwrap();
    assert!(text.contains("-shard \"${{ matrix.shard }}/") && text.contains("seedfall merge"), "{text}");
    if let Some(actionlint) = tool(repo().join("target/tools/bin/actionlint"), "actionlint") {
        let v = std::process::Command::new(actionlint).args(["-oneline", "-shellcheck="]).arg(&workflow).output().unwrap();
        assert!(v.status.success(), "{}{}", String::from_utf8_lossy(&v.stdout), String::from_utf8_lossy(&v.stderr));
    }
}

/// A merge holds a shard about once: its fields are kept as text and
/// parsed one at a time into their types, its failing runs moved, not
/// copied, and its output written as it is made. (As a tree of JSON values
/// an 84 MB shard took 1.3 GB: 16 times its size.)
#[test]
fn a_large_shard_result_merges_in_a_small_multiple_of_its_size() {
    let cfg = kvlog("shards-large");
    let files = shards(&cfg, "run", &["-seeds", "1-40"], 2);
    let small = measured(&["merge", p(&files[0]), p(&files[1]), "-json=/dev/null"]);
    assert!(small.out.code <= 1, "{}", small.out.stderr);
    // Shard 1 of a large range, failing on many more of its seeds.
    let more = 60_000u64;
    let seeds = format!("1-{}", 4 * more + 100);
    let mut docs: Vec<Value> = files
        .iter()
        .map(|f| serde_json::from_str(&std::fs::read_to_string(f).unwrap()).unwrap())
        .collect();
    for d in &mut docs {
        d["seeds"] = Value::from(seeds.clone());
    }
    // Written as text, a piece at a time: a child's peak memory counts this
    // process's until it execs (Linux keeps the larger), so the test must
    // not hold the large shard itself.
    let d = &mut docs[0];
    let (failure, run) = (d["failures"][0].clone(), d["shard"]["runs"][0].clone());
    for (key, by) in [("failed", more), ("passed", more), ("runs", 2 * more)] {
        d[key] = Value::from(d[key].as_u64().unwrap() + by);
    }
    for (key, by) in [("failures", more), ("runs", 2 * more)] {
        d["totals"][key] = Value::from(d["totals"][key].as_u64().unwrap() + by);
    }
    let failed = docs[0]["failed"].as_u64().unwrap() + docs[1]["failed"].as_u64().unwrap();
    let dir = cfg.parent().unwrap();
    let large: Vec<PathBuf> = (1..=2)
        .map(|i| dir.join(format!("large-{i}.json")))
        .collect();
    std::fs::write(&large[1], docs[1].to_string()).unwrap();
    let (failures, runs) = (
        docs[0]["failures"].to_string(),
        docs[0]["shard"]["runs"].to_string(),
    );
    docs[0]["failures"] = Value::from("FAILURES");
    docs[0]["shard"]["runs"] = Value::from("RUNS");
    let text = docs[0].to_string();
    let mut out = std::io::BufWriter::new(std::fs::File::create(&large[0]).unwrap());
    let mut rest = text.as_str();
    for (mark, mine, model) in [
        ("\"FAILURES\"", &failures, &failure),
        ("\"RUNS\"", &runs, &run),
    ] {
        let (before, after) = rest.split_once(mark).expect("the mark is in the text");
        out.write_all(before.as_bytes()).unwrap();
        out.write_all(mine[..mine.len() - 1].as_bytes()).unwrap();
        for k in 0..more {
            let seed = 1001 + 2 * k; // odd: shard 1's
            let mut one = model.clone();
            one["seed"] = Value::from(seed);
            if one.get("folder").is_some() {
                one["folder"] = Value::Null;
            }
            write!(out, ",{one}").unwrap();
        }
        out.write_all(b"]").unwrap();
        rest = after;
    }
    out.write_all(rest.as_bytes()).unwrap();
    out.flush().unwrap();
    drop(out);
    let size_mb = std::fs::metadata(&large[0]).unwrap().len() >> 20;
    assert!(size_mb >= 40, "the shard is {size_mb} MiB");
    let merged = dir.join("merged.json");
    let m = measured(&[
        "merge",
        p(&large[0]),
        p(&large[1]),
        &format!("-json={}", p(&merged)),
    ]);
    assert_eq!(m.out.code, 1, "{}", m.out.stderr);
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&merged).unwrap()).unwrap();
    assert_eq!(
        (
            doc["failed"].as_u64(),
            doc["failures"].as_array().map(Vec::len)
        ),
        (Some(failed), Some(failed as usize))
    );
    let over = m.rss_mb.saturating_sub(small.rss_mb);
    println!(
        "a {size_mb} MiB shard merged in {} MiB, {over} MiB over a small one's {} MiB",
        m.rss_mb, small.rss_mb
    );
    assert!(
        over <= 4 * size_mb,
        "a {size_mb} MiB shard took {over} MiB more than a small one ({} against {} MiB)",
        m.rss_mb,
        small.rss_mb
    );
}
