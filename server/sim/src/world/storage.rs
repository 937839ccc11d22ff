//! The world's side of the disks: what happens around each disk operation.
//!
//! A crash landing inside an operation, fsync errors, and the storage
//! faults of the medium (corrupt reads, latent sector errors, misdirected
//! and lost writes): in a sweep each is drawn from the `disk` stream at the
//! operation it hits (`faults` for fsync errors); in a replay it is taken
//! exactly from the schedule, keyed by the operation's number. Every one
//! applied is recorded. Also the trace events of names and sizes changing.
use crate::disk::Ino;
use crate::schedule::Fault;
use crate::streams::Stream;
use crate::trace::{DiskOp, EventKind};
use crate::vtime::VTime;
use crate::errno::{self, Errno};
use super::World;
use std::collections::BTreeMap;

/// A fault atlas spares one replica per stretch of this many sectors.
pub const ATLAS_CHUNK_SECTORS: u64 = 8;

/// One storage fault family as this run draws it.
#[derive(Clone, Debug, Default)]
pub struct MediaRate {
    /// The family is on for this run (swarm mode may switch it off).
    pub on: bool,
    pub probability: f64,
    /// Per node instance: a target of the family.
    pub targets: Vec<bool>,
    pub atlas: bool,
}

#[derive(Clone, Debug, Default)]
pub struct MediaFaultState {
    pub corrupt_read: MediaRate,
    pub latent_sector_error: MediaRate,
    pub misdirected_write: MediaRate,
    pub lost_write: MediaRate,
    pub write_error: MediaRate,
    /// `write_error`: only writes to paths starting with this are hit.
    pub write_error_prefix: Option<String>,
    /// `write_error`: the errors a hit write fails with (never empty).
    pub write_errnos: Vec<crate::errno::WriteErrno>,
    /// Schedule mode: faults keyed by (node, read number) and (node, write number).
    pub at_read: BTreeMap<(usize, u64), Fault>,
    pub at_write: BTreeMap<(usize, u64), Fault>,
    /// Per node instance: (replica index, replicas of its node).
    pub replicas: Vec<(u32, u32)>,
}

impl World {
    /// Called after a host call that did disk operations `(before, after]`:
    /// a crash armed for this node, or scheduled at one of those op numbers,
    /// happens now, inside that operation.
    /// After node `idx` used its disk: the run's memory against its limit.
    pub fn check_memory(&mut self, idx: usize) {
        let disks: u64 = self.disks.iter().map(|d| d.held_bytes()).sum();
        if let Err(message) = self.meter.disks_now(&self.nodes[idx].name, self.disks[idx].held_bytes(), disks) {
            if self.fault.is_none() {
                self.fault = Some(message);
                self.fault_node = Some(idx);
            }
        }
    }

    pub fn after_disk_ops(&mut self, node_idx: usize, before: u64, after: u64) {
        if !self.nodes[node_idx].alive() {
            return;
        }
        self.note_crash_states(node_idx);
        let node = self.nodes[node_idx].name.clone();
        if let Some((restart_after_ns, kill)) = self.faults.crash_armed.remove(&node_idx) {
            let torn = self.faults.families.torn_writes && !kill;
            let fault = Fault::Crash { node, at_ns: self.now.nanos(), disk_op: Some(before + 1), restart_after_ns, torn, kill };
            return self.crash(node_idx, fault);
        }
        let due = self.faults.crash_at_op.iter().position(|f| {
            matches!(f, Fault::Crash { node: n, disk_op: Some(op), .. } if *n == node && *op > before && *op <= after)
        });
        if let Some(i) = due {
            let planned = self.faults.crash_at_op.remove(i);
            let fault = planned.at(self.now.nanos());
            self.crash(node_idx, fault);
        }
    }

    /// With `RunOptions::crash_states`: every tree a crash of the node's disk
    /// now could leave. Called wherever a crash can land: after each host
    /// call that touched the disk, before an fsync takes effect, and at the
    /// start and end of the run.
    pub fn note_crash_states(&mut self, node_idx: usize) {
        if let Some(states) = self.crash_states.as_mut() {
            self.disks[node_idx].crash_states(self.now, &mut states[node_idx]);
        }
    }

