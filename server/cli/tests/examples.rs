//! The shipped examples behave as their READMEs say, and `mutate` judges
//! kvlog's checks.
mod common;
use common::*;

#[test]
fn kvlog_finds_the_lost_acknowledged_write_and_the_fix_passes() {
    // The shipped config, in a folder of its own: other tests sweep kvlog at
    // the same time, and what is kept on disk is per config folder.
    let shipped = std::fs::read_to_string(repo().join("examples/kvlog/seedfall.json")).unwrap();
    let body = shipped.replace(r#""dir": ".""#, &format!(r#""dir": "{}""#, repo().join("examples/kvlog").display())).replacen('{', r#"{ "name": "kvlog","#, 1);
    let cfg = config("kvlog-findings", &body);
    let out = seedfall(&["run", "-c", cfg.to_str().unwrap(), "-seeds", "1-200", "-json"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    let out = json(&out);
    let failures = out["failures"].as_array().unwrap();
    assert!(failures.len() > 3);
    for f in failures {
        assert_eq!(f["nodes"][0]["message"], "acknowledged writes survive crashes", "{f}");
    }
    // One bug, one finding: its three shortest runs keep folders.
    let findings = out["failure_findings"].as_array().unwrap();
    assert_eq!(findings.len(), 1, "{findings:?}");
    assert_eq!(findings[0]["count"].as_u64().unwrap() as usize, failures.len());
    let shortest: Vec<u64> = findings[0]["shortest"].as_array().unwrap().iter().map(|r| r["seed"].as_u64().unwrap()).collect();
    assert_eq!(shortest.len(), 3);
    for f in failures.iter().filter(|f| f["folder"].is_string()) {
        let folder = repo().join(f["folder"].as_str().unwrap());
        assert!(folder.to_str().unwrap().contains("kvlog-seed-"));
        assert!(shortest.contains(&f["seed"].as_u64().unwrap()), "a kept folder is one of the shortest: {f}");
    }
    for seed in &shortest {
        assert!(failures.iter().any(|f| f["seed"] == *seed && f["folder"].is_string()), "seed {seed} keeps its folder");
    }
    let index: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(cfg.parent().unwrap().join(".seedfall/failures-index.json")).unwrap()).unwrap();
    assert_eq!(index["findings"][0]["seeds"].as_array().unwrap().len(), failures.len(), "the index lists every failing seed");
    let fixed = seedfall(&["run", "-c", "examples/kvlog/seedfall.fixed.json", "-seeds", "1-500", "-json"]);
    assert_eq!(fixed.code, 0, "{}", fixed.stdout);
    let fixed = json(&fixed);
    let check = fixed["properties"].as_array().unwrap().iter().find(|p| p["message"] == "acknowledged writes survive crashes").unwrap();
    assert!(check["runs_hit"].as_u64().unwrap() > 100, "the check ran after crashes in many seeds: {check}");
}

#[test]
fn httpkv_finds_the_write_a_partition_lost_and_the_fix_passes() {
    let out = seedfall(&["run", "-c", "examples/httpkv/seedfall.json", "-seeds", "1-200", "-json", "-keep-failures", "1000"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    let out = json(&out);
    let failures = out["failures"].as_array().unwrap();
    assert!(failures.len() >= 5, "{} failures", failures.len());
    for f in failures {
        assert_eq!(f["nodes"][0]["message"], "an acknowledged write is on the backup", "{f}");
        // Only a partition loses the write: every failing schedule has one.
        let faults = repo().join(f["folder"].as_str().unwrap()).join("faults.json");
        let schedule: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&faults).unwrap()).unwrap();
        assert!(schedule["faults"].as_array().unwrap().iter().any(|x| x["kind"] == "partition" && x["node"] == "backup"), "{schedule}");
    }
    let first = &failures[0];
    let faults = repo().join(first["folder"].as_str().unwrap()).join("faults.json");
    let replay = json(&seedfall(&["replay", "-c", "examples/httpkv/seedfall.json", "-faults", faults.to_str().unwrap(), "-json"]));
    assert_eq!(replay["trace_hash"], first["trace_hash"]);
    let fixed = seedfall(&["run", "-c", "examples/httpkv/seedfall.fixed.json", "-seeds", "1-200", "-json"]);
    assert_eq!(fixed.code, 0, "{}", fixed.stdout);
    let fixed = json(&fixed);
    let check = fixed["properties"].as_array().unwrap().iter().find(|p| p["message"] == "an acknowledged write is on the backup").unwrap();
    assert_eq!(check["runs_hit"], 200, "{check}");
}

#[test]
fn kvlog_failure_replays_from_its_folder() {
    let out = json(&seedfall(&["run", "-c", "examples/kvlog/seedfall.json", "-seeds", "1-40", "-json"]));
    let f = out["failures"].as_array().unwrap().iter().find(|f| f["folder"].is_string()).expect("a kept folder");
    let faults = repo().join(f["folder"].as_str().unwrap()).join("faults.json");
    let schedule: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&faults).unwrap()).unwrap();
    assert!(schedule["faults"].as_array().unwrap().iter().any(|x| x["kind"] == "crash"), "{schedule}");
    let replay = json(&seedfall(&["replay", "-c", "examples/kvlog/seedfall.json", "-faults", faults.to_str().unwrap(), "-json"]));
    assert_eq!(replay["trace_hash"], f["trace_hash"]);
}

