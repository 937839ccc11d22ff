//! `faults`: which fault families a sweep draws, and at what rates.
use super::fields;
use super::parse::{Parsed, Parser};
use super::{NodeSpec, Span};
use serde_json::Value;

/// Fault rates. Every family is off unless configured.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FaultConfig {
    /// Each seed switches a random half of the configured families on.
    pub swarm: bool,
    /// No fault before a workload reports setup complete (as Antithesis
    /// does): the cluster forms undisturbed, and the faults are drawn from
    /// then on.
    pub after_setup: bool,
    pub crash: Option<CrashFaults>,
    pub fsync_eio: Option<FsyncEioFaults>,
    pub torn_writes: bool,
    pub pause: Option<TimedFaults>,
    pub clock_skew: Option<SkewFaults>,
    pub clock_jump: Option<JumpFaults>,
    pub partition: Option<PartitionFaults>,
    /// Reads that return flipped bits.
    pub corrupt_read: Option<MediaFaults>,
    /// Reads that hit a sector the medium cannot read (EIO until rewritten).
    pub latent_sector_error: Option<MediaFaults>,
    /// Writes whose sectors land on other sectors.
    pub misdirected_write: Option<MediaFaults>,
    /// Writes the drive acknowledges and never persists.
    pub lost_write: Option<MediaFaults>,
    /// Writes refused with EIO or ENOSPC before anything is written.
    pub write_error: Option<WriteErrorFaults>,
    /// Moments the node's disk has no free space.
    pub disk_full: Option<TimedFaults>,
}

/// `write_error`: each write of a targeted instance (to a path starting
/// with `path_prefix`, when set) fails with `probability`, with one of
/// `errors`, drawn from the `disk` stream.
#[derive(Clone, Debug, PartialEq)]
pub struct WriteErrorFaults {
    pub probability: f64,
    pub nodes: Vec<String>,
    pub path_prefix: Option<String>,
    /// Never empty, no repeats.
    pub errors: Vec<crate::errno::WriteErrno>,
}

