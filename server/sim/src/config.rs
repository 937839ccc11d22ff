//! The run configuration, `seedfall.json` (version 1), parsed and validated.
//!
//! Parsing walks a `serde_json::Value` by hand instead of deriving
//! `Deserialize`, so every error can name the JSON path (`$.nodes[1].replicas`),
//! say what was expected, and suggest the closest known field for a typo.
//! A `Config` that exists is valid: later code never re-checks it.
use crate::vtime::{parse_duration, VTime};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

pub const CONFIG_VERSION: u64 = 1;
pub const REPLICAS_MAX: u64 = 64;
pub const NODES_MAX: usize = 64;

#[derive(Clone, Debug)]
pub struct Config {
    /// The config file, absolute; relative paths in it resolve against its folder.
    pub path: PathBuf,
    /// Names failure folders and corpora: `name` in the file, else derived from the file name.
    pub name: String,
    pub duration: VTime,
    pub nodes: Vec<NodeSpec>,
    pub limits: Limits,
    pub determinism: Determinism,
    pub disk: DiskConfig,
    pub faults: FaultConfig,
    pub net: NetConfig,
    /// Where pinned regressions live (default: `regressions/` next to the config).
    pub regressions: Option<PathBuf>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct DiskConfig {
    pub sector_bytes: u64,
    /// Mean virtual time of a read or write; each op draws from [mean/2, 3mean/2].
    pub io_latency_ns: u64,
    /// Mean virtual time of an fsync, during which the node waits.
    pub fsync_latency_ns: u64,
}

impl Default for DiskConfig {
    fn default() -> Self {
        DiskConfig { sector_bytes: 512, io_latency_ns: 20_000, fsync_latency_ns: 1_000_000 }
    }
}

/// The simulated network's timing.
#[derive(Clone, Debug, PartialEq)]
pub struct NetConfig {
    /// One-way latency of a segment between two hosts.
    pub latency: Span,
    pub distribution: LatencyDistribution,
    /// A connect that got no answer by then fails with ETIMEDOUT.
    pub connect_timeout_ns: u64,
}

impl Default for NetConfig {
    fn default() -> Self {
        NetConfig { latency: Span { min_ns: 100_000, max_ns: 2_000_000 }, distribution: LatencyDistribution::Uniform, connect_timeout_ns: 3_000_000_000 }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LatencyDistribution {
    /// Uniform over the latency range.
    Uniform,
    /// Mostly uniform over the range; one segment in 16 takes 1 to 10 times
    /// the range's maximum (a slow path, a retransmit).
    LongTail,
}

impl Span {
    /// One uniform draw from `[min, max]` on `stream`.
    pub fn draw(&self, streams: &mut crate::streams::Streams, stream: crate::streams::Stream) -> u64 {
        self.min_ns + streams.below(stream, self.max_ns - self.min_ns + 1)
    }
}

/// A range of virtual durations, drawn uniformly.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Span {
    pub min_ns: u64,
    pub max_ns: u64,
}

/// Fault rates. Every family is off unless configured.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FaultConfig {
    /// Each seed switches a random half of the configured families on.
    pub swarm: bool,
    pub crash: Option<CrashFaults>,
    pub fsync_eio: Option<FsyncEioFaults>,
    pub torn_writes: bool,
    pub pause: Option<TimedFaults>,
    pub clock_skew: Option<SkewFaults>,
    pub clock_jump: Option<JumpFaults>,
    pub partition: Option<PartitionFaults>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct PartitionFaults {
    /// Expected partitions per virtual second per targeted instance (each
    /// isolates that instance from every other one).
    pub rate: f64,
    pub duration: Span,
    /// Odds that a partition cuts one direction only.
    pub one_way: f64,
    pub nodes: Vec<String>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct CrashFaults {
    /// Expected crashes per virtual second per targeted instance.
    pub rate: f64,
    pub restart_after: Option<Span>,
    /// Odds that a crash lands inside the node's next disk operation.
    pub during_disk_op: f64,
    pub nodes: Vec<String>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct FsyncEioFaults {
    /// Odds that one fsync fails.
    pub probability: f64,
    pub nodes: Vec<String>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct TimedFaults {
    pub rate: f64,
    pub duration: Span,
    pub nodes: Vec<String>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct SkewFaults {
    pub rate: f64,
    pub duration: Span,
    /// Largest drift, in parts per million (100000 = clocks 10% fast or slow).
    pub max_ppm: u64,
    pub nodes: Vec<String>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct JumpFaults {
    pub rate: f64,
    /// Largest jump of the realtime clock, forward or backward.
    pub max_ns: u64,
    pub nodes: Vec<String>,
}

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
}

#[derive(Clone, Debug, PartialEq)]
pub enum WasmSource {
    /// A prebuilt module, absolute path.
    Path(PathBuf),
    /// `go build` of `package` run in `dir` with GOOS=wasip1 GOARCH=wasm.
    /// With `net`, built with the overlay that puts the standard library's
    /// `net` package on the simulated network (see docs/network.md).
    Go { dir: PathBuf, package: String, tags: Vec<String>, net: bool },
    /// `cargo build --target wasm32-wasip1` run in `dir`.
    Cargo { dir: PathBuf, package: Option<String>, bin: Option<String>, profile: String },
}

#[derive(Clone, Debug)]
pub struct Limits {
    /// A node that runs this many instructions without blocking fails the run.
    pub watchdog_instructions: u64,
    /// Bound on scheduler steps per run; exceeding it fails the run.
    pub steps_max: u64,
    /// Linear memory a node instance may grow to.
    pub memory_bytes_max: u64,
    /// Virtual nanoseconds charged per unit of fuel (about one wasm instruction).
    pub ns_per_instruction: u64,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            watchdog_instructions: 2_000_000_000,
            steps_max: 5_000_000,
            memory_bytes_max: 512 << 20,
            ns_per_instruction: 1,
        }
    }
}

#[derive(Clone, Debug, Default)]
pub struct Determinism {
    /// Canonicalise NaN bit patterns so float results match across CPU
    /// architectures (costs ~3.7x on float-heavy code; off by default).
    pub canonicalize_nans: bool,
}

impl NodeSpec {
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

impl Config {
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|e| ConfigError {
            file: path.to_path_buf(),
            json_path: "$".into(),
            message: format!("cannot read the config: {e}"),
        })?;
        Config::parse(path, &text)
    }

    pub fn parse(path: &Path, text: &str) -> Result<Config, ConfigError> {
        let path = absolute(path);
        let value: Value = serde_json::from_str(text).map_err(|e| ConfigError {
            file: path.clone(),
            json_path: "$".into(),
            message: format!("not valid JSON: {e}"),
        })?;
        let mut parser = Parser { file: path.clone() };
        parser.config(&value)
    }

    pub fn dir(&self) -> &Path {
        self.path.parent().expect("a config file has a parent folder")
    }

    /// Every node instance in a fixed order: node order, then replica order.
    pub fn instances(&self) -> Vec<(usize, String)> {
        let mut out = Vec::new();
        for (node_idx, node) in self.nodes.iter().enumerate() {
            for r in 0..node.instance_count() {
                out.push((node_idx, node.instance_name(r)));
            }
        }
        out
    }
}

fn absolute(path: &Path) -> PathBuf {
    if path.is_absolute() {
        normalize(path)
    } else {
        normalize(&std::env::current_dir().map(|d| d.join(path)).unwrap_or_else(|_| path.to_path_buf()))
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct ConfigError {
    pub file: PathBuf,
    /// `$` for the whole document, `$.nodes[0].name` for a field.
    pub json_path: String,
    pub message: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}: {}", self.file.display(), self.json_path, self.message)
    }
}

impl std::error::Error for ConfigError {}

struct Parser {
    file: PathBuf,
}

type Parsed<T> = Result<T, ConfigError>;

const TOP_FIELDS: &[&str] = &["version", "name", "duration", "nodes", "limits", "determinism", "disk", "net", "faults", "regressions"];
const NET_FIELDS: &[&str] = &["latency", "distribution", "connect_timeout"];
const PARTITION_FIELDS: &[&str] = &["rate", "duration", "one_way", "nodes"];
const DISK_FIELDS: &[&str] = &["sector_bytes", "io_latency", "fsync_latency"];
const FAULT_FIELDS: &[&str] = &["swarm", "crash", "fsync_eio", "torn_writes", "pause", "clock_skew", "clock_jump", "partition"];
const CRASH_FIELDS: &[&str] = &["rate", "restart_after", "during_disk_op", "nodes"];
const EIO_FIELDS: &[&str] = &["probability", "nodes"];
const PAUSE_FIELDS: &[&str] = &["rate", "duration", "nodes"];
const SKEW_FIELDS: &[&str] = &["rate", "duration", "max_ppm", "nodes"];
const JUMP_FIELDS: &[&str] = &["rate", "max", "nodes"];
const NODE_FIELDS: &[&str] = &["name", "replicas", "args", "env", "wasm", "go", "cargo", "workload"];
const GO_FIELDS: &[&str] = &["dir", "package", "tags", "net"];
const CARGO_FIELDS: &[&str] = &["dir", "package", "bin", "profile"];
const LIMIT_FIELDS: &[&str] =
    &["watchdog_instructions", "steps_max", "memory_mb", "ns_per_instruction"];
const DETERMINISM_FIELDS: &[&str] = &["canonicalize_nans"];

impl Parser {
    fn err(&self, json_path: &str, message: impl Into<String>) -> ConfigError {
        ConfigError { file: self.file.clone(), json_path: json_path.to_string(), message: message.into() }
    }

    fn object<'v>(&self, v: &'v Value, path: &str, known: &[&str]) -> Parsed<&'v Map<String, Value>> {
        let map = v.as_object().ok_or_else(|| self.err(path, format!("expected an object, found {}", kind(v))))?;
        for key in map.keys() {
            if !known.contains(&key.as_str()) {
                let hint = match did_you_mean(key, known) {
                    Some(s) => format!(" (did you mean \"{s}\"?)"),
                    None => format!(" (known fields: {})", known.join(", ")),
                };
                return Err(self.err(&format!("{path}.{key}"), format!("unknown field \"{key}\"{hint}")));
            }
        }
        Ok(map)
    }

