//! `nodes`: the programs of the cluster, their instances and how to build them.
use super::fields;
use super::parse::{kind, valid_name, Parsed, Parser};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::path::PathBuf;

pub const REPLICAS_MAX: u64 = 64;

#[derive(Clone, Debug)]
pub struct NodeSpec {
    pub name: String,
    /// `None` when the config gave no `replicas`: one instance named like the node.
    pub replicas: Option<u32>,
    pub args: Vec<String>,
    pub env: BTreeMap<String, String>,
    pub source: WasmSource,
    /// A workload node's clean exit counts towards ending the run early.
    pub workload: bool,
    /// Its disk's own model and seeded contents.
    pub disk: super::NodeDisk,
}

#[derive(Clone, Debug, PartialEq)]
pub enum WasmSource {
    /// A prebuilt module, absolute path.
    Path(PathBuf),
    /// `go build` of `package` run in `dir` with GOOS=wasip1 GOARCH=wasm.
    /// With `net`, built with the overlay that puts the standard library's
    /// `net` package on the simulated network (see docs/network.md).
    /// With `storage`, with the overlay that gives Unix storage libraries
    /// mmap, flock and what else wasip1 lacks (docs/sdk-go.md#storage).
    /// With `linux_errors` (the default), `syscall`'s error texts are
    /// Linux's rather than wasip1's (docs/sdk-go.md#error-texts). With
    /// `precomputed_tables` (the default), tables Go computes at every start
    /// come as static data computed at build time
    /// (docs/sdk-go.md#faster-by-default).
    Go { dir: PathBuf, package: String, tags: Vec<String>, net: bool, storage: bool, linux_errors: bool, precomputed_tables: bool },
    /// `cargo build --target <target>` run in `dir`.
    Cargo { dir: PathBuf, package: Option<String>, bin: Option<String>, profile: String, target: RustTarget },
}

/// The Rust target a `cargo` recipe builds for (`cargo.target`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RustTarget {
    /// `wasm32-wasip1`: no threads (`std::thread::spawn` fails).
    #[default]
    Wasip1,
    /// `wasm32-wasip1-threads`: a shared memory and `wasi::thread-spawn`;
    /// each guest thread runs as one more fiber of its node.
    Wasip1Threads,
}

impl RustTarget {
    /// Every target, the default first: the order errors and the schema list them in.
    pub const ALL: [RustTarget; 2] = [RustTarget::Wasip1, RustTarget::Wasip1Threads];

    /// The target's name, as rustc and the config spell it.
    pub fn name(self) -> &'static str {
        match self {
            RustTarget::Wasip1 => "wasm32-wasip1",
            RustTarget::Wasip1Threads => "wasm32-wasip1-threads",
        }
    }

    pub fn parse(text: &str) -> Option<RustTarget> {
        RustTarget::ALL.into_iter().find(|t| t.name() == text)
    }
}

impl NodeSpec {
    /// The model of this node's disks: its own, else the config's.
    pub fn model(&self, config_disk: &super::DiskConfig) -> crate::disk::FsModel {
        self.disk.model.unwrap_or(config_disk.model)
    }

    /// What this node's disk may hold: its own capacity, or the config's.
    pub fn capacity(&self, config_disk: &super::DiskConfig) -> Option<u64> {
        self.disk.capacity.or(config_disk.capacity)
    }

    pub fn instance_count(&self) -> u32 {
        self.replicas.unwrap_or(1)
    }
    pub fn instance_name(&self, replica_idx: u32) -> String {
        assert!(replica_idx < self.instance_count());
        match self.replicas {
            None => self.name.clone(),
            Some(_) => format!("{}#{}", self.name, replica_idx + 1),
        }
    }
}

/// GOGC for nodes a `go` recipe builds, unless their `env` sets it: Go's
/// 100 collects garbage four times as often, and on wasm a collection is
/// all guest instructions (badger 3.8x, the etcd WAL 1.45x, raftkv 1.16x
/// faster at 400, the rest unchanged; docs/performance.md). `"GOGC": "100"`
/// in a node's `env` restores Go's default.
pub const GO_GOGC_DEFAULT: &str = "400";

/// Variables seedfall sets in every guest's environment.
pub const RESERVED_ENV: &[&str] = &["SEEDFALL_NODE", "ANTITHESIS_SDK_LOCAL_OUTPUT"];

