//! `disk`: the simulated disks' model, geometry and timing (top level), and
//! per node (`nodes[i].disk`) its own model and what it holds at t=0.
use super::parse::{Parsed, Parser};
use crate::disk::FsModel;
use serde_json::Value;
use std::path::PathBuf;

#[derive(Clone, Debug, PartialEq)]
pub struct DiskConfig {
    /// When names and truncates become durable (docs/disk.md); a node's own
    /// `disk.model` overrides it.
    pub model: FsModel,
    /// The journal (ext4, xfs) or transaction (btrfs) commits at least this
    /// often (0: only at fsync); `None`: the model's own default (ext4 5 s,
    /// xfs and btrfs 30 s).
    pub commit_interval_ns: Option<u64>,
    pub sector_bytes: u64,
    /// Mean virtual time of a read or write; each op draws from [mean/2, 3mean/2].
    pub io_latency_ns: u64,
    /// Mean virtual time of an fsync, during which the node waits.
    pub fsync_latency_ns: u64,
    /// What each node's files and folders may hold (`None`: up to the
    /// disk's bound); a node's own `disk.capacity` overrides it.
    pub capacity: Option<u64>,
}

impl Default for DiskConfig {
    fn default() -> Self {
        DiskConfig {
            model: FsModel::default(),
            commit_interval_ns: None,
            sector_bytes: 512,
            io_latency_ns: 20_000,
            fsync_latency_ns: 1_000_000,
            capacity: None,
        }
    }
}

/// The sizes `disk.sector_bytes` may take (a power of two within).
pub const SECTOR_BYTES_RANGE: (u64, u64) = (64, 1 << 16);
/// Bounds on what a node's disk is seeded with.
pub const SEED_DIRS_MAX: usize = 1024;
pub const SEED_FILES_MAX: usize = 1024;
/// Bound on the bytes of all seeded files of one node.
pub const SEED_BYTES_MAX: u64 = 256 << 20;
/// The least `disk.capacity`: room for a few folders and files.
pub const CAPACITY_MIN: u64 = 4096;

/// A node's own disk: its model, and the folders and files it holds durably
/// at t=0 (and after every crash, unless the guest removed them).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NodeDisk {
    pub model: Option<FsModel>,
    /// This node's capacity, instead of `disk.capacity`.
    pub capacity: Option<u64>,
    /// Absolute guest paths, created with their parents.
    pub dirs: Vec<String>,
    /// (absolute guest path, file on the host, resolved against the config's
    /// folder); read when the program loads.
    pub files: Vec<(String, PathBuf)>,
}

impl Parser {
    fn model(&self, v: &Value, path: &str) -> Parsed<FsModel> {
        let text = self.string(v, path)?;
        FsModel::parse(&text).ok_or_else(|| {
            self.err(
                path,
                format!(
                    "expected \"ext4\" (the default), \"xfs\", \"btrfs\" or \"posix\" (only what POSIX promises), found \"{}\"",
                    super::parse::shown_text(&text)
                ),
            )
        })
    }

    pub(super) fn disk(&self, v: &Value) -> Parsed<DiskConfig> {
        let m = self.object(v, "$.disk", &super::fields::DISK.names())?;
        let mut d = DiskConfig::default();
        if let Some(x) = m.get("model") {
            d.model = self.model(x, "$.disk.model")?;
        }
        if let Some(x) = m.get("commit_interval") {
            d.commit_interval_ns = Some(self.duration_value(x, "$.disk.commit_interval")?);
        }
        if let Some(x) = m.get("sector_bytes") {
            d.sector_bytes = self.uint(x, "$.disk.sector_bytes", SECTOR_BYTES_RANGE.0, SECTOR_BYTES_RANGE.1)?;
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
        if let Some(x) = m.get("capacity") {
            d.capacity = Some(self.bytes_value(x, "$.disk.capacity", CAPACITY_MIN, crate::disk::DISK_BYTES_MAX)?);
        }
        Ok(d)
    }

    /// An absolute guest path: starts with `/`, no `.` or `..` components.
    fn guest_path(&self, v: &Value, path: &str) -> Parsed<String> {
        let text = self.string(v, path)?;
        let ok = text.starts_with('/') && text.len() > 1 && text.split('/').skip(1).all(|c| !c.is_empty() && c != "." && c != ".." && c.len() <= crate::disk::NAME_BYTES_MAX);
        if !ok {
            return Err(self.err(path, format!("expected an absolute path on the node's disk like \"/data\" (no empty, \".\" or \"..\" parts), found \"{}\"", super::parse::shown_text(&text))));
        }
        Ok(text.trim_end_matches('/').to_string())
    }

    pub(super) fn node_disk(&self, v: &Value, path: &str) -> Parsed<NodeDisk> {
        let m = self.object(v, path, &super::fields::NODE_DISK.names())?;
        let mut d = NodeDisk::default();
        if let Some(x) = m.get("model") {
            d.model = Some(self.model(x, &format!("{path}.model"))?);
        }
        if let Some(x) = m.get("capacity") {
            d.capacity = Some(self.bytes_value(x, &format!("{path}.capacity"), CAPACITY_MIN, crate::disk::DISK_BYTES_MAX)?);
        }
        if let Some(x) = m.get("dirs") {
            let p = format!("{path}.dirs");
            let items = x.as_array().ok_or_else(|| self.err(&p, format!("expected an array of paths like [\"/data\"], found {}", super::parse::kind(x))))?;
            if items.len() > SEED_DIRS_MAX {
                return Err(self.err(&p, format!("expected at most {SEED_DIRS_MAX} folders, found {}", items.len())));
            }
            for (i, item) in items.iter().enumerate() {
                d.dirs.push(self.guest_path(item, &format!("{p}[{i}]"))?);
            }
        }
        if let Some(x) = m.get("files") {
            let p = format!("{path}.files");
            let map = x.as_object().ok_or_else(|| self.err(&p, format!("expected an object of guest path to host file, like {{\"/etc/app.conf\": \"app.conf\"}}, found {}", super::parse::kind(x))))?;
            if map.len() > SEED_FILES_MAX {
                return Err(self.err(&p, format!("expected at most {SEED_FILES_MAX} files, found {}", map.len())));
            }
            for (guest, host) in map {
                let gp = self.guest_path(&Value::String(guest.clone()), &format!("{p}.{guest}"))?;
                d.files.push((gp, self.rel_path(host, &format!("{p}.{guest}"))?));
            }
        }
        // A seeded file cannot be a folder that other seeds need: every
        // run would fail to seed it. (At most 1024 of each: a million
        // comparisons, once per config.)
        let under = |inner: &str, file: &str| {
            inner == file
                || inner
                    .strip_prefix(file)
                    .is_some_and(|rest| rest.starts_with('/'))
        };
        for (file, _) in &d.files {
            let blocked = d
                .dirs
                .iter()
                .map(|x| ("dirs", x))
                .chain(
                    d.files
                        .iter()
                        .map(|(x, _)| ("files", x))
                        .filter(|(_, x)| *x != file),
                )
                .find(|(_, x)| under(x, file));
            if let Some((field, other)) = blocked {
                let at = format!("{path}.files.{file}");
                return Err(self.err(&at, format!("{file} is seeded as a file, but {path}.{field} seeds {other}, which needs {file} to be a folder")));
            }
        }
        Ok(d)
    }
}