    fn string(&self, v: &Value, path: &str) -> Parsed<String> {
        v.as_str().map(str::to_string).ok_or_else(|| self.err(path, format!("expected a string, found {}", kind(v))))
    }

    fn uint(&self, v: &Value, path: &str, min: u64, max: u64) -> Parsed<u64> {
        match v.as_u64() {
            Some(n) if n >= min && n <= max => Ok(n),
            _ => Err(self.err(path, format!("expected an integer from {min} to {max}, found {}", show(v)))),
        }
    }

    fn bool(&self, v: &Value, path: &str) -> Parsed<bool> {
        v.as_bool().ok_or_else(|| self.err(path, format!("expected true or false, found {}", kind(v))))
    }

    fn strings(&self, v: &Value, path: &str) -> Parsed<Vec<String>> {
        let items = v.as_array().ok_or_else(|| self.err(path, format!("expected an array of strings, found {}", kind(v))))?;
        items.iter().enumerate().map(|(i, item)| self.string(item, &format!("{path}[{i}]"))).collect()
    }

    fn rel_path(&self, v: &Value, path: &str) -> Parsed<PathBuf> {
        let text = self.string(v, path)?;
        if text.is_empty() {
            return Err(self.err(path, "expected a path, found an empty string"));
        }
        let dir = self.file.parent().expect("config file has a folder");
        Ok(normalize(&dir.join(text)))
    }