impl Parser {
    pub(super) fn node(&self, v: &Value, path: &str) -> Parsed<NodeSpec> {
        let map = self.object(v, path, &fields::NODE.names())?;
        let name = match map.get("name") {
            Some(n) => self.string(n, &format!("{path}.name"))?,
            None => return Err(self.err(path, "missing field \"name\"")),
        };
        if !valid_name(&name) {
            return Err(self.err(&format!("{path}.name"), format!("expected letters, digits, '-' or '_', found \"{}\"", super::parse::shown_text(&name))));
        }
        let replicas = match map.get("replicas") {
            Some(r) => Some(self.uint(r, &format!("{path}.replicas"), 1, REPLICAS_MAX)? as u32),
            None => None,
        };
        let args = match map.get("args") {
            Some(a) => self.strings(a, &format!("{path}.args"))?,
            None => Vec::new(),
        };
        let mut env = BTreeMap::new();
        if let Some(e) = map.get("env") {
            let epath = format!("{path}.env");
            let m = e.as_object().ok_or_else(|| self.err(&epath, format!("expected an object of strings, found {}", kind(e))))?;
            for (k, val) in m {
                if k.is_empty() || k.contains('=') {
                    return Err(self.err(&format!("{epath}.{k}"), "an environment variable name cannot be empty or contain '='"));
                }
                if RESERVED_ENV.contains(&k.as_str()) {
                    return Err(self.err(&format!("{epath}.{k}"), format!("{k} is set by seedfall itself (to the node instance's name, or for the Antithesis SDK); choose another name")));
                }
                env.insert(k.clone(), self.string(val, &format!("{epath}.{k}"))?);
            }
        }
        let workload = match map.get("workload") {
            Some(b) => self.bool(b, &format!("{path}.workload"))?,
            None => true,
        };
        let source = self.source(map, path)?;
        let disk = match map.get("disk") {
            Some(d) => self.node_disk(d, &format!("{path}.disk"))?,
            None => super::NodeDisk::default(),
        };
        Ok(NodeSpec { name, replicas, args, env, source, workload, disk })
    }

    pub(super) fn source(&self, map: &Map<String, Value>, path: &str) -> Parsed<WasmSource> {
        let given: Vec<&str> = ["wasm", "go", "cargo"].into_iter().filter(|k| map.contains_key(*k)).collect();
        if given.len() != 1 {
            let found = if given.is_empty() { "none".to_string() } else { given.join(" and ") };
            return Err(self.err(path, format!("expected exactly one of \"wasm\" (a .wasm path), \"go\" or \"cargo\" (a build recipe), found {found}")));
        }
        match given[0] {
            "wasm" => Ok(WasmSource::Path(self.rel_path(&map["wasm"], &format!("{path}.wasm"))?)),
            "go" => {
                let gpath = format!("{path}.go");
                let m = self.object(&map["go"], &gpath, &fields::GO.names())?;
                let dir = match m.get("dir") {
                    Some(d) => self.rel_path(d, &format!("{gpath}.dir"))?,
                    None => return Err(self.err(&gpath, "missing field \"dir\" (the folder `go build` runs in)")),
                };
                let package = match m.get("package") {
                    Some(p) => self.string(p, &format!("{gpath}.package"))?,
                    None => ".".into(),
                };
                let tags = match m.get("tags") {
                    Some(t) => self.strings(t, &format!("{gpath}.tags"))?,
                    None => Vec::new(),
                };
                let net = match m.get("net") {
                    Some(b) => self.bool(b, &format!("{gpath}.net"))?,
                    None => false,
                };
                let storage = match m.get("storage") {
                    Some(b) => self.bool(b, &format!("{gpath}.storage"))?,
                    None => false,
                };
                let linux_errors = match m.get("linux_errors") {
                    Some(b) => self.bool(b, &format!("{gpath}.linux_errors"))?,
                    None => true,
                };
                let precomputed_tables = match m.get("precomputed_tables") {
                    Some(b) => self.bool(b, &format!("{gpath}.precomputed_tables"))?,
                    None => true,
                };
                Ok(WasmSource::Go { dir, package, tags, net, storage, linux_errors, precomputed_tables })
            }
            _ => {
                let cpath = format!("{path}.cargo");
                let m = self.object(&map["cargo"], &cpath, &fields::CARGO.names())?;
                let dir = match m.get("dir") {
                    Some(d) => self.rel_path(d, &format!("{cpath}.dir"))?,
                    None => return Err(self.err(&cpath, "missing field \"dir\" (the folder `cargo build` runs in)")),
                };
                let opt = |k: &str| -> Parsed<Option<String>> {
                    m.get(k).map(|v| self.string(v, &format!("{cpath}.{k}"))).transpose()
                };
                let profile = opt("profile")?.unwrap_or_else(|| "release".into());
                let target = match opt("target")? {
                    None => RustTarget::default(),
                    Some(t) => RustTarget::parse(&t).ok_or_else(|| {
                        self.err(
                            &format!("{cpath}.target"),
                            format!("expected \"wasm32-wasip1\" (the default) or \"wasm32-wasip1-threads\" (a program that starts threads), found \"{}\"", super::parse::shown_text(&t)),
                        )
                    })?,
                };
                Ok(WasmSource::Cargo { dir, package: opt("package")?, bin: opt("bin")?, profile, target })
            }
        }
    }
}