    /// fsync of `ino` on a node's disk, deciding whether it fails with EIO.
    pub fn fsync(&mut self, node_idx: usize, ino: crate::disk::Ino) -> Result<(), crate::errno::Errno> {
        // A crash during the sync op happens before the sync takes effect.
        let ops = self.disks[node_idx].ops;
        self.after_disk_ops(node_idx, ops, ops + 1);
        if !self.nodes[node_idx].alive() {
            self.disks[node_idx].ops += 1;
            return Err(crate::errno::IO);
        }
        let sync = self.disks[node_idx].syncs + 1;
        let fail = if self.faults_planned.is_some() {
            self.faults.eio_at_sync.contains(&(node_idx, sync))
        } else {
            self.faults.families.fsync_eio
                && !self.faults.waiting_setup
                && self.faults.eio_targets.get(node_idx).copied().unwrap_or(false)
                && self.streams.chance(Stream::Faults, self.faults.eio_probability)
        };
        if fail {
            let fault = Fault::FsyncEio { node: self.nodes[node_idx].name.clone(), sync, at_ns: self.now.nanos() };
            self.record(Some(node_idx), EventKind::Fault { fault: fault.clone() });
            self.faults_applied.push(fault);
        }
        let now = self.now;
        let r = self.disks[node_idx].sync(ino, fail, now);
        let (path, dir) = (self.disks[node_idx].path_of(ino), self.disks[node_idx].inode(ino).is_ok_and(|i| i.is_dir()));
        self.record(Some(node_idx), EventKind::Fsync { ok: r.is_ok(), path, dir });
        r
    }

    /// Virtual time one disk read or write takes, from `disklatency`.
    pub fn io_latency(&mut self) -> u64 {
        let mean = self.faults.io_latency_ns;
        if mean == 0 {
            return 0;
        }
        mean / 2 + self.streams.below(Stream::DiskLatency, mean + 1)
    }

    pub fn fsync_latency(&mut self) -> u64 {
        let mean = self.faults.fsync_latency_ns;
        if mean == 0 {
            return 0;
        }
        mean / 2 + self.streams.below(Stream::DiskLatency, mean + 1)
    }

    /// A change of names or sizes, in the trace.
    pub fn disk_event(&mut self, node_idx: usize, op: DiskOp, path: String, to: Option<String>, size: Option<u64>) {
        assert!(self.nodes[node_idx].alive(), "{} changed its disk after it crashed", self.nodes[node_idx].name);
        self.record(Some(node_idx), EventKind::Disk { op, path, to, size });
    }

    fn applied(&mut self, node_idx: usize, fault: Fault) {
        self.record(Some(node_idx), EventKind::Fault { fault: fault.clone() });
        self.faults_applied.push(fault);
    }

    /// Rates mode: whether `family` can hit this node at all. Nothing is
    /// drawn for a family that cannot, so the `disk` stream of a run without
    /// storage faults is what it always was.
    fn media_on(&self, node_idx: usize, family: fn(&MediaFaultState) -> &MediaRate) -> bool {
        let rate = family(&self.faults.media);
        self.faults_planned.is_none() && !self.faults.waiting_setup && rate.on && rate.probability > 0.0 && rate.targets.get(node_idx).copied().unwrap_or(false)
    }

    /// Rates mode: whether `family` hits this operation of the node, on the
    /// file's `sector` (a fault atlas spares one replica per stretch).
    fn draw_media(&mut self, node_idx: usize, family: fn(&MediaFaultState) -> &MediaRate, path: &str, sector: u64) -> bool {
        if !self.media_on(node_idx, family) {
            return false;
        }
        let rate = family(&self.faults.media);
        if rate.atlas && self.atlas_spares(node_idx, path, sector) {
            return false;
        }
        self.streams.chance(Stream::Disk, rate.probability)
    }

    /// The replica of a replicated node that a fault atlas keeps clean for
    /// this stretch of this file: each stretch has exactly one.
    pub fn atlas_spares(&self, node_idx: usize, path: &str, sector: u64) -> bool {
        let (replica, replicas) = self.faults.media.replicas.get(node_idx).copied().unwrap_or((0, 1));
        if replicas < 2 {
            return false;
        }
        let mut h = crate::hash::Fnv1a::new();
        h.write(path.as_bytes());
        h.write_u64(sector / ATLAS_CHUNK_SECTORS);
        h.value() % u64::from(replicas) == u64::from(replica)
    }