    fn config(&mut self, v: &Value) -> Parsed<Config> {
        let map = self.object(v, "$", TOP_FIELDS)?;
        if let Some(version) = map.get("version") {
            let n = self.uint(version, "$.version", 0, u64::MAX)?;
            if n != CONFIG_VERSION {
                return Err(self.err("$.version", format!("this seedfall reads config version {CONFIG_VERSION}, found {n}")));
            }
        }
        let name = match map.get("name") {
            Some(v) => {
                let name = self.string(v, "$.name")?;
                if !valid_name(&name) {
                    return Err(self.err("$.name", format!("expected letters, digits, '-' or '_', found \"{name}\"")));
                }
                name
            }
            None => default_name(&self.file),
        };
        let duration = match map.get("duration") {
            None => return Err(self.err("$", "missing field \"duration\" (the virtual time a run lasts, like \"10s\")")),
            Some(v) => {
                let text = self.string(v, "$.duration")?;
                match parse_duration(&text) {
                    Some(d) if d > VTime::ZERO => d,
                    _ => return Err(self.err("$.duration", format!("expected a positive duration like \"10s\" or \"250ms\", found \"{text}\""))),
                }
            }
        };
        let nodes_value = map.get("nodes").ok_or_else(|| self.err("$", "missing field \"nodes\" (the programs of the cluster)"))?;
        let nodes_list = nodes_value.as_array().ok_or_else(|| self.err("$.nodes", format!("expected an array of nodes, found {}", kind(nodes_value))))?;
        if nodes_list.is_empty() || nodes_list.len() > NODES_MAX {
            return Err(self.err("$.nodes", format!("expected 1 to {NODES_MAX} nodes, found {}", nodes_list.len())));
        }
        let mut nodes: Vec<NodeSpec> = Vec::new();
        for (i, node) in nodes_list.iter().enumerate() {
            let path = format!("$.nodes[{i}]");
            let spec = self.node(node, &path)?;
            if nodes.iter().any(|n| n.name == spec.name) {
                return Err(self.err(&format!("{path}.name"), format!("node name \"{}\" is used twice", spec.name)));
            }
            nodes.push(spec);
        }
        let limits = match map.get("limits") {
            Some(v) => self.limits(v)?,
            None => Limits::default(),
        };
        let determinism = match map.get("determinism") {
            Some(v) => {
                let m = self.object(v, "$.determinism", DETERMINISM_FIELDS)?;
                let canonicalize_nans = match m.get("canonicalize_nans") {
                    Some(b) => self.bool(b, "$.determinism.canonicalize_nans")?,
                    None => false,
                };
                Determinism { canonicalize_nans }
            }
            None => Determinism::default(),
        };
        let disk = match map.get("disk") {
            Some(v) => self.disk(v)?,
            None => DiskConfig::default(),
        };
        let faults = match map.get("faults") {
            Some(v) => self.faults(v, &nodes)?,
            None => FaultConfig::default(),
        };
        let net = match map.get("net") {
            Some(v) => self.net(v)?,
            None => NetConfig::default(),
        };
        let regressions = map.get("regressions").map(|v| self.rel_path(v, "$.regressions")).transpose()?;
        Ok(Config { path: self.file.clone(), name, duration, nodes, limits, determinism, disk, faults, net, regressions })
    }

