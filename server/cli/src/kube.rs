//! `seedfall kube`: Kubernetes manifests for a sharded sweep, exploration
//! or mutation run: an Indexed Job whose completion index picks the shard
//! (`JOB_COMPLETION_INDEX`), writing results to a shared volume, and a
//! merge Job to apply once it completes. docs/scale-out.md.
//!
//! Kubernetes has no dependency between Jobs, so the merge is a second
//! manifest applied after `kubectl wait` says the shards completed.
use crate::launch::Wrapped;
use clap::Args;
use serde_json::{json, Value};
use std::path::PathBuf;

#[derive(Args)]
pub struct KubeArgs {
    /// How many shards (completions of the Indexed Job).
    #[arg(long, value_name = "N")]
    pub shards: u32,
    /// Pods at once (default: every shard).
    #[arg(long, value_name = "K")]
    pub parallelism: Option<u32>,
    /// The container image: it must hold seedfall and the project's files
    /// (or find them on the volume).
    #[arg(long)]
    pub image: String,
    /// The PersistentVolumeClaim every pod mounts (ReadWriteMany): the
    /// project's folder and the results live on it.
    #[arg(long, value_name = "NAME")]
    pub claim: String,
    /// Where the volume is mounted, and the pods' working folder.
    #[arg(long, default_value = "/work")]
    pub mount: String,
    /// The results folder, relative to the mount.
    #[arg(long, default_value = "seedfall-results")]
    pub results: String,
    /// The Jobs' name prefix (letters, digits and dashes).
    #[arg(long, default_value = "seedfall")]
    pub name: String,
    /// CPUs per pod (requests and limits); each shard runs that many workers.
    #[arg(long, default_value_t = 1)]
    pub cpus: u32,
    /// Memory per pod (requests and limits), in Kubernetes' form.
    #[arg(long, default_value = "2Gi")]
    pub memory: String,
    /// The seedfall executable in the image.
    #[arg(long, default_value = "seedfall")]
    pub seedfall: String,
    /// `yaml` or `json` (kubectl applies either).
    #[arg(long, default_value = "yaml", value_parser = ["yaml", "json"])]
    pub format: String,
    /// Write shards.yaml and merge.yaml (or .json) into this folder
    /// (default: print both).
    #[arg(short = 'o', long = "out", value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// The command every shard runs: `-- run -c seedfall.json -seeds 1-10000`.
    #[arg(last = true, required = true, value_name = "COMMAND")]
    pub command: Vec<String>,
}

pub fn main(a: KubeArgs) -> i32 {
    match run(&a) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("seedfall kube: {e}");
            2
        }
    }
}

/// A DNS-1123 label: what a Job's name must be (with room for suffixes).
fn check_name(name: &str) -> Result<(), String> {
    let ok = !name.is_empty() && name.len() <= 52 && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-') && !name.starts_with('-') && !name.ends_with('-');
    if ok { Ok(()) } else { Err(format!("-name: expected lowercase letters, digits and dashes (at most 52, not starting or ending with a dash), found \"{name}\"")) }
}

