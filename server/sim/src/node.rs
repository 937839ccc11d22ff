//! One node instance: what its wasmtime `Store` holds.
//!
//! `NodeCtx` is the store's data: the shared world (behind a lock that is
//! only ever taken by the one thread running this run) and the instance's
//! private state, which dies with the instance: descriptors, stdio line
//! buffers, its memory handle. The node's disk lives in the world because it
//! outlives crashes.
use crate::wasi::fdtable::FdTable;
use crate::world::World;
use std::sync::{Arc, Mutex};
use wasmtime::Memory;

pub struct NodeCtx {
    pub world: Arc<Mutex<World>>,
    pub local: NodeLocal,
}

pub struct NodeLocal {
    /// Index of this instance in `World::nodes` (and `World::disks`).
    pub idx: usize,
    /// Which thread of the instance this store runs: 0 for the main one,
    /// a spawned thread's tid (`world::threads`) otherwise.
    pub tid: u32,
    pub memory: Option<Memory>,
    /// The instance's shared linear memory, when its module imports one
    /// (a `wasm32-wasip1-threads` guest): every thread's store has it.
    pub shared_memory: Option<wasmtime::SharedMemory>,
    /// NUL-terminated, ready to copy into the guest.
    pub args: Vec<Vec<u8>>,
    pub env: Vec<Vec<u8>>,
    pub fds: FdTable,
    /// fdflags of stdin, stdout, stderr (Go sets them non-blocking).
    pub stdio_flags: [u16; 3],
    pub stdout: LineBuffer,
    pub stderr: LineBuffer,
    pub antithesis: LineBuffer,
    pub memory_bytes_max: usize,
    /// The coverage memory, when the module is instrumented.
    pub coverage: Option<CoverageReader>,
    /// Set by a host call in which the node crashed: the call then ends the
    /// node's `_start` instead of returning to it.
    pub crashed: bool,
    /// A write on an O_SYNC/O_DSYNC descriptor left its sync to be waited
    /// for once the host call returns (`wasi::fd::finish_sync_write`).
    pub sync_after_write: Option<u64>,
    /// Files mapped into this instance's memory (`wasi::mmap`).
    pub mappings: Vec<crate::wasi::mmap::Mapping>,
    /// Host work since the node last blocked (`wasi::work`).
    pub work: crate::wasi::work::Work,
    /// The watchdog's limit (`limits.watchdog_instructions`), for the grows
    /// the limiter counts.
    pub watchdog_instructions: u64,
    /// The run's memory meter, and the bytes of linear memory this instance
    /// has counted on it (given back when the instance goes).
    pub meter: Arc<crate::memory::Meter>,
    pub memory_counted: u64,
    /// The last growth counted, taken back if wasmtime then fails the grow.
    last_growth: u64,
    /// The instance's name (`db#2`), for messages.
    pub name: String,
    /// Sampling this instance's guest stacks (`guest_profile`).
    pub profile: Option<ProfileSink>,
}

/// Where a profiled node instance's samples go, and its count of guest
/// instructions between them.
pub struct ProfileSink {
    pub profile: Arc<Mutex<crate::guest_profile::GuestProfile>>,
    pub mark: crate::guest_profile::Mark,
}

impl Drop for NodeLocal {
    fn drop(&mut self) {
        self.meter.release_guest(self.memory_counted);
    }
}

impl NodeLocal {
    #[allow(clippy::too_many_arguments)]
    pub fn new(idx: usize, name: &str, args: &[String], env: &[(String, String)], memory_bytes_max: u64, watchdog_instructions: u64, meter: Arc<crate::memory::Meter>) -> NodeLocal {
        let nul = |s: String| {
            let mut b = s.into_bytes();
            b.push(0);
            b
        };
        NodeLocal {
            idx,
            tid: 0,
            memory: None,
            shared_memory: None,
            args: args.iter().cloned().map(nul).collect(),
            env: env.iter().map(|(k, v)| nul(format!("{k}={v}"))).collect(),
            fds: FdTable::new(),
            stdio_flags: [0; 3],
            stdout: LineBuffer::default(),
            stderr: LineBuffer::default(),
            antithesis: LineBuffer::default(),
            memory_bytes_max: memory_bytes_max as usize,
            crashed: false,
            sync_after_write: None,
            coverage: None,
            mappings: Vec::new(),
            work: crate::wasi::work::Work::default(),
            watchdog_instructions,
            meter,
            memory_counted: 0,
            last_growth: 0,
            name: name.to_string(),
            profile: None,
        }
    }
}