    /// A read of file data, with the medium's faults: a latent sector error
    /// makes it (and later reads of that sector) fail with EIO; a corrupt
    /// read flips one bit of what it returns.
    pub fn disk_read(&mut self, node_idx: usize, ino: Ino, offset: u64, buf: &mut [u8]) -> Result<usize, Errno> {
        assert!(self.nodes[node_idx].alive(), "{} read its disk after it crashed", self.nodes[node_idx].name);
        let read = self.disks[node_idx].reads + 1;
        let size = self.disks[node_idx].inode(ino)?.size();
        let wanted = (buf.len() as u64).min(size.saturating_sub(offset));
        let planned = self.faults.media.at_read.remove(&(node_idx, read));
        let now = self.now.nanos();
        if let Some((first, last)) = self.disks[node_idx].sectors_of(offset, wanted) {
            let path = self.disks[node_idx].path_of(ino);
            let lse = match planned.clone() {
                Some(f @ Fault::LatentSectorError { .. }) => Some(f),
                Some(_) => None,
                None if self.media_on(node_idx, |m| &m.latent_sector_error) => {
                    let sector = first + self.streams.below(Stream::Disk, last - first + 1);
                    self.draw_media(node_idx, |m| &m.latent_sector_error, &path, sector)
                        .then(|| Fault::LatentSectorError { node: self.nodes[node_idx].name.clone(), read, at_ns: now, sector, path: path.clone() })
                }
                None => None,
            };
            if let Some(f) = lse {
                if let Fault::LatentSectorError { sector, .. } = &f {
                    self.disks[node_idx].mark_bad(ino, *sector)?;
                }
                self.applied(node_idx, f.at(now));
            }
        }
        let n = self.disks[node_idx].read_at(ino, offset, buf)?;
        if n == 0 {
            return Ok(0);
        }
        let flip = match planned {
            Some(Fault::CorruptRead { byte, bit, .. }) if (byte as usize) < n => Some((byte, bit)),
            Some(_) => None,
            None if self.media_on(node_idx, |m| &m.corrupt_read) => {
                let byte = self.streams.below(Stream::Disk, n as u64);
                let sector = (offset + byte) / self.disks[node_idx].sector_bytes;
                let path = self.disks[node_idx].path_of(ino);
                self.draw_media(node_idx, |m| &m.corrupt_read, &path, sector).then(|| (byte, self.streams.below(Stream::Disk, 8) as u8))
            }
            None => None,
        };
        if let Some((byte, bit)) = flip {
            buf[byte as usize] ^= 1 << bit;
            let fault = Fault::CorruptRead { node: self.nodes[node_idx].name.clone(), read, at_ns: now, byte, bit, path: self.disks[node_idx].path_of(ino) };
            self.applied(node_idx, fault);
        }
        Ok(n)
    }

    /// A write of file data, with the medium's faults: a lost write is
    /// acknowledged and never persisted; a misdirected write lands on
    /// another sector of the file when it is written out.
    pub fn disk_write(&mut self, node_idx: usize, ino: Ino, offset: u64, data: &[u8], now: VTime) -> Result<usize, Errno> {
        // A crash inside a host call ends the node when the call returns: nothing after it may reach the disk.
        assert!(self.nodes[node_idx].alive(), "{} wrote to its disk after it crashed", self.nodes[node_idx].name);
        let write = self.disks[node_idx].writes + 1;
        if let Some(errno) = self.write_error(node_idx, ino, write, now) {
            return Err(errno);
        }
        let n = match self.disks[node_idx].write_at(ino, offset, data, now) {
            Err(e) if e == errno::NOSPC => {
                self.no_space(node_idx, "write", ino, write, data.len() as u64, 0);
                return Err(e);
            }
            r => r?,
        };
        if n < data.len() {
            self.no_space(node_idx, "write", ino, write, data.len() as u64, n as u64);
        }
        let planned = self.faults.media.at_write.remove(&(node_idx, write));
        let Some((first, last)) = self.disks[node_idx].sectors_of(offset, n as u64) else { return Ok(n) };
        let path = self.disks[node_idx].path_of(ino);
        let node = self.nodes[node_idx].name.clone();
        let at_ns = now.nanos();
        let fault = match planned {
            Some(f) => Some(f),
            None => {
                if self.draw_media(node_idx, |m| &m.lost_write, &path, first) {
                    Some(Fault::LostWrite { node, write, at_ns, path })
                } else if self.draw_media(node_idx, |m| &m.misdirected_write, &path, first) {
                    // Another sector of the file, or the one past its end when it has one.
                    let sectors = self.disks[node_idx].file_sectors(ino);
                    let to_sector = if sectors <= 1 {
                        first + 1
                    } else {
                        let r = self.streams.below(Stream::Disk, sectors - 1);
                        if r < first { r } else { r + 1 }
                    };
                    Some(Fault::MisdirectedWrite { node, write, at_ns, to_sector, path })
                } else {
                    None
                }
            }
        };
        match &fault {
            Some(Fault::LostWrite { .. }) => self.disks[node_idx].lose_write(ino, first, last)?,
            Some(Fault::MisdirectedWrite { to_sector, .. }) => self.disks[node_idx].misdirect(ino, first, last, *to_sector)?,
            _ => {}
        }
        if let Some(f) = fault {
            self.applied(node_idx, f.at(at_ns));
        }
        Ok(n)
    }