fn run(a: &KubeArgs) -> Result<(), String> {
    let wrapped = Wrapped::parse(&a.command)?;
    check_name(&a.name)?;
    if a.shards == 0 || a.shards > seedfall_search::shard::SHARDS_MAX {
        return Err(format!("-shards: expected 1 to {}, found {}", seedfall_search::shard::SHARDS_MAX, a.shards));
    }
    if a.cpus == 0 {
        return Err("-cpus: expected at least 1".into());
    }
    if !a.mount.starts_with('/') {
        return Err(format!("-mount: expected an absolute path, found \"{}\"", a.mount));
    }
    let (shards, merge) = manifests(a, &wrapped);
    let ext = a.format.as_str();
    let (shards, merge) = match ext {
        "json" => (format!("{}\n", serde_json::to_string_pretty(&shards).unwrap()), format!("{}\n", serde_json::to_string_pretty(&merge).unwrap())),
        _ => (yaml(&shards), yaml(&merge)),
    };
    match &a.out {
        None if ext == "json" => print!("{shards}{merge}"),
        None => print!("{shards}---\n{merge}"),
        Some(dir) => {
            for (name, text) in [(format!("shards.{ext}"), &shards), (format!("merge.{ext}"), &merge)] {
                let p = dir.join(name);
                seedfall_search::cache::write_atomic(&p, text.as_bytes()).map_err(|e| format!("cannot write {}: {e}", p.display()))?;
            }
            let d = crate::output::relative(dir);
            println!("wrote {d}/shards.{ext} and {d}/merge.{ext}; run them with:");
            println!("  kubectl apply -f {d}/shards.{ext}");
            println!("  kubectl wait --for=condition=complete --timeout=24h job/{}-shards", a.name);
            println!("  kubectl apply -f {d}/merge.{ext}");
            println!("  kubectl wait --for=condition=complete --timeout=1h job/{}-merge && kubectl logs job/{}-merge", a.name, a.name);
        }
    }
    Ok(())
}

/// The two Jobs, as JSON values (`yaml` writes them).
pub fn manifests(a: &KubeArgs, wrapped: &Wrapped) -> (Value, Value) {
    let results = format!("{}/{}", a.mount.trim_end_matches('/'), a.results);
    let cpus = a.cpus.to_string();
    let resources = json!({ "requests": { "cpu": cpus, "memory": a.memory }, "limits": { "cpu": cpus, "memory": a.memory } });
    let volume = json!([{ "name": "work", "persistentVolumeClaim": { "claimName": a.claim } }]);
    let mounts = json!([{ "name": "work", "mountPath": a.mount }]);
    let labels = json!({ "app.kubernetes.io/name": "seedfall", "app.kubernetes.io/instance": a.name });
    let script = format!("set -u\ni=$((JOB_COMPLETION_INDEX + 1))\nmkdir -p {r}\n{}", wrapped.shard_script(&a.seedfall, a.shards, &results, &cpus), r = crate::launch::quote(&results));
    let container = |name: &str, script: String| {
        json!({ "name": name, "image": a.image, "workingDir": a.mount, "command": ["sh", "-c", script], "resources": resources, "volumeMounts": mounts })
    };
    let job = |name: String, spec: Value| json!({ "apiVersion": "batch/v1", "kind": "Job", "metadata": { "name": name, "labels": labels }, "spec": spec });
    let shards = job(
        format!("{}-shards", a.name),
        json!({
            "completionMode": "Indexed",
            "completions": a.shards,
            "parallelism": a.parallelism.unwrap_or(a.shards).min(a.shards),
            // A shard that could not finish is retried by itself; one that
            // found failures succeeded (`launch`).
            "backoffLimitPerIndex": 2,
            "maxFailedIndexes": a.shards,
            "ttlSecondsAfterFinished": 86400,
            "template": { "metadata": { "labels": labels }, "spec": { "restartPolicy": "Never", "containers": [container("shard", script)], "volumes": volume } }
        }),
    );
    let merge = job(
        format!("{}-merge", a.name),
        json!({
            "completions": 1,
            "backoffLimit": 0,
            "ttlSecondsAfterFinished": 86400,
            "template": { "metadata": { "labels": labels }, "spec": { "restartPolicy": "Never", "containers": [container("merge", wrapped.merge_script(&a.seedfall, &results))], "volumes": volume } }
        }),
    );
    (shards, merge)
}

/// A JSON value as block-style YAML. A key that is a plain name stays
/// bare; a string of several lines is a literal block (`|`), so scripts read
/// as scripts; any other string is written JSON-quoted, which YAML reads as
/// the same string (no `yes`, `1.0` or `: ` surprises).
pub fn yaml(v: &Value) -> String {
    let mut out = String::new();
    emit(v, 0, &mut out);
    out
}

