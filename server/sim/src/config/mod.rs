//! The run configuration, `seedfall.json` (version 1), parsed and validated.
//!
//! Parsing walks a `serde_json::Value` by hand instead of deriving
//! `Deserialize`, so every error can name the JSON path (`$.nodes[1].replicas`),
//! say what was expected, and suggest the closest known field for a typo.
//! A `Config` that exists is valid: later code never re-checks it.
//!
//! One module per section: `disk`, `faults`, `net`, `nodes`; `parse` holds
//! the parser's primitives and the error helpers. `fields` is every
//! object's table of fields, from which the parser takes the fields it
//! knows and `schema` makes the JSON Schema (`seedfall schema`).
mod dupes;
mod disk;
mod faults;
pub mod fields;
mod net;
mod nodes;
mod parse;
pub mod schema;

pub use disk::*;
pub use faults::*;
pub use net::*;
pub use nodes::*;
pub use parse::{did_you_mean, normalize, parse_bytes, NAME_BYTES_MAX};
pub use schema::json_schema;
use parse::{default_name, kind, valid_name, Parsed, Parser};
use crate::vtime::{parse_duration, VTime};
use serde_json::Value;
use std::fmt;
use std::path::{Path, PathBuf};

pub const CONFIG_VERSION: u64 = 1;
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

/// A range of virtual durations, drawn uniformly.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Span {
    pub min_ns: u64,
    pub max_ns: u64,
}

impl Span {
    /// One uniform draw from `[min, max]` on `stream`.
    pub fn draw(&self, streams: &mut crate::streams::Streams, stream: crate::streams::Stream) -> u64 {
        self.min_ns + streams.below(stream, self.max_ns - self.min_ns + 1)
    }
}

/// The `limits` a config that does not say gets (`Limits::default`, and
/// the defaults of the JSON Schema).
pub const WATCHDOG_INSTRUCTIONS_DEFAULT: u64 = 2_000_000_000;
pub const STEPS_MAX_DEFAULT: u64 = 5_000_000;
pub const MEMORY_MB_DEFAULT: u64 = 512;
pub const NS_PER_INSTRUCTION_DEFAULT: u64 = 1;
/// `limits.run_memory_mb` when the config does not say, where no command
/// gives the run its share of the memory budget.
pub const RUN_MEMORY_MB_DEFAULT: u64 = 4096;
/// `limits.output_mb` when the config does not say.
pub const OUTPUT_MB_DEFAULT: u64 = 4;

/// Bound on `limits.memory_mb`: a wasm32 memory is at most 4 GiB.
pub const MEMORY_MB_MAX: u64 = 4096;
/// The ranges the other `limits` fields may take (docs/limits.md).
pub const WATCHDOG_INSTRUCTIONS_RANGE: (u64, u64) = (10_000, 1 << 50);
pub const STEPS_MAX_RANGE: (u64, u64) = (1, 1 << 40);
pub const NS_PER_INSTRUCTION_RANGE: (u64, u64) = (0, 1_000_000);
pub const OUTPUT_MB_RANGE: (u64, u64) = (0, 1024);
pub const RUN_MEMORY_MB_RANGE: (u64, u64) = (16, 1 << 20);

#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Limits {
    /// A node that runs this many instructions without blocking fails the run.
    pub watchdog_instructions: u64,
    /// Bound on scheduler steps per run; exceeding it fails the run.
    pub steps_max: u64,
    /// Linear memory a node instance may grow to.
    pub memory_bytes_max: u64,
    /// Virtual nanoseconds charged per unit of fuel (about one wasm instruction).
    pub ns_per_instruction: u64,
    /// Host memory one run may hold: every node instance's linear memory and
    /// every simulated disk (`memory::Meter`).
    pub run_memory_bytes: u64,
    /// Whether the config set `run_memory_bytes` (otherwise a command gives
    /// each run its share of the memory budget).
    pub run_memory_set: bool,
    /// Where `run_memory_bytes` came from, for messages.
    pub run_memory_source: String,
    /// Output of one node instance's stdout (and, apart, its stderr) the
    /// trace keeps; the rest is hashed and counted, not kept.
    pub output_bytes: u64,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            watchdog_instructions: WATCHDOG_INSTRUCTIONS_DEFAULT,
            steps_max: STEPS_MAX_DEFAULT,
            memory_bytes_max: MEMORY_MB_DEFAULT << 20,
            ns_per_instruction: NS_PER_INSTRUCTION_DEFAULT,
            run_memory_bytes: RUN_MEMORY_MB_DEFAULT << 20,
            run_memory_set: false,
            run_memory_source: "limits.run_memory_mb".into(),
            output_bytes: OUTPUT_MB_DEFAULT << 20,
        }
    }
}