/// Memory growth beyond the configured limit fails deterministically (the
/// guest sees `memory.grow` return -1) instead of depending on the host.
impl NodeLocal {
    /// Counts a grow attempt as host work; past the watchdog's limit the
    /// guest traps (a loop of failing grows spends almost no fuel).
    fn grew(&mut self, kind: &'static str, units: u64) -> wasmtime::Result<()> {
        self.work.grow(kind, units);
        if self.work.since_block() > self.watchdog_instructions {
            return Err(wasmtime::Error::new(HostWorkExceeded));
        }
        Ok(())
    }
}

/// A node's host work alone passed the watchdog's limit.
#[derive(Debug, Clone, Copy)]
pub struct HostWorkExceeded;

impl std::fmt::Display for HostWorkExceeded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "host work passed the watchdog's limit")
    }
}

impl std::error::Error for HostWorkExceeded {}

impl wasmtime::ResourceLimiter for NodeLocal {
    fn memory_growing(&mut self, current: usize, desired: usize, _maximum: Option<usize>) -> wasmtime::Result<bool> {
        let ok = desired <= self.memory_bytes_max;
        self.grew(if ok { "memory.grow" } else { "failed memory.grow" }, crate::wasi::work::PER_GROW)?;
        self.last_growth = 0;
        if ok {
            // Past the node's own limit the guest sees -1, as from a real
            // allocator; past the run's, the run ends as a limit failure.
            let growth = desired.saturating_sub(current) as u64;
            self.meter.grow_guest(&self.name, growth).map_err(wasmtime::Error::new)?;
            self.memory_counted += growth;
            self.last_growth = growth;
        }
        Ok(ok)
    }
    fn memory_grow_failed(&mut self, _error: wasmtime::Error) -> wasmtime::Result<()> {
        let growth = std::mem::take(&mut self.last_growth);
        self.meter.release_guest(growth);
        self.memory_counted -= growth;
        self.grew("failed memory.grow", crate::wasi::work::PER_GROW)
    }
    fn table_growing(&mut self, current: usize, desired: usize, _maximum: Option<usize>) -> wasmtime::Result<bool> {
        let ok = desired <= TABLE_ELEMENTS_MAX;
        let elements = desired.saturating_sub(current) as u64 / crate::wasi::work::TABLE_ELEMENTS_PER_UNIT;
        self.grew(if ok { "table.grow" } else { "failed table.grow" }, crate::wasi::work::PER_GROW + if ok { elements } else { 0 })?;
        Ok(ok)
    }
    fn table_grow_failed(&mut self, _error: wasmtime::Error) -> wasmtime::Result<()> {
        self.grew("failed table.grow", crate::wasi::work::PER_GROW)
    }
}

/// Splits a byte stream into lines. Go's runtime writes a panic a few bytes
/// at a time, so output is recorded per line, not per write.
#[derive(Default)]
pub struct LineBuffer {
    pending: Vec<u8>,
}

/// Bound on a node's table: a `table.grow` past it fails.
pub const TABLE_ELEMENTS_MAX: usize = 1 << 20;

/// A line longer than this is recorded in pieces.
pub const LINE_BYTES_MAX: usize = 16 << 10;

impl LineBuffer {
    pub fn push(&mut self, mut data: &[u8], mut on_line: impl FnMut(String)) {
        while !data.is_empty() {
            let room = LINE_BYTES_MAX - self.pending.len();
            let window = &data[..data.len().min(room)];
            match window.iter().position(|&b| b == b'\n') {
                Some(i) => {
                    self.pending.extend_from_slice(&window[..i]);
                    on_line(String::from_utf8_lossy(&self.pending).into_owned());
                    self.pending.clear();
                    data = &data[i + 1..];
                }
                None => {
                    self.pending.extend_from_slice(window);
                    data = &data[window.len()..];
                    if self.pending.len() >= LINE_BYTES_MAX {
                        on_line(String::from_utf8_lossy(&self.pending).into_owned());
                        self.pending.clear();
                    }
                }
            }
        }
    }