fn key(k: &str) -> String {
    let plain = k.chars().next().is_some_and(|c| c.is_ascii_alphabetic()) && k.chars().all(|c| c.is_ascii_alphanumeric() || "_./-".contains(c));
    // YAML 1.1 reads these bare words as booleans or null.
    let special = ["y", "n", "yes", "no", "on", "off", "true", "false", "null"].contains(&k.to_ascii_lowercase().as_str());
    if plain && !special { k.to_string() } else { serde_json::to_string(k).unwrap() }
}

/// A scalar after `key: ` or `- ` at `indent` (a literal block's lines go
/// two deeper).
fn scalar(v: &Value, indent: usize) -> String {
    match v {
        Value::String(s) if block_safe(s) => {
            let (body, chomp) = match s.strip_suffix('\n') {
                Some(b) => (b, "|"),
                None => (s.as_str(), "|-"),
            };
            let pad = " ".repeat(indent + 2);
            let lines: Vec<String> = body.split('\n').map(|l| if l.is_empty() { String::new() } else { format!("{pad}{l}") }).collect();
            format!("{chomp}\n{}", lines.join("\n"))
        }
        Value::String(s) => serde_json::to_string(s).unwrap(),
        other => other.to_string(),
    }
}

/// Whether a string reads back the same from a literal block: several
/// lines, none starting with a space (the block's indentation would
/// swallow it) or ending in one, no tabs or other control characters, and
/// at most one newline at the end.
fn block_safe(s: &str) -> bool {
    let body = s.strip_suffix('\n').unwrap_or(s);
    body.contains('\n') && !body.ends_with('\n') && !body.starts_with('\n')
        && body.split('\n').all(|l| !l.starts_with(' ') && !l.ends_with(' '))
        && !s.chars().any(|c| c.is_control() && c != '\n')
}

fn emit(v: &Value, indent: usize, out: &mut String) {
    let pad = " ".repeat(indent);
    match v {
        Value::Object(map) => {
            for (k, val) in map {
                let key = key(k);
                match val {
                    Value::Object(m) if !m.is_empty() => {
                        out.push_str(&format!("{pad}{key}:\n"));
                        emit(val, indent + 2, out);
                    }
                    Value::Array(a) if !a.is_empty() => {
                        out.push_str(&format!("{pad}{key}:\n"));
                        emit(val, indent, out);
                    }
                    Value::Object(_) => out.push_str(&format!("{pad}{key}: {{}}\n")),
                    Value::Array(_) => out.push_str(&format!("{pad}{key}: []\n")),
                    _ => out.push_str(&format!("{pad}{key}: {}\n", scalar(val, indent))),
                }
            }
        }
        Value::Array(items) => {
            for item in items {
                match item {
                    Value::Object(m) if !m.is_empty() => {
                        let mut inner = String::new();
                        emit(item, indent + 2, &mut inner);
                        // The first key goes on the dash's line.
                        out.push_str(&format!("{pad}- {}", &inner[indent + 2..]));
                    }
                    Value::Array(a) if !a.is_empty() => {
                        out.push_str(&format!("{pad}-\n"));
                        emit(item, indent + 2, out);
                    }
                    _ => out.push_str(&format!("{pad}- {}\n", scalar(item, indent))),
                }
            }
        }
        _ => out.push_str(&format!("{pad}{}\n", scalar(v, indent))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yaml_reads_back_as_the_same_value() {
        let v = json!({ "a": { "b": [1, "two", { "c": "x: y", "d": [] }], "e": {} }, "s": "line\nnext\n", "on": " lead\nx" });
        let y = yaml(&v);
        assert_eq!(y, "a:\n  b:\n  - 1\n  - \"two\"\n  - c: \"x: y\"\n    d: []\n  e: {}\n\"on\": \" lead\\nx\"\ns: |\n  line\n  next\n");
    }
}