    fn net(&self, v: &Value) -> Parsed<NetConfig> {
        let m = self.object(v, "$.net", NET_FIELDS)?;
        let mut n = NetConfig::default();
        if let Some(x) = m.get("latency") {
            n.latency = self.span(x, "$.net.latency")?;
        }
        if let Some(x) = m.get("distribution") {
            n.distribution = match self.string(x, "$.net.distribution")?.as_str() {
                "uniform" => LatencyDistribution::Uniform,
                "long_tail" => LatencyDistribution::LongTail,
                other => return Err(self.err("$.net.distribution", format!("expected \"uniform\" or \"long_tail\", found \"{other}\""))),
            };
        }
        if let Some(x) = m.get("connect_timeout") {
            n.connect_timeout_ns = self.duration_value(x, "$.net.connect_timeout")?;
            if n.connect_timeout_ns == 0 {
                return Err(self.err("$.net.connect_timeout", "expected a positive duration like \"3s\", found zero"));
            }
        }
        Ok(n)
    }

    fn duration_value(&self, v: &Value, path: &str) -> Parsed<u64> {
        let text = self.string(v, path)?;
        parse_duration(&text).map(|d| d.nanos()).ok_or_else(|| self.err(path, format!("expected a duration like \"10ms\", found \"{text}\"")))
    }

    /// `"100ms"` or `"50ms-500ms"`.
    fn span(&self, v: &Value, path: &str) -> Parsed<Span> {
        let text = self.string(v, path)?;
        let bad = || self.err(path, format!("expected a duration like \"100ms\" or a range like \"50ms-500ms\", found \"{text}\""));
        let (a, b) = match text.split_once('-') {
            Some((a, b)) => (parse_duration(a).ok_or_else(bad)?, parse_duration(b).ok_or_else(bad)?),
            None => {
                let d = parse_duration(&text).ok_or_else(bad)?;
                (d, d)
            }
        };
        if b < a {
            return Err(self.err(path, format!("the range \"{text}\" ends before it starts")));
        }
        Ok(Span { min_ns: a.nanos(), max_ns: b.nanos() })
    }