    pub fn flush(&mut self, mut on_line: impl FnMut(String)) {
        if !self.pending.is_empty() {
            on_line(String::from_utf8_lossy(&self.pending).into_owned());
            self.pending.clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_split_across_writes() {
        let mut buf = LineBuffer::default();
        let mut lines = Vec::new();
        buf.push(b"pan", |l| lines.push(l));
        buf.push(b"ic: x\n\ngo", |l| lines.push(l));
        buf.flush(|l| lines.push(l));
        assert_eq!(lines, ["panic: x", "", "go"]);
    }
}

/// Where a node incarnation's coverage log is, and how much of it the host
/// has read.
#[derive(Clone, Copy, Debug)]
pub struct CoverageReader {
    pub memory: Memory,
    pub layout: crate::coverage::Layout,
    pub read: u32,
}

/// Functions the node entered for the first time since the host last looked
/// (empty, without allocating, when none). Read at every host call, so a
/// first entry is placed in time to the nearest host call.
/// The guest resumes with `fuel` after a host call or a wait: count from
/// there, and re-arm the sampling tick so that ticks which passed meanwhile
/// do not land on the guest's first instruction.
pub fn profile_resumes<T: wasmtime::AsContextMut<Data = NodeCtx>>(mut store: T, fuel: u64) {
    let mut ctx = store.as_context_mut();
    let Some(p) = &mut ctx.data_mut().local.profile else { return };
    p.mark.fuel_set(fuel);
    ctx.set_epoch_deadline(1);
}

/// The epoch callback of a profiled node instance: one sample of its stack.
pub fn profile_sample(mut ctx: wasmtime::StoreContextMut<'_, NodeCtx>) {
    let fuel = ctx.get_fuel().expect("fuel metering is always on");
    let bt = wasmtime::WasmBacktrace::force_capture(&ctx);
    let local = &mut ctx.data_mut().local;
    let Some(p) = &mut local.profile else { return };
    let instructions = p.mark.sample(fuel);
    // A tick can find no wasm frame to walk (seen on nodes between runs of
    // guest code, with no instructions since the last sample): nothing to
    // attribute, and nothing lost.
    if bt.frames().is_empty() {
        return;
    }
    let frames = bt.frames().iter().map(|f| (f.func_index(), f.func_name()));
    p.profile.lock().expect("a profile's lock is never poisoned").add(&local.name, frames, instructions);
}

pub fn new_functions<T: wasmtime::AsContextMut<Data = NodeCtx>>(mut store: T) -> Vec<u32> {
    let mut ctx = store.as_context_mut();
    let Some(cov) = ctx.data().local.coverage else { return Vec::new() };
    let mem = cov.memory.data(&ctx);
    let count = crate::coverage::log_count(mem, cov.layout);
    if count <= cov.read {
        return Vec::new();
    }
    let new: Vec<u32> = crate::coverage::log_since(mem, cov.layout, cov.read).collect();
    ctx.data_mut().local.coverage.as_mut().expect("checked above").read = count;
    new
}

/// Folds what the node entered since the host last looked into the world's
/// record (at exit, and at each suspension, where the host call that
/// suspends has read the functions already: host calls read them
/// themselves, to give the probes' fuel back).
///
/// With edge probes, also folds the edge map's (index, bucket) pairs in:
/// only here, at suspensions and exit, since the map is 64 KiB.
pub fn harvest_coverage<T: wasmtime::AsContextMut<Data = NodeCtx>>(mut store: T, local_idx: usize, world: &mut crate::world::World) {
    let new = new_functions(&mut store);
    let ctx = store.as_context();
    let Some(cov) = ctx.data().local.coverage else { return };
    world.note_functions(local_idx, cov.layout, &new);
    if let Some(map) = crate::coverage::edge_map(cov.memory.data(&ctx), cov.layout) {
        world.note_edges(local_idx, map);
    }
}