#[test]
fn mutate_kills_the_fsync_mutation_on_kvlog() {
    let out = json(&seedfall(&["mutate", "-c", "examples/kvlog/seedfall.json", "-seeds", "1-60", "-json"]));
    let m = out["mutations"].as_array().unwrap();
    let fsync = m.iter().find(|x| x["mutation"] == "FsyncNoop").unwrap();
    assert_eq!(fsync["killed"], true, "{fsync}");
    let osync = m.iter().find(|x| x["mutation"] == "OSyncIgnored").unwrap();
    assert_eq!(osync["killed"], false, "kvlog does not use O_SYNC");
    let fixed = json(&seedfall(&["mutate", "-c", "examples/kvlog/seedfall.fixed.json", "-seeds", "1-60", "-json"]));
    assert!(fixed["baseline_failed_seeds"].as_array().unwrap().is_empty());
    // Under ext4 (the default) names are durable at the next fsync: the
    // fixed build relies on fsync committing the journal, and a directory
    // fsync is nothing special, so that mutation is not offered.
    let muts = fixed["mutations"].as_array().unwrap();
    let journal = muts.iter().find(|x| x["mutation"] == "JournalOnlyOnTimer").unwrap().clone();
    assert_eq!(journal["killed"], true, "the fixed build relies on fsync committing names: {journal}");
    assert!(muts.iter().all(|x| x["mutation"] != "DirFsyncIgnored"), "{muts:?}");
    // Under strict POSIX it relies on its directory fsync.
    let dir = scratch("kvlog-posix");
    let cfg = dir.join("seedfall.json");
    std::fs::write(&cfg, format!(
        r#"{{ "name": "kvlogposix", "duration": "3s", "disk": {{ "model": "posix" }}, "nodes": [ {{ "name": "kv", "go": {{ "dir": "{}" }}, "args": ["-fixed"] }} ],
             "faults": {{ "crash": {{ "rate": 2, "restart_after": "5ms-50ms", "during_disk_op": 0.5 }}, "torn_writes": true }} }}"#,
        repo().join("examples/kvlog").display()
    )).unwrap();
    let posix = json(&seedfall(&["mutate", "-c", cfg.to_str().unwrap(), "-seeds", "1-60", "-json"]));
    let dirsync = posix["mutations"].as_array().unwrap().iter().find(|x| x["mutation"] == "DirFsyncIgnored").unwrap().clone();
    assert_eq!(dirsync["killed"], true, "the fixed build relies on its directory fsync under posix: {dirsync}");
}