    /// A `write_error` fault on the node's write number `write`, if one hits
    /// it (taken from the schedule, or drawn from the `disk` stream): the
    /// write is refused before anything is written, and still counts as a
    /// write.
    fn write_error(&mut self, node_idx: usize, ino: Ino, write: u64, now: VTime) -> Option<Errno> {
        let planned = match self.faults.media.at_write.get(&(node_idx, write)) {
            Some(Fault::WriteError { .. }) => self.faults.media.at_write.remove(&(node_idx, write)),
            _ => None,
        };
        // A schedule's path is informational: the trace says what was hit.
        // (The path is made only for a write that may be hit: every write asks.)
        let (errno, path) = match planned {
            Some(Fault::WriteError { errno, .. }) => (errno, self.disks[node_idx].path_of(ino)),
            Some(f) => unreachable!("only write errors are taken here: {f:?}"),
            None => {
                if !self.media_on(node_idx, |m| &m.write_error) {
                    return None;
                }
                let path = self.disks[node_idx].path_of(ino);
                if self.faults.media.write_error_prefix.as_ref().is_some_and(|p| !path.starts_with(p.as_str())) || !self.draw_media(node_idx, |m| &m.write_error, &path, 0) {
                    return None;
                }
                let choices = &self.faults.media.write_errnos;
                assert!(!choices.is_empty(), "a write_error family without errors");
                let errno = if choices.len() == 1 { choices[0] } else { choices[self.streams.below(Stream::Disk, choices.len() as u64) as usize] };
                (errno, path)
            }
        };
        self.disks[node_idx].refused_write();
        self.applied(node_idx, Fault::WriteError { node: self.nodes[node_idx].name.clone(), write, at_ns: now.nanos(), errno, path });
        Some(errno.errno())
    }

    /// A write, truncate, create or mkdir the disk had no room for (or a
    /// short write: `done` of `asked` bytes), in the trace.
    /// `write`: the write's number, 0 for the other operations.
    pub fn no_space(&mut self, node_idx: usize, op: &str, ino: Ino, write: u64, asked: u64, done: u64) {
        let path = self.disks[node_idx].path_of(ino);
        self.no_space_at(node_idx, op, path, write, asked, done);
    }

    pub fn no_space_at(&mut self, node_idx: usize, op: &str, path: String, write: u64, asked: u64, done: u64) {
        let (free, full) = (self.disks[node_idx].room(self.now).unwrap_or(0), self.disks[node_idx].full_at(self.now));
        self.record(Some(node_idx), EventKind::NoSpace { op: op.to_string(), path, write, asked, done, free, full });
    }

    /// A path operation failed with ENOENT: when a missing folder is why,
    /// remember it, so a failure of this node can say what to seed.
    pub fn note_missing_dir(&mut self, node_idx: usize, dir: Ino, path: &str, result: Errno) {
        if result != errno::NOENT || self.nodes[node_idx].missing_dirs.len() >= crate::world::MISSING_DIRS_MAX {
            return;
        }
        if let Some(missing) = self.disks[node_idx].missing_dir(dir, path) {
            if !self.nodes[node_idx].missing_dirs.contains(&missing) {
                self.nodes[node_idx].missing_dirs.push(missing);
            }
        }
    }
}
