//! The schedule: what a run is a function of, besides the program.
//!
//! `seed` names the run. `faults`, when present, are exactly the faults to
//! apply (a replay or a shrunk schedule): nothing is drawn from the config's
//! rates. `branches` re-key named streams from a virtual time on (explore and
//! cause); they chain, so a child of a child branches again.
//!
//! `ScheduleFile` is the versioned on-disk form (`faults.json`), documented in
//! docs/schedule.md. A file is checked against the config when read: a fault
//! naming a node instance the config does not have is an error, never ignored.
use crate::config::Config;
use crate::streams::Stream;
use serde::{Deserialize, Serialize};

pub const SCHEDULE_VERSION: u32 = 1;
/// Bound on faults and branches in one schedule.
pub const FAULTS_MAX: usize = 100_000;
pub const BRANCHES_MAX: usize = 1_000;
/// Bound on a clock skew fault's rate: a clock at most 10 times true speed.
pub const SKEW_PPM_MAX: u64 = 10_000_000;

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Schedule {
    pub seed: u64,
    pub faults: Option<Vec<Fault>>,
    pub branches: Vec<Branch>,
    /// This run shares a prefix with another seed's (`run -from`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefix: Option<Prefix>,
}

/// A run that is seed `seed`'s run until the first scheduler step at or
/// after `at_ns`, where every stream is re-keyed by the schedule's own seed:
/// a sweep from one snapshot (`seedfall run -from`), recorded so a replay
/// needs no snapshot. `setup`: `at_ns` is the first nanosecond after the
/// workload reported setup complete in that run (`-from setup`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Prefix {
    pub seed: u64,
    pub at_ns: u64,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub setup: bool,
}

impl Schedule {
    pub fn seed(seed: u64) -> Schedule {
        Schedule { seed, faults: None, branches: Vec::new(), prefix: None }
    }

    /// The seed the world's streams start from: the prefix's, if any.
    pub fn world_seed(&self) -> u64 {
        self.prefix.map_or(self.seed, |p| p.seed)
    }

    /// Every branch the run applies, in order: the prefix's re-key of every
    /// stream first (by this seed), then the schedule's own, stably by time.
    pub fn applied_branches(&self) -> Vec<Branch> {
        let mut all = Vec::with_capacity(self.branches.len() + 1);
        if let Some(p) = self.prefix {
            all.push(Branch { at_ns: p.at_ns, streams: Stream::ALL.iter().map(|s| s.name().to_string()).collect(), key: self.seed });
        }
        all.extend(self.branches.iter().cloned());
        all.sort_by_key(|b| b.at_ns); // stable: listing order breaks ties
        all
    }
}