    /// The required `duration` span of a fault family at `path`.
    fn duration_span(&self, m: &Map<String, Value>, path: &str, hint: &str) -> Parsed<Span> {
        match m.get("duration") {
            Some(v) => self.span(v, &format!("{path}.duration")),
            None => Err(self.err(path, format!("missing field \"duration\" ({hint})"))),
        }
    }

    fn number(&self, v: &Value, path: &str, min: f64, max: f64) -> Parsed<f64> {
        match v.as_f64() {
            Some(x) if x >= min && x <= max => Ok(x),
            _ => Err(self.err(path, format!("expected a number from {min} to {max}, found {}", show(v)))),
        }
    }

    fn disk(&self, v: &Value) -> Parsed<DiskConfig> {
        let m = self.object(v, "$.disk", DISK_FIELDS)?;
        let mut d = DiskConfig::default();
        if let Some(x) = m.get("sector_bytes") {
            d.sector_bytes = self.uint(x, "$.disk.sector_bytes", 64, 1 << 16)?;
            if !d.sector_bytes.is_power_of_two() {
                return Err(self.err("$.disk.sector_bytes", format!("expected a power of two, found {}", d.sector_bytes)));
            }
        }
        if let Some(x) = m.get("io_latency") {
            d.io_latency_ns = self.duration_value(x, "$.disk.io_latency")?;
        }
        if let Some(x) = m.get("fsync_latency") {
            d.fsync_latency_ns = self.duration_value(x, "$.disk.fsync_latency")?;
        }
        Ok(d)
    }

    /// `nodes` names config nodes (all their replicas); absent means every node.
    fn targets(&self, m: &Map<String, Value>, path: &str, nodes: &[NodeSpec]) -> Parsed<Vec<String>> {
        let Some(v) = m.get("nodes") else { return Ok(nodes.iter().map(|n| n.name.clone()).collect()) };
        let names = self.strings(v, &format!("{path}.nodes"))?;
        let known: Vec<&str> = nodes.iter().map(|n| n.name.as_str()).collect();
        for (i, n) in names.iter().enumerate() {
            if !known.contains(&n.as_str()) {
                let hint = did_you_mean(n, &known).map(|s| format!(" (did you mean \"{s}\"?)")).unwrap_or_default();
                return Err(self.err(&format!("{path}.nodes[{i}]"), format!("no node is named \"{n}\"{hint}")));
            }
        }
        Ok(names)
    }

    fn rate(&self, m: &Map<String, Value>, path: &str) -> Parsed<f64> {
        match m.get("rate") {
            Some(x) => self.number(x, &format!("{path}.rate"), 0.0, 1000.0),
            None => Err(self.err(path, "missing field \"rate\" (expected faults per virtual second per node instance)")),
        }
    }