/// A storage fault family: each read (or write) of a targeted instance is hit
/// with `probability`, drawn from the `disk` stream.
#[derive(Clone, Debug, PartialEq)]
pub struct MediaFaults {
    pub probability: f64,
    pub nodes: Vec<String>,
    /// A fault atlas: for each stretch of each file, one replica of a
    /// replicated node is never hit, so a correct replicated system can
    /// always recover the data from it (docs/faults.md).
    pub atlas: bool,
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
    /// Odds that a crash is a process kill (`kill -9`: the machine stays up
    /// and keeps every write in its page cache) rather than a power loss.
    pub kill: f64,
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

/// Bound and default of `faults.clock_skew.max_ppm`.
pub const SKEW_MAX_PPM_MAX: u64 = 900_000;
pub const SKEW_MAX_PPM_DEFAULT: u64 = 100_000;

impl Parser {
    pub(super) fn faults(&self, v: &Value, nodes: &[NodeSpec]) -> Parsed<FaultConfig> {
        let m = self.object(v, "$.faults", &fields::FAULTS.names())?;
        let mut f = FaultConfig::default();
        if let Some(x) = m.get("swarm") {
            f.swarm = self.bool(x, "$.faults.swarm")?;
        }
        if let Some(x) = m.get("after_setup") {
            f.after_setup = self.bool(x, "$.faults.after_setup")?;
        }
        if let Some(x) = m.get("torn_writes") {
            f.torn_writes = self.bool(x, "$.faults.torn_writes")?;
        }
        if let Some(x) = m.get("crash") {
            let p = "$.faults.crash";
            let c = self.object(x, p, &fields::CRASH.names())?;
            f.crash = Some(CrashFaults {
                rate: self.rate(c, p)?,
                restart_after: c.get("restart_after").map(|v| self.span(v, &format!("{p}.restart_after"))).transpose()?,
                during_disk_op: c.get("during_disk_op").map(|v| self.number(v, &format!("{p}.during_disk_op"), 0.0, 1.0)).transpose()?.unwrap_or(0.0),
                kill: c.get("kill").map(|v| self.number(v, &format!("{p}.kill"), 0.0, 1.0)).transpose()?.unwrap_or(0.0),
                nodes: self.targets(c, p, nodes)?,
            });
        }
        if let Some(x) = m.get("fsync_eio") {
            let p = "$.faults.fsync_eio";
            let c = self.object(x, p, &fields::FSYNC_EIO.names())?;
            let probability = match c.get("probability") {
                Some(v) => self.number(v, &format!("{p}.probability"), 0.0, 1.0)?,
                None => return Err(self.err(p, "missing field \"probability\" (the odds that one fsync fails)")),
            };
            f.fsync_eio = Some(FsyncEioFaults { probability, nodes: self.targets(c, p, nodes)? });
        }
        if let Some(x) = m.get("pause") {
            let p = "$.faults.pause";
            let c = self.object(x, p, &fields::PAUSE.names())?;
            let duration = self.duration_span(c, p, "like \"10ms-200ms\"")?;
            f.pause = Some(TimedFaults { rate: self.rate(c, p)?, duration, nodes: self.targets(c, p, nodes)? });
        }
        if let Some(x) = m.get("clock_skew") {
            let p = "$.faults.clock_skew";
            let c = self.object(x, p, &fields::CLOCK_SKEW.names())?;
            let duration = self.duration_span(c, p, "like \"10ms-200ms\"")?;
            let max_ppm = c.get("max_ppm").map(|v| self.uint(v, &format!("{p}.max_ppm"), 1, SKEW_MAX_PPM_MAX)).transpose()?.unwrap_or(SKEW_MAX_PPM_DEFAULT);
            f.clock_skew = Some(SkewFaults { rate: self.rate(c, p)?, duration, max_ppm, nodes: self.targets(c, p, nodes)? });
        }
        if let Some(x) = m.get("clock_jump") {
            let p = "$.faults.clock_jump";
            let c = self.object(x, p, &fields::CLOCK_JUMP.names())?;
            let max_ns = match c.get("max") {
                Some(v) => self.duration_value(v, &format!("{p}.max"))?,
                None => return Err(self.err(p, "missing field \"max\" (the largest jump, like \"10s\")")),
            };
            f.clock_jump = Some(JumpFaults { rate: self.rate(c, p)?, max_ns, nodes: self.targets(c, p, nodes)? });
        }
        if let Some(x) = m.get("partition") {
            let p = "$.faults.partition";
            let c = self.object(x, p, &fields::PARTITION.names())?;
            let duration = self.duration_span(c, p, "how long a partition lasts, like \"100ms-2s\"")?;
            let one_way = c.get("one_way").map(|v| self.number(v, &format!("{p}.one_way"), 0.0, 1.0)).transpose()?.unwrap_or(0.0);
            f.partition = Some(PartitionFaults { rate: self.rate(c, p)?, duration, one_way, nodes: self.targets(c, p, nodes)? });
        }
        for (key, slot) in [
            ("corrupt_read", &mut f.corrupt_read),
            ("latent_sector_error", &mut f.latent_sector_error),
            ("misdirected_write", &mut f.misdirected_write),
            ("lost_write", &mut f.lost_write),
        ] {
            let Some(x) = m.get(key) else { continue };
            let p = format!("$.faults.{key}");
            let op = if key.ends_with("write") { "write" } else { "read" };
            let table = if op == "write" { &fields::MEDIA_WRITE } else { &fields::MEDIA_READ };
            let c = self.object(x, &p, &table.names())?;
            let probability = match c.get("probability") {
                Some(v) => self.number(v, &format!("{p}.probability"), 0.0, 1.0)?,
                None => return Err(self.err(&p, format!("missing field \"probability\" (the odds that one {op} is hit, like 0.001)"))),
            };
            let atlas = c.get("atlas").map(|v| self.bool(v, &format!("{p}.atlas"))).transpose()?.unwrap_or(false);
            *slot = Some(MediaFaults { probability, nodes: self.targets(c, &p, nodes)?, atlas });
        }
        if let Some(x) = m.get("write_error") {
            let p = "$.faults.write_error";
            let c = self.object(x, p, &fields::WRITE_ERROR.names())?;
            let probability = match c.get("probability") {
                Some(v) => self.number(v, &format!("{p}.probability"), 0.0, 1.0)?,
                None => return Err(self.err(p, "missing field \"probability\" (the odds that one write fails, like 0.01)")),
            };
            let path_prefix = match c.get("path_prefix") {
                Some(v) => {
                    let text = self.string(v, &format!("{p}.path_prefix"))?;
                    if !text.starts_with('/') {
                        return Err(self.err(&format!("{p}.path_prefix"), format!("expected the start of an absolute path on the node's disk, like \"/data/wal\", found \"{}\"", super::parse::shown_text(&text))));
                    }
                    Some(text)
                }
                None => None,
            };
            let errors = match c.get("errors") {
                Some(v) => {
                    let ep = format!("{p}.errors");
                    let names = self.strings(v, &ep)?;
                    let mut errors = Vec::new();
                    for (i, name) in names.iter().enumerate() {
                        let e = crate::errno::WriteErrno::parse(name).ok_or_else(|| self.err(&format!("{ep}[{i}]"), format!("expected \"EIO\" or \"ENOSPC\", found \"{}\"", super::parse::shown_text(name))))?;
                        if !errors.contains(&e) {
                            errors.push(e);
                        }
                    }
                    if errors.is_empty() {
                        return Err(self.err(&ep, "expected at least one of \"EIO\" and \"ENOSPC\", found an empty array"));
                    }
                    errors
                }
                None => vec![crate::errno::WriteErrno::Eio, crate::errno::WriteErrno::Enospc],
            };
            f.write_error = Some(WriteErrorFaults { probability, nodes: self.targets(c, p, nodes)?, path_prefix, errors });
        }
        if let Some(x) = m.get("disk_full") {
            let p = "$.faults.disk_full";
            let c = self.object(x, p, &fields::DISK_FULL.names())?;
            let duration = self.duration_span(c, p, "how long the disk stays full, like \"10ms-1s\"")?;
            f.disk_full = Some(TimedFaults { rate: self.rate(c, p)?, duration, nodes: self.targets(c, p, nodes)? });
        }
        if f.torn_writes && f.crash.is_none() {
            // Torn writes only shape what a drawn crash keeps; without the
            // crash family nothing is ever torn, which is never what was meant.
            return Err(self.err(
                "$.faults.torn_writes",
                "torn writes only change what a crash keeps, and no crash is configured: add \"crash\": {\"rate\": ...} to faults, or remove torn_writes",
            ));
        }
        Ok(f)
    }
}