#[test]
fn swarm_mode_switches_fault_families_per_seed() {
    let cfg = config(
        "swarm",
        r#"{ "name": "swarm", "duration": "1s", "nodes": [ { "name": "d", "go": { "dir": "$GUESTS/go-disk" }, "args": ["-mode", "osync"] } ],
             "faults": { "swarm": true, "crash": { "rate": 5, "restart_after": "1ms" }, "pause": { "rate": 5, "duration": "1ms" },
                         "fsync_eio": { "probability": 0.01 }, "torn_writes": true,
                         "corrupt_read": { "probability": 0.05 }, "lost_write": { "probability": 0.05 } } }"#,
    );
    let mut sets = std::collections::BTreeSet::new();
    for seed in 1..=10 {
        let r = json(&seedfall(&["replay", "-c", cfg.to_str().unwrap(), "-seed", &seed.to_string(), "-json"]));
        let fam = r["events"].as_array().unwrap().iter().find(|e| e["event"] == "families").expect("swarm records its families").clone();
        let names: Vec<String> = fam["families"].as_array().unwrap().iter().map(|v| v.as_str().unwrap().to_string()).collect();
        for e in r["events"].as_array().unwrap().iter().filter(|e| e["event"] == "fault") {
            let kind = e["fault"]["kind"].as_str().unwrap();
            assert!(names.iter().any(|n| n == kind), "seed {seed}: {kind} applied but not switched on ({names:?})");
        }
        sets.insert(names.join(","));
    }
    assert!(sets.len() >= 3, "swarm mode varies families across seeds: {sets:?}");
}

#[test]
fn ledger_example_finds_its_interleaving_bug() {
    let out = json(&seedfall(&["run", "-c", "examples/ledger/seedfall.json", "-seeds", "1-200", "-json"]));
    let n = out["failures"].as_array().unwrap().len();
    assert!((5..60).contains(&n), "{n} of 200 seeds fail");
    assert!(out["failures"][0]["nodes"][0]["message"].as_str().unwrap().contains("overdrawn"));
}

/// walkv on a 12 KiB disk, retrying a refused put: a short write leaves a
/// chunk's first bytes in the segment, the library rolls back its offsets
/// but not the bytes, and at the next start its reader panics on them; the
/// service's cure (reopen after a failed write) passes.
#[test]
fn walkv_on_a_full_disk_cannot_open_its_log_after_a_short_write_and_reopening_cures_it() {
    let out = json(&seedfall(&["run", "-c", "examples/walkv/seedfall.full.json", "-seeds", "1-20", "-json"]));
    let failures = out["failures"].as_array().unwrap();
    assert!(failures.len() >= 5, "{out}");
    let seed = failures[0]["seed"].to_string();
    let message = failures[0]["nodes"][0]["message"].as_str().unwrap();
    assert!(message.contains("slice bounds out of range") || message.contains("acknowledged writes are readable"), "{message}");
    let r = json(&seedfall(&["replay", "-c", "examples/walkv/seedfall.full.json", "-seed", &seed, "-json"]));
    let short = r["events"].as_array().unwrap().iter().find(|e| e["event"] == "no_space" && e["done"].as_u64().is_some_and(|d| d > 0)).expect("a short write");
    assert!(short["path"].as_str().unwrap().starts_with("/data/wal/"), "{short}");
    // Go's errors read as on Linux (go_overlay::errors), not as wasip1's table has them.
    let refused = r["events"].as_array().unwrap().iter().filter_map(|e| e["text"].as_str()).find(|t| t.contains("refused: write /data/wal/")).expect("the service says why it refused");
    assert!(refused.ends_with(": no space left on device"), "{refused}");
    let fixed = json(&seedfall(&["run", "-c", "examples/walkv/seedfall.full.fixed.json", "-seeds", "1-50", "-json"]));
    assert_eq!(fixed["failed"], 0, "{fixed}");
}