    fn faults(&self, v: &Value, nodes: &[NodeSpec]) -> Parsed<FaultConfig> {
        let m = self.object(v, "$.faults", FAULT_FIELDS)?;
        let mut f = FaultConfig::default();
        if let Some(x) = m.get("swarm") {
            f.swarm = self.bool(x, "$.faults.swarm")?;
        }
        if let Some(x) = m.get("torn_writes") {
            f.torn_writes = self.bool(x, "$.faults.torn_writes")?;
        }
        if let Some(x) = m.get("crash") {
            let p = "$.faults.crash";
            let c = self.object(x, p, CRASH_FIELDS)?;
            f.crash = Some(CrashFaults {
                rate: self.rate(c, p)?,
                restart_after: c.get("restart_after").map(|v| self.span(v, &format!("{p}.restart_after"))).transpose()?,
                during_disk_op: c.get("during_disk_op").map(|v| self.number(v, &format!("{p}.during_disk_op"), 0.0, 1.0)).transpose()?.unwrap_or(0.0),
                nodes: self.targets(c, p, nodes)?,
            });
        }
        if let Some(x) = m.get("fsync_eio") {
            let p = "$.faults.fsync_eio";
            let c = self.object(x, p, EIO_FIELDS)?;
            let probability = match c.get("probability") {
                Some(v) => self.number(v, &format!("{p}.probability"), 0.0, 1.0)?,
                None => return Err(self.err(p, "missing field \"probability\" (the odds that one fsync fails)")),
            };
            f.fsync_eio = Some(FsyncEioFaults { probability, nodes: self.targets(c, p, nodes)? });
        }
        if let Some(x) = m.get("pause") {
            let p = "$.faults.pause";
            let c = self.object(x, p, PAUSE_FIELDS)?;
            let duration = self.duration_span(c, p, "like \"10ms-200ms\"")?;
            f.pause = Some(TimedFaults { rate: self.rate(c, p)?, duration, nodes: self.targets(c, p, nodes)? });
        }
        if let Some(x) = m.get("clock_skew") {
            let p = "$.faults.clock_skew";
            let c = self.object(x, p, SKEW_FIELDS)?;
            let duration = self.duration_span(c, p, "like \"10ms-200ms\"")?;
            let max_ppm = c.get("max_ppm").map(|v| self.uint(v, &format!("{p}.max_ppm"), 1, 900_000)).transpose()?.unwrap_or(100_000);
            f.clock_skew = Some(SkewFaults { rate: self.rate(c, p)?, duration, max_ppm, nodes: self.targets(c, p, nodes)? });
        }
        if let Some(x) = m.get("clock_jump") {
            let p = "$.faults.clock_jump";
            let c = self.object(x, p, JUMP_FIELDS)?;
            let max_ns = match c.get("max") {
                Some(v) => self.duration_value(v, &format!("{p}.max"))?,
                None => return Err(self.err(p, "missing field \"max\" (the largest jump, like \"10s\")")),
            };
            f.clock_jump = Some(JumpFaults { rate: self.rate(c, p)?, max_ns, nodes: self.targets(c, p, nodes)? });
        }
        if let Some(x) = m.get("partition") {
            let p = "$.faults.partition";
            let c = self.object(x, p, PARTITION_FIELDS)?;
            let duration = self.duration_span(c, p, "how long a partition lasts, like \"100ms-2s\"")?;
            let one_way = c.get("one_way").map(|v| self.number(v, &format!("{p}.one_way"), 0.0, 1.0)).transpose()?.unwrap_or(0.0);
            f.partition = Some(PartitionFaults { rate: self.rate(c, p)?, duration, one_way, nodes: self.targets(c, p, nodes)? });
        }
        Ok(f)
    }

    fn node(&self, v: &Value, path: &str) -> Parsed<NodeSpec> {
        let map = self.object(v, path, NODE_FIELDS)?;
        let name = match map.get("name") {
            Some(n) => self.string(n, &format!("{path}.name"))?,
            None => return Err(self.err(path, "missing field \"name\"")),
        };
        if !valid_name(&name) {
            return Err(self.err(&format!("{path}.name"), format!("expected letters, digits, '-' or '_', found \"{name}\"")));
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
                env.insert(k.clone(), self.string(val, &format!("{epath}.{k}"))?);
            }
        }
        let workload = match map.get("workload") {
            Some(b) => self.bool(b, &format!("{path}.workload"))?,
            None => true,
        };
        let source = self.source(map, path)?;
        Ok(NodeSpec { name, replicas, args, env, source, workload })
    }

    fn source(&self, map: &Map<String, Value>, path: &str) -> Parsed<WasmSource> {
        let given: Vec<&str> = ["wasm", "go", "cargo"].into_iter().filter(|k| map.contains_key(*k)).collect();
        if given.len() != 1 {
            let found = if given.is_empty() { "none".to_string() } else { given.join(" and ") };
            return Err(self.err(path, format!("expected exactly one of \"wasm\" (a .wasm path), \"go\" or \"cargo\" (a build recipe), found {found}")));
        }
        match given[0] {
            "wasm" => Ok(WasmSource::Path(self.rel_path(&map["wasm"], &format!("{path}.wasm"))?)),
            "go" => {
                let gpath = format!("{path}.go");
                let m = self.object(&map["go"], &gpath, GO_FIELDS)?;
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
                Ok(WasmSource::Go { dir, package, tags, net })
            }
            _ => {
                let cpath = format!("{path}.cargo");
                let m = self.object(&map["cargo"], &cpath, CARGO_FIELDS)?;
                let dir = match m.get("dir") {
                    Some(d) => self.rel_path(d, &format!("{cpath}.dir"))?,
                    None => return Err(self.err(&cpath, "missing field \"dir\" (the folder `cargo build` runs in)")),
                };
                let opt = |k: &str| -> Parsed<Option<String>> {
                    m.get(k).map(|v| self.string(v, &format!("{cpath}.{k}"))).transpose()
                };
                let profile = opt("profile")?.unwrap_or_else(|| "release".into());
                Ok(WasmSource::Cargo { dir, package: opt("package")?, bin: opt("bin")?, profile })
            }
        }
    }

