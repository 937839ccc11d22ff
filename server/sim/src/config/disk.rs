//! `disk`: the simulated disks' geometry and timing.
use super::parse::{Parsed, Parser};
use serde_json::Value;

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

const DISK_FIELDS: &[&str] = &["sector_bytes", "io_latency", "fsync_latency"];

impl Parser {
    pub(super) fn disk(&self, v: &Value) -> Parsed<DiskConfig> {
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
}