/// A fault applied to a run. Later sections add crashes, partitions, disk faults.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Fault {
    /// Power loss on `node` at `at_ns`, or, with `disk_op`, inside its disk
    /// operation number `disk_op` (counted from 1 over the disk's life).
    /// Unsynced data is lost (torn at sector granularity when `torn`); the
    /// node restarts `restart_after_ns` later, or never. With `kill`, only
    /// the process dies (`kill -9`): the machine stays up, so its page cache,
    /// every write the process made, survives (and stays unsynced).
    Crash {
        node: String,
        at_ns: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        disk_op: Option<u64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        restart_after_ns: Option<u64>,
        #[serde(default)]
        torn: bool,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        kill: bool,
    },
    /// The node's fsync number `sync` (from 1) fails with EIO (fsyncgate).
    FsyncEio { node: String, sync: u64, at_ns: u64 },
    /// The node makes no progress from `at_ns` for `duration_ns`.
    Pause { node: String, at_ns: u64, duration_ns: u64 },
    /// The node's clocks run at `rate_ppm` millionths of true speed for a while.
    ClockSkew { node: String, at_ns: u64, rate_ppm: u64, duration_ns: u64 },
    /// The node's realtime clock steps by `delta_ns` (monotonic is unaffected).
    ClockJump { node: String, at_ns: u64, delta_ns: i64 },
    /// The `call`-th evaluation (from 1) of buggify site `site` on `node` fired.
    Buggify { node: String, site: String, call: u64, at_ns: u64 },
    /// Cuts the network between `node` and `peers` (every other instance when
    /// empty) for `duration_ns`; `direction` says which way traffic stops.
    Partition {
        node: String,
        at_ns: u64,
        duration_ns: u64,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        peers: Vec<String>,
        #[serde(default, skip_serializing_if = "Direction::is_both")]
        direction: Direction,
    },
    /// The node's read number `read` (from 1, over the disk's life) returns
    /// data with bit `bit` of byte `byte` flipped; the disk is unharmed.
    CorruptRead { node: String, read: u64, at_ns: u64, byte: u64, bit: u8, #[serde(default)] path: String },
    /// The node's read number `read` hits a latent sector error: `sector` of
    /// the file read fails with EIO until written again.
    LatentSectorError { node: String, read: u64, at_ns: u64, sector: u64, #[serde(default)] path: String },
    /// The node's write number `write` lands, when written out, on sector
    /// `to_sector` of its file instead of where it was meant to go.
    MisdirectedWrite { node: String, write: u64, at_ns: u64, to_sector: u64, #[serde(default)] path: String },
    /// The node's write number `write` is acknowledged and never persisted.
    LostWrite { node: String, write: u64, at_ns: u64, #[serde(default)] path: String },
    /// The node's write number `write` fails with `errno` before anything
    /// is written.
    WriteError { node: String, write: u64, at_ns: u64, errno: WriteErrno, #[serde(default)] path: String },
    /// The node's disk has no free space from `at_ns` for `duration_ns`.
    DiskFull { node: String, at_ns: u64, duration_ns: u64 },
}

pub use crate::errno::WriteErrno;

/// Which way a partition stops traffic, seen from its node.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    #[default]
    Both,
    /// The node's packets do not reach the peers; theirs reach it.
    Outbound,
    /// The peers' packets do not reach the node; its packets reach them.
    Inbound,
}

impl Direction {
    pub fn is_both(&self) -> bool {
        *self == Direction::Both
    }

    /// A drawn partition's direction: both ways unless `one_way`, then
    /// outbound or inbound by `coin` (a draw below 2).
    pub fn drawn(one_way: bool, coin: u64) -> Direction {
        match (one_way, coin) {
            (false, _) => Direction::Both,
            (true, 0) => Direction::Outbound,
            (true, _) => Direction::Inbound,
        }
    }
}

impl Fault {
    pub fn node(&self) -> &str {
        match self {
            Fault::Crash { node, .. }
            | Fault::FsyncEio { node, .. }
            | Fault::Pause { node, .. }
            | Fault::ClockSkew { node, .. }
            | Fault::ClockJump { node, .. }
            | Fault::Buggify { node, .. }
            | Fault::Partition { node, .. }
            | Fault::CorruptRead { node, .. }
            | Fault::LatentSectorError { node, .. }
            | Fault::MisdirectedWrite { node, .. }
            | Fault::LostWrite { node, .. }
            | Fault::WriteError { node, .. }
            | Fault::DiskFull { node, .. } => node,
        }
    }
    pub fn at_ns(&self) -> u64 {
        match self {
            Fault::Crash { at_ns, .. }
            | Fault::FsyncEio { at_ns, .. }
            | Fault::Pause { at_ns, .. }
            | Fault::ClockSkew { at_ns, .. }
            | Fault::ClockJump { at_ns, .. }
            | Fault::Buggify { at_ns, .. }
            | Fault::Partition { at_ns, .. }
            | Fault::CorruptRead { at_ns, .. }
            | Fault::LatentSectorError { at_ns, .. }
            | Fault::MisdirectedWrite { at_ns, .. }
            | Fault::LostWrite { at_ns, .. }
            | Fault::WriteError { at_ns, .. }
            | Fault::DiskFull { at_ns, .. } => *at_ns,
        }
    }
    /// The same fault, stamped with the time it was applied.
    pub fn at(mut self, now_ns: u64) -> Fault {
        match &mut self {
            Fault::Crash { at_ns, .. }
            | Fault::FsyncEio { at_ns, .. }
            | Fault::Pause { at_ns, .. }
            | Fault::ClockSkew { at_ns, .. }
            | Fault::ClockJump { at_ns, .. }
            | Fault::Buggify { at_ns, .. }
            | Fault::Partition { at_ns, .. }
            | Fault::CorruptRead { at_ns, .. }
            | Fault::LatentSectorError { at_ns, .. }
            | Fault::MisdirectedWrite { at_ns, .. }
            | Fault::LostWrite { at_ns, .. }
            | Fault::WriteError { at_ns, .. }
            | Fault::DiskFull { at_ns, .. } => *at_ns = now_ns,
        }
        self
    }

    /// The family name, as signals and docs call it.
    pub fn kind(&self) -> &'static str {
        match self {
            Fault::Crash { .. } => "crash",
            Fault::FsyncEio { .. } => "fsync_eio",
            Fault::Pause { .. } => "pause",
            Fault::ClockSkew { .. } => "clock_skew",
            Fault::ClockJump { .. } => "clock_jump",
            Fault::Buggify { .. } => "buggify",
            Fault::Partition { .. } => "partition",
            Fault::CorruptRead { .. } => "corrupt_read",
            Fault::LatentSectorError { .. } => "latent_sector_error",
            Fault::MisdirectedWrite { .. } => "misdirected_write",
            Fault::LostWrite { .. } => "lost_write",
            Fault::WriteError { .. } => "write_error",
            Fault::DiskFull { .. } => "disk_full",
        }
    }
    /// `crash server during disk op #56, restart at 791.388ms`
    pub fn describe(&self) -> String {
        use crate::vtime::VTime;
        match self {
            Fault::Crash { node, at_ns, disk_op, restart_after_ns, torn, kill } => {
                let during = disk_op.map(|n| format!(" during disk op #{n}")).unwrap_or_default();
                let torn = if *torn && !*kill { ", torn writes" } else { "" };
                let verb = if *kill { "kill" } else { "crash" };
                let restart = match restart_after_ns {
                    Some(d) => format!(", restart at {}", VTime(at_ns + d)),
                    None => ", no restart".into(),
                };
                format!("{verb} {node}{during}{torn}{restart}")
            }
            Fault::FsyncEio { node, sync, .. } => format!("fsync EIO on {node} (fsync #{sync})"),
            Fault::Pause { node, duration_ns, .. } => format!("pause {node} for {}", VTime(*duration_ns)),
            Fault::ClockSkew { node, rate_ppm, duration_ns, .. } => {
                let pct = (*rate_ppm as f64 - 1e6) / 1e4;
                format!("clock skew {node} {pct:+.2}% for {}", VTime(*duration_ns))
            }
            Fault::ClockJump { node, delta_ns, .. } => {
                let sign = if *delta_ns < 0 { "-" } else { "+" };
                format!("clock jump {node} {sign}{}", VTime(delta_ns.unsigned_abs()))
            }
            Fault::Buggify { node, site, call, .. } => format!("buggify {node} \"{site}\" (call {call})"),
            Fault::Partition { node, duration_ns, peers, direction, .. } => {
                let others = if peers.is_empty() { "every other node".to_string() } else { peers.join(", ") };
                let how = match direction {
                    Direction::Both => format!("partition {node} from {others}"),
                    Direction::Outbound => format!("one-way partition: {node} cannot reach {others}"),
                    Direction::Inbound => format!("one-way partition: {others} cannot reach {node}"),
                };
                format!("{how} for {}", VTime(*duration_ns))
            }
            Fault::CorruptRead { node, read, byte, bit, path, .. } => format!("corrupt read on {node} (read #{read} of {}: bit {bit} of byte {byte} flipped)", shown(path)),
            Fault::LatentSectorError { node, read, sector, path, .. } => format!("latent sector error on {node} (read #{read}: sector {sector} of {} unreadable until rewritten)", shown(path)),
            Fault::MisdirectedWrite { node, write, to_sector, path, .. } => format!("misdirected write on {node} (write #{write} to {} lands on sector {to_sector})", shown(path)),
            Fault::LostWrite { node, write, path, .. } => format!("lost write on {node} (write #{write} to {} never persisted)", shown(path)),
            Fault::WriteError { node, write, errno, path, .. } => format!("write error on {node} (write #{write} to {} refused with {})", shown(path), errno.name()),
            Fault::DiskFull { node, duration_ns, .. } => format!("disk full on {node} for {}", VTime(*duration_ns)),
        }
    }
}

fn shown(path: &str) -> &str {
    if path.is_empty() { "a file" } else { path }
}

/// Re-key `streams` at the first scheduler step at or after `at_ns`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Branch {
    pub at_ns: u64,
    pub streams: Vec<String>,
    pub key: u64,
}

impl Branch {
    pub fn parsed_streams(&self) -> Vec<Stream> {
        self.streams.iter().filter_map(|s| Stream::from_name(s)).collect()
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScheduleFile {
    pub version: u32,
    pub config: String,
    pub seed: u64,
    pub faults: Vec<Fault>,
    #[serde(default)]
    pub branches: Vec<Branch>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefix: Option<Prefix>,
}

impl ScheduleFile {
    pub fn new(config: &str, schedule: &Schedule, applied: &[Fault]) -> ScheduleFile {
        ScheduleFile {
            version: SCHEDULE_VERSION,
            config: config.to_string(),
            seed: schedule.seed,
            faults: applied.to_vec(),
            branches: schedule.branches.clone(),
            prefix: schedule.prefix,
        }
    }

    pub fn schedule(&self) -> Schedule {
        Schedule { seed: self.seed, faults: Some(self.faults.clone()), branches: self.branches.clone(), prefix: self.prefix }
    }

    /// Parses and checks a schedule file against `config`.
    pub fn parse(text: &str, config: &Config) -> Result<ScheduleFile, String> {
        let file: ScheduleFile = serde_json::from_str(text).map_err(|e| format!("not a schedule file: {e}"))?;
        if file.version != SCHEDULE_VERSION {
            return Err(format!("schedule version {} is not supported (this seedfall reads {SCHEDULE_VERSION})", file.version));
        }
        check_fits(&file.faults, &file.branches, config)?;
        if let Some(p) = file.prefix {
            if p.at_ns > crate::vtime::DURATION_MAX.nanos() {
                return Err(format!("prefix.at_ns {} is past the longest run (1000h)", p.at_ns));
            }
        }
        Ok(file)
    }
}

/// Every time and length of a fault within `DURATION_MAX` (so no schedule
/// can overflow the clock), and each other number within its meaning.
fn check_bounds(f: &Fault, sector_bytes: u64) -> Result<(), String> {
    let sectors = crate::disk::DISK_BYTES_MAX / sector_bytes;
    let max = crate::vtime::DURATION_MAX.nanos();
    let within = |what: &str, ns: u64| if ns > max { Err(format!("{what} {ns} is over the longest duration a run may have (1000h = {max} ns)")) } else { Ok(()) };
    within("at_ns", f.at_ns())?;
    match f {
        Fault::Crash { restart_after_ns: Some(d), .. } => within("restart_after_ns", *d),
        Fault::Pause { duration_ns, .. } | Fault::Partition { duration_ns, .. } | Fault::DiskFull { duration_ns, .. } => within("duration_ns", *duration_ns),
        Fault::ClockSkew { rate_ppm, duration_ns, .. } => {
            within("duration_ns", *duration_ns)?;
            if !(1..=SKEW_PPM_MAX).contains(rate_ppm) {
                return Err(format!("rate_ppm {rate_ppm} is outside 1..={SKEW_PPM_MAX} (a clock at most 10 times true speed)"));
            }
            Ok(())
        }
        Fault::ClockJump { delta_ns, .. } => within("delta_ns", delta_ns.unsigned_abs()),
        Fault::CorruptRead { bit, byte, .. } => {
            if *bit > 7 || *byte >= 1 << 32 {
                return Err(format!("bit {bit} of byte {byte} is not a bit of one read"));
            }
            Ok(())
        }
        Fault::MisdirectedWrite { to_sector: s, .. } | Fault::LatentSectorError { sector: s, .. } if *s >= sectors => {
            Err(format!("sector {s} is past the last sector a disk can have ({} of {sector_bytes} bytes)", sectors - 1))
        }
        _ => Ok(()),
    }
}

/// Checks that a fault list and branch list fit `config`: within bounds, every
/// fault names a node instance the config has, every branch re-keys known
/// streams. Schedule files, pins and corpus entries all carry these lists.
pub fn check_fits(faults: &[Fault], branches: &[Branch], config: &Config) -> Result<(), String> {
    if faults.len() > FAULTS_MAX || branches.len() > BRANCHES_MAX {
        return Err(format!("more than {FAULTS_MAX} faults or {BRANCHES_MAX} branches"));
    }
    let instances: Vec<String> = config.instances().into_iter().map(|(_, n)| n).collect();
    for (i, f) in faults.iter().enumerate() {
        if !instances.iter().any(|n| n == f.node()) {
            return Err(format!(
                "faults[{i}] ({}) names node instance \"{}\", which {} does not have (it has: {})",
                f.describe(),
                f.node(),
                config.path.display(),
                instances.join(", ")
            ));
        }
        if let Fault::Partition { peers, .. } = f {
            if let Some(p) = peers.iter().find(|p| !instances.contains(p)) {
                return Err(format!("faults[{i}] ({}) cuts off node instance \"{p}\", which {} does not have (it has: {})", f.describe(), config.path.display(), instances.join(", ")));
            }
        }
    }
    for (i, f) in faults.iter().enumerate() {
        check_bounds(f, config.disk.sector_bytes).map_err(|why| format!("faults[{i}] ({}): {why}", f.kind()))?;
    }
    for (i, b) in branches.iter().enumerate() {
        if b.at_ns > crate::vtime::DURATION_MAX.nanos() {
            return Err(format!("branches[{i}]: at_ns {} is past the longest run (1000h)", b.at_ns));
        }
        if b.streams.is_empty() {
            return Err(format!("branches[{i}] re-keys no stream"));
        }
        for s in &b.streams {
            if Stream::from_name(s).is_none() {
                let names: Vec<&str> = Stream::ALL.iter().map(|s| s.name()).collect();
                return Err(format!("branches[{i}] names stream \"{s}\"; streams are {}", names.join(", ")));
            }
        }
    }
    Ok(())
}