    fn limits(&self, v: &Value) -> Parsed<Limits> {
        let m = self.object(v, "$.limits", LIMIT_FIELDS)?;
        let mut limits = Limits::default();
        if let Some(x) = m.get("watchdog_instructions") {
            limits.watchdog_instructions = self.uint(x, "$.limits.watchdog_instructions", 10_000, 1 << 50)?;
        }
        if let Some(x) = m.get("steps_max") {
            limits.steps_max = self.uint(x, "$.limits.steps_max", 1, 1 << 40)?;
        }
        if let Some(x) = m.get("memory_mb") {
            limits.memory_bytes_max = self.uint(x, "$.limits.memory_mb", 1, 4096)? << 20;
        }
        if let Some(x) = m.get("ns_per_instruction") {
            limits.ns_per_instruction = self.uint(x, "$.limits.ns_per_instruction", 0, 1_000_000)?;
        }
        Ok(limits)
    }
}

/// Removes `.` and folds `dir/..` without touching the filesystem, so paths
/// shown to users read `examples/ledger/main.go`, not `examples/ledger/./main.go`.
pub fn normalize(path: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir if matches!(out.components().next_back(), Some(Component::Normal(_))) => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

fn valid_name(name: &str) -> bool {
    !name.is_empty() && name.len() <= 64 && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// `seedfall.json` takes its folder's name; `seedfall.fixed.json` becomes
/// `<folder>-fixed`; any other file its stem.
fn default_name(file: &Path) -> String {
    let stem = file.file_stem().and_then(|s| s.to_str()).unwrap_or("config");
    let folder = file.parent().and_then(|p| p.file_name()).and_then(|s| s.to_str()).unwrap_or("config");
    let raw = if stem == "seedfall" {
        folder.to_string()
    } else if let Some(rest) = stem.strip_prefix("seedfall.") {
        format!("{folder}-{rest}")
    } else {
        stem.to_string()
    };
    let cleaned: String = raw.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '-' }).collect();
    if cleaned.is_empty() { "config".into() } else { cleaned }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn show(v: &Value) -> String {
    match v {
        Value::Number(n) => n.to_string(),
        other => kind(other).to_string(),
    }
}

/// The known name closest to `typo`, if it is close enough to be a typo.
pub fn did_you_mean<'a>(typo: &str, known: &[&'a str]) -> Option<&'a str> {
    let typo_lower = typo.to_ascii_lowercase();
    known
        .iter()
        .map(|k| (edit_distance(&typo_lower, &k.to_ascii_lowercase()), *k))
        .filter(|(d, k)| *d <= 2.max(k.len() / 3))
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for i in 1..=a.len() {
        let mut cur = vec![i; b.len() + 1];
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            cur[j] = (prev[j] + 1).min(cur[j - 1] + 1).min(prev[j - 1] + cost);
        }
        prev = cur;
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Config, ConfigError> {
        Config::parse(Path::new("/p/demo/seedfall.json"), text)
    }

    fn err(text: &str) -> String {
        let e = parse(text).unwrap_err();
        format!("{}: {}", e.json_path, e.message)
    }

    const OK: &str = r#"{"duration": "2s", "nodes": [{"name": "server", "wasm": "s.wasm"}, {"name": "client", "replicas": 3, "go": {"dir": "client"}}]}"#;

    #[test]
    fn parses_a_small_config() {
        let c = parse(OK).unwrap();
        assert_eq!(c.name, "demo");
        assert_eq!(c.duration, VTime(2_000_000_000));
        let names: Vec<String> = c.instances().into_iter().map(|(_, n)| n).collect();
        assert_eq!(names, ["server", "client#1", "client#2", "client#3"]);
        assert_eq!(c.nodes[0].source, WasmSource::Path("/p/demo/s.wasm".into()));
        assert!(matches!(&c.nodes[1].source, WasmSource::Go { dir, package, .. } if dir == Path::new("/p/demo/client") && package == "."));
    }

    #[test]
    fn errors_name_path_and_expectation() {
        assert_eq!(
            err(r#"{"duration": "2s", "nodes": [{"name": "a", "wasm": "a.wasm", "replica": 2}]}"#),
            "$.nodes[0].replica: unknown field \"replica\" (did you mean \"replicas\"?)"
        );
        assert_eq!(
            err(r#"{"duration": "2s", "nodes": [{"name": "a", "wasm": "a.wasm", "replicas": 0}]}"#),
            "$.nodes[0].replicas: expected an integer from 1 to 64, found 0"
        );
        assert_eq!(err(r#"{"duraton": "2s"}"#), "$.duraton: unknown field \"duraton\" (did you mean \"duration\"?)");
        assert_eq!(
            err(r#"{"duration": "2s", "nodes": [{"name": "a", "wasm": "a"}], "net": {"distribution": "pareto"}}"#),
            "$.net.distribution: expected \"uniform\" or \"long_tail\", found \"pareto\""
        );
        assert_eq!(
            err(r#"{"duration": "2s", "nodes": [{"name": "a", "wasm": "a"}], "faults": {"partition": {"rate": 1}}}"#),
            "$.faults.partition: missing field \"duration\" (how long a partition lasts, like \"100ms-2s\")"
        );
        assert_eq!(
            err(r#"{"duration": "2s", "nodes": [{"name": "a", "go": {"dir": ".", "net": "yes"}}]}"#),
            "$.nodes[0].go.net: expected true or false, found a string"
        );
        assert_eq!(
            err(r#"{"duration": "soon", "nodes": []}"#),
            "$.duration: expected a positive duration like \"10s\" or \"250ms\", found \"soon\""
        );
        assert!(err(r#"{"duration": "1s", "nodes": [{"name": "a"}]}"#).starts_with("$.nodes[0]: expected exactly one of"));
        assert_eq!(
            err(r#"{"duration": "1s", "nodes": [{"name": "a", "wasm": "x"}, {"name": "a", "wasm": "y"}]}"#),
            "$.nodes[1].name: node name \"a\" is used twice"
        );
        assert!(err("{").starts_with("$: not valid JSON"));
        assert_eq!(err(r#"{"version": 2}"#), "$.version: this seedfall reads config version 1, found 2");
    }

    #[test]
    fn fault_sections_parse_and_check_node_names() {
        let c = parse(r#"{"duration": "2s", "nodes": [{"name": "server", "wasm": "s.wasm"}],
            "faults": {"crash": {"rate": 0.5, "restart_after": "50ms-500ms", "during_disk_op": 0.5}, "torn_writes": true,
                       "fsync_eio": {"probability": 0.1, "nodes": ["server"]}},
            "disk": {"sector_bytes": 4096, "fsync_latency": "2ms"}}"#).unwrap();
        let crash = c.faults.crash.unwrap();
        assert_eq!(crash.restart_after, Some(Span { min_ns: 50_000_000, max_ns: 500_000_000 }));
        assert_eq!(crash.nodes, ["server"]);
        assert!(c.faults.torn_writes);
        assert_eq!(c.disk.sector_bytes, 4096);
        assert_eq!(
            err(r#"{"duration": "2s", "nodes": [{"name": "server", "wasm": "s"}], "faults": {"pause": {"rate": 1, "duration": "1ms", "nodes": ["sever"]}}}"#),
            "$.faults.pause.nodes[0]: no node is named \"sever\" (did you mean \"server\"?)"
        );
        assert_eq!(
            err(r#"{"duration": "2s", "nodes": [{"name": "s", "wasm": "s"}], "faults": {"crash": {"rate": 1, "restart_after": "5s-1s"}}}"#),
            "$.faults.crash.restart_after: the range \"5s-1s\" ends before it starts"
        );
        assert_eq!(
            err(r#"{"duration": "2s", "nodes": [{"name": "s", "wasm": "s"}], "faults": {"crashes": {}}}"#),
            "$.faults.crashes: unknown field \"crashes\" (did you mean \"crash\"?)"
        );
    }

    #[test]
    fn default_names() {
        assert_eq!(default_name(Path::new("/x/kvlog/seedfall.json")), "kvlog");
        assert_eq!(default_name(Path::new("/x/kvlog/seedfall.fixed.json")), "kvlog-fixed");
        assert_eq!(default_name(Path::new("/x/kvlog/other.json")), "other");
    }
}