#[derive(Clone, Debug, Default)]
pub struct Determinism {
    /// Canonicalise NaN bit patterns so float results match across CPU
    /// architectures (costs ~3.7x on float-heavy code; off by default).
    pub canonicalize_nans: bool,
}

impl Config {
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let text = crate::files::read_text(path, crate::files::JSON_BYTES_MAX, "the config").map_err(|message| ConfigError {
            file: path.to_path_buf(),
            json_path: "$".into(),
            message,
        })?;
        Config::parse(path, &text)
    }

    pub fn parse(path: &Path, text: &str) -> Result<Config, ConfigError> {
        let path = absolute(path);
        let max = crate::files::JSON_VALUES_MAX;
        if crate::files::json_values(text, max) > max {
            let message = format!("it holds more than {max} JSON values (numbers, strings, keys, lists and objects): a config needs far fewer; is this the file you meant?");
            return Err(ConfigError {
                file: path,
                json_path: "$".into(),
                message,
            });
        }
        let value: Value = serde_json::from_str(text).map_err(|e| ConfigError {
            file: path.clone(),
            json_path: "$".into(),
            message: format!("not valid JSON: {e}"),
        })?;
        if let Some((json_path, key)) = dupes::first_duplicate(text) {
            return Err(ConfigError { file: path.clone(), json_path, message: format!("\"{key}\" is given twice in the same object (JSON keeps only one; say it once)") });
        }
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



impl Parser {
    fn config(&mut self, v: &Value) -> Parsed<Config> {
        let map = self.object(v, "$", &fields::CONFIG.names())?;
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
                    let hint = match parse::sanitized_name(&name) {
                        Some(s) => format!(" (try \"{s}\"; names from the file name are rewritten like this, a name you chose is not)"),
                        None => String::new(),
                    };
                    return Err(self.err("$.name", format!("expected letters, digits, '-' or '_' (at most {} bytes), found \"{}\"{hint}", parse::NAME_BYTES_MAX, parse::shown_text(&name))));
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
                    Some(d) if d > crate::vtime::DURATION_MAX => return Err(self.err("$.duration", format!("expected a duration of at most 1000h, found \"{}\"", parse::shown_text(&text)))),
                    Some(d) if d > VTime::ZERO => d,
                    _ => return Err(self.err("$.duration", format!("expected a positive duration like \"10s\" or \"250ms\", found \"{}\"", parse::shown_text(&text)))),
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
                let m = self.object(v, "$.determinism", &fields::DETERMINISM.names())?;
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

    fn limits(&self, v: &Value) -> Parsed<Limits> {
        let m = self.object(v, "$.limits", &fields::LIMITS.names())?;
        let mut limits = Limits::default();
        if let Some(x) = m.get("watchdog_instructions") {
            limits.watchdog_instructions = self.uint(x, "$.limits.watchdog_instructions", WATCHDOG_INSTRUCTIONS_RANGE.0, WATCHDOG_INSTRUCTIONS_RANGE.1)?;
        }
        if let Some(x) = m.get("steps_max") {
            limits.steps_max = self.uint(x, "$.limits.steps_max", STEPS_MAX_RANGE.0, STEPS_MAX_RANGE.1)?;
        }
        if let Some(x) = m.get("memory_mb") {
            limits.memory_bytes_max = self.uint(x, "$.limits.memory_mb", 1, MEMORY_MB_MAX)? << 20;
        }
        if let Some(x) = m.get("ns_per_instruction") {
            limits.ns_per_instruction = self.uint(x, "$.limits.ns_per_instruction", NS_PER_INSTRUCTION_RANGE.0, NS_PER_INSTRUCTION_RANGE.1)?;
        }
        if let Some(x) = m.get("output_mb") {
            limits.output_bytes = self.uint(x, "$.limits.output_mb", OUTPUT_MB_RANGE.0, OUTPUT_MB_RANGE.1)? << 20;
        }
        if let Some(x) = m.get("run_memory_mb") {
            limits.run_memory_bytes = self.uint(x, "$.limits.run_memory_mb", RUN_MEMORY_MB_RANGE.0, RUN_MEMORY_MB_RANGE.1)? << 20;
            limits.run_memory_set = true;
        }
        Ok(limits)
    }
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
    fn a_cargo_recipe_names_its_rust_target() {
        let node = |cargo: &str| parse(&format!(r#"{{"duration": "2s", "nodes": [{{"name": "app", "cargo": {cargo}}}]}}"#)).map(|c| c.nodes[0].source.clone());
        let target = |cargo: &str| match node(cargo).unwrap() {
            WasmSource::Cargo { target, .. } => target,
            other => panic!("{other:?}"),
        };
        assert_eq!(target(r#"{"dir": "app"}"#), RustTarget::Wasip1);
        assert_eq!(target(r#"{"dir": "app", "target": "wasm32-wasip1"}"#), RustTarget::Wasip1);
        assert_eq!(target(r#"{"dir": "app", "target": "wasm32-wasip1-threads"}"#), RustTarget::Wasip1Threads);
        // The file, the field and what it takes.
        let e = node(r#"{"dir": "app", "target": "wasm32-unknown-unknown"}"#).unwrap_err().to_string();
        assert_eq!(e, "/p/demo/seedfall.json: $.nodes[0].cargo.target: expected \"wasm32-wasip1\" (the default) or \"wasm32-wasip1-threads\" (a program that starts threads), found \"wasm32-unknown-unknown\"");
        assert_eq!(err(r#"{"duration": "2s", "nodes": [{"name": "a", "cargo": {"dir": ".", "target": 1}}]}"#), "$.nodes[0].cargo.target: expected a string, found a number");
    }

    #[test]
    fn comments_are_welcome_in_any_object() {
        let c = parse(r#"{"//": "a config", "duration": "2s", "nodes": [{"//": ["one", "two"], "name": "a", "wasm": "a.wasm", "go": null}], "faults": {"//": "crashes", "crash": {"rate": 1}}}"#.replace(", \"go\": null", "").as_str()).unwrap();
        assert_eq!(c.nodes.len(), 1);
        assert_eq!(err(r#"{"//": 3, "duration": "2s", "nodes": [{"name": "a", "wasm": "a"}]}"#), "$.//: a comment is a string or a list of strings, found a number");
    }

    #[test]
    fn a_seeded_file_in_the_way_of_other_seeds_is_a_config_error() {
        let with = |disk: &str| {
            format!(
                r#"{{"duration": "2s", "nodes": [{{"name": "a", "wasm": "a.wasm", "disk": {disk}}}]}}"#
            )
        };
        assert_eq!(
            err(&with(r#"{"dirs": ["/data/wal"], "files": {"/data": "seed.bin"}}"#)),
            "$.nodes[0].disk.files./data: /data is seeded as a file, but $.nodes[0].disk.dirs seeds /data/wal, which needs /data to be a folder"
        );
        assert_eq!(
            err(&with(r#"{"dirs": ["/data"], "files": {"/data": "seed.bin"}}"#)),
            "$.nodes[0].disk.files./data: /data is seeded as a file, but $.nodes[0].disk.dirs seeds /data, which needs /data to be a folder"
        );
        assert_eq!(
            err(&with(r#"{"files": {"/etc/app": "a", "/etc/app/conf": "b"}}"#)),
            "$.nodes[0].disk.files./etc/app: /etc/app is seeded as a file, but $.nodes[0].disk.files seeds /etc/app/conf, which needs /etc/app to be a folder"
        );
        // Siblings that share a prefix, and files inside seeded folders, are fine.
        assert!(parse(&with(
            r#"{"dirs": ["/data", "/data2/x"], "files": {"/data2x": "a", "/data/f": "b"}}"#
        ))
        .is_ok());
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
            "$.faults.pause.nodes[0]: no node \"sever\" (did you mean \"server\"? nodes: server)"
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
        assert_eq!(default_name(Path::new("/x/kv.v2/seedfall.json")), "kv-v2");
        assert_eq!(default_name(&Path::new("/x").join("a".repeat(80)).join("seedfall.json")).len(), parse::NAME_BYTES_MAX);
    }

    #[test]
    fn an_explicit_name_outside_the_alphabet_is_refused_with_the_derived_form() {
        assert_eq!(
            err(r#"{"name": "kv.v2", "duration": "2s", "nodes": [{"name": "a", "wasm": "a"}]}"#),
            "$.name: expected letters, digits, '-' or '_' (at most 64 bytes), found \"kv.v2\" (try \"kv-v2\"; names from the file name are rewritten like this, a name you chose is not)"
        );
    }

    #[test]
    fn torn_writes_need_the_crash_family() {
        assert_eq!(
            err(r#"{"duration": "2s", "nodes": [{"name": "a", "wasm": "a"}], "faults": {"torn_writes": true, "pause": {"rate": 1, "duration": "1ms"}}}"#),
            "$.faults.torn_writes: torn writes only change what a crash keeps, and no crash is configured: add \"crash\": {\"rate\": ...} to faults, or remove torn_writes"
        );
        parse(r#"{"duration": "2s", "nodes": [{"name": "a", "wasm": "a"}], "faults": {"torn_writes": false}}"#).unwrap();
    }

    #[test]
    fn an_unknown_fault_node_lists_the_nodes() {
        let two = r#"{"duration": "2s", "nodes": [{"name": "a", "wasm": "a"}, {"name": "b", "replicas": 2, "wasm": "b"}], "faults": {"partition": {"rate": 1, "duration": "1ms", "nodes": ["NODES"]}}}"#;
        assert_eq!(err(&two.replace("NODES", "zeta")), "$.faults.partition.nodes[0]: no node \"zeta\" (nodes: a, b)");
        assert_eq!(
            err(&two.replace("NODES", "b#2")),
            "$.faults.partition.nodes[0]: no node \"b#2\" (faults name config nodes, which take all their replicas: use \"b\"; nodes: a, b)"
        );
    }

    #[test]
    fn capacities_and_the_full_disk_families_parse_with_named_errors() {
        let c = parse(r#"{"duration": "2s", "disk": {"capacity": "64KiB"},
            "nodes": [{"name": "a", "wasm": "a", "disk": {"capacity": 1048576}}, {"name": "b", "wasm": "b"}],
            "faults": {"write_error": {"probability": 0.01, "path_prefix": "/data/wal", "errors": ["ENOSPC"]},
                       "disk_full": {"rate": 1, "duration": "10ms-1s", "nodes": ["b"]}}}"#).unwrap();
        assert_eq!((c.nodes[0].capacity(&c.disk), c.nodes[1].capacity(&c.disk)), (Some(1 << 20), Some(64 << 10)));
        let we = c.faults.write_error.unwrap();
        assert_eq!((we.path_prefix.as_deref(), we.errors, we.nodes), (Some("/data/wal"), vec![crate::errno::WriteErrno::Enospc], vec!["a".to_string(), "b".to_string()]));
        assert_eq!(c.faults.disk_full.unwrap().nodes, ["b"]);
        let base = r#"{"duration": "2s", "nodes": [{"name": "a", "wasm": "a"}], FIELD}"#;
        let e = |field: &str| err(&base.replace("FIELD", field));
        assert_eq!(e(r#""disk": {"capacity": "64MB"}"#), "$.disk.capacity: expected a size like \"64MiB\" (B, KiB, MiB or GiB) or a number of bytes, from 4096 to 2147483648 bytes, found \"64MB\"");
        assert_eq!(e(r#""disk": {"capacity": 100}"#), "$.disk.capacity: expected a size like \"64MiB\" (B, KiB, MiB or GiB) or a number of bytes, from 4096 to 2147483648 bytes, found 100");
        assert_eq!(e(r#""faults": {"write_error": {"probability": 0.1, "errors": ["EPERM"]}}"#), "$.faults.write_error.errors[0]: expected \"EIO\" or \"ENOSPC\", found \"EPERM\"");
        assert_eq!(e(r#""faults": {"write_error": {"probability": 0.1, "errors": []}}"#), "$.faults.write_error.errors: expected at least one of \"EIO\" and \"ENOSPC\", found an empty array");
        assert_eq!(e(r#""faults": {"write_error": {"probability": 0.1, "path_prefix": "data"}}"#), "$.faults.write_error.path_prefix: expected the start of an absolute path on the node's disk, like \"/data/wal\", found \"data\"");
        assert_eq!(e(r#""faults": {"write_error": {}}"#), "$.faults.write_error: missing field \"probability\" (the odds that one write fails, like 0.01)");
        assert_eq!(e(r#""faults": {"disk_full": {"rate": 1}}"#), "$.faults.disk_full: missing field \"duration\" (how long the disk stays full, like \"10ms-1s\")");
    }
}