/// natscluster's fixed release (v2.10.23) with Linux's error texts: a
/// server whose write meets ENOSPC disables JetStream and deletes its meta
/// state; after two of them and a kill of each server, the cluster forgets
/// its stream (the committed schedule, two fill-ups and three kills; one
/// server says "out of File resources", the other "out of resources").
#[test]
fn natscluster_forgets_its_stream_after_full_disks_disable_jetstream_and_three_kills() {
    let out = seedfall(&["replay", "-c", "examples/natscluster/seedfall.fixed.full-kill.json", "-faults", "examples/natscluster/schedules/full-kill.json", "-json"]);
    let r = json(&out);
    assert_eq!(r["verdict"], "fail", "{}", out.stderr);
    let node = &r["failure"]["nodes"][0];
    assert_eq!(node["message"], "the cluster never forgets the acknowledged stream", "{node}");
    assert!(node["details"].as_str().unwrap().contains("err_code=10059"), "{node}");
    let printed: Vec<&str> = r["events"].as_array().unwrap().iter().filter_map(|e| e["text"].as_str()).collect();
    assert_eq!(printed.iter().filter(|t| t.contains(" resources, will be DISABLED")).count(), 2, "two servers took Linux's out-of-space path");
    // One server out of space, a kill of each, and the meta group's WAL
    // reset: the stream reads back empty (the README's last paragraphs).
    let out = seedfall(&["replay", "-c", "examples/natscluster/seedfall.fixed.full-kill.json", "-faults", "examples/natscluster/schedules/full-kill-values.json", "-json"]);
    let r = json(&out);
    let node = r["failure"]["nodes"][0].clone();
    assert_eq!(node["message"], "every acknowledged value can be read back", "{node}");
    assert!(node["details"].as_str().unwrap().contains("\"lost\":133"), "{node}");
    let printed: Vec<&str> = r["events"].as_array().unwrap().iter().filter_map(|e| e["text"].as_str()).collect();
    assert!(printed.iter().any(|t| t.contains("Resetting WAL state")), "the meta group reset its WAL");
}

/// walkv runs the unmodified github.com/rosedblabs/wal: on ext4 (and, by the
/// re-check of the posix finding, on xfs and btrfs) every acknowledged write
/// survives, as on the real kernel; under strict POSIX a segment whose folder
/// was never fsynced is lost, and one crash shows it; the service's fix
/// passes under both.
#[test]
fn walkv_keeps_its_writes_on_real_file_systems_and_loses_them_under_strict_posix() {
    let out = seedfall(&["run", "-c", "examples/walkv/seedfall.json", "-seeds", "1-60", "-json"]);
    let out = json(&out);
    assert_eq!(out["failed"], 0, "no real file system's model loses a write: {out}");
    let props = out["properties"].as_array().unwrap();
    let check = props.iter().find(|p| p["message"] == "acknowledged writes are readable after a restart").unwrap();
    assert_eq!(check["runs_hit"], 60, "{check}");

    let posix = json(&seedfall(&["run", "-c", "examples/walkv/seedfall.posix.json", "-seeds", "1-20", "-json"]));
    let failures = posix["failures"].as_array().unwrap();
    assert!(failures.len() >= 10, "most seeds lose a segment never made durable: {}", failures.len());
    for f in failures {
        assert_eq!(f["model"]["found_under"], "posix", "{f}");
        assert_eq!(f["model"]["label"], "only under strict POSIX (portable durability): not on ext4, xfs or btrfs", "{f}");
    }
    let shrink = seedfall(&["shrink", "-c", "examples/walkv/seedfall.posix.json", "-seed", &failures[0]["seed"].to_string()]);
    assert_eq!(shrink.code, 0, "{}", shrink.stderr);
    assert!(shrink.stdout.contains("faults before the failure (1):"), "one crash shows it: {}", shrink.stdout);

    for (cfg, seeds) in [("examples/walkv/seedfall.fixed.json", "1-200"), ("examples/walkv/seedfall.fixed.posix.json", "1-100")] {
        let fixed = json(&seedfall(&["run", "-c", cfg, "-seeds", seeds, "-json"]));
        assert_eq!(fixed["failed"], 0, "{cfg}: {fixed}");
        let props = fixed["properties"].as_array().unwrap();
        let check = props.iter().find(|p| p["message"] == "acknowledged writes are readable after a restart").unwrap();
        assert!(check["runs_hit"].as_u64().unwrap() >= 100, "{cfg}: {check}");
        // A torn chunk is a state only strict POSIX leaves: the cut runs there.
        let cut = props.iter().find(|p| p["message"] == "a torn chunk was cut before writing again").unwrap();
        assert_eq!(cut["runs_hit"].as_u64().unwrap() > 0, cfg.ends_with("fixed.posix.json"), "{cfg}: {cut}");
    }
}
