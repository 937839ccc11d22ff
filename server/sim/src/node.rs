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
    pub memory: Option<Memory>,
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
    /// The coverage bitmap memory, when the module is instrumented, and how
    /// many of its bytes are functions.
    pub coverage: Option<(Memory, u32)>,
    /// Set by a host call in which the node crashed: the call then ends the
    /// node's `_start` instead of returning to it.
    pub crashed: bool,
    /// Files mapped into this instance's memory (`wasi::mmap`).
    pub mappings: Vec<crate::wasi::mmap::Mapping>,
}

impl NodeLocal {
    pub fn new(idx: usize, args: &[String], env: &[(String, String)], memory_bytes_max: u64) -> NodeLocal {
        let nul = |s: String| {
            let mut b = s.into_bytes();
            b.push(0);
            b
        };
        NodeLocal {
            idx,
            memory: None,
            args: args.iter().cloned().map(nul).collect(),
            env: env.iter().map(|(k, v)| nul(format!("{k}={v}"))).collect(),
            fds: FdTable::new(),
            stdio_flags: [0; 3],
            stdout: LineBuffer::default(),
            stderr: LineBuffer::default(),
            antithesis: LineBuffer::default(),
            memory_bytes_max: memory_bytes_max as usize,
            crashed: false,
            coverage: None,
            mappings: Vec::new(),
        }
    }
}

/// Memory growth beyond the configured limit fails deterministically (the
/// guest sees `memory.grow` return -1) instead of depending on the host.
impl wasmtime::ResourceLimiter for NodeLocal {
    fn memory_growing(&mut self, _current: usize, desired: usize, _maximum: Option<usize>) -> wasmtime::Result<bool> {
        Ok(desired <= self.memory_bytes_max)
    }
    fn table_growing(&mut self, _current: usize, desired: usize, _maximum: Option<usize>) -> wasmtime::Result<bool> {
        const TABLE_ELEMENTS_MAX: usize = 1 << 20;
        Ok(desired <= TABLE_ELEMENTS_MAX)
    }
}

/// Splits a byte stream into lines. Go's runtime writes a panic a few bytes
/// at a time, so output is recorded per line, not per write.
#[derive(Default)]
pub struct LineBuffer {
    pending: Vec<u8>,
}

/// A line longer than this is recorded in pieces.
pub const LINE_BYTES_MAX: usize = 16 << 10;

impl LineBuffer {
    pub fn push(&mut self, data: &[u8], mut on_line: impl FnMut(String)) {
        for &b in data {
            if b == b'\n' {
                on_line(String::from_utf8_lossy(&self.pending).into_owned());
                self.pending.clear();
            } else {
                self.pending.push(b);
                if self.pending.len() >= LINE_BYTES_MAX {
                    on_line(String::from_utf8_lossy(&self.pending).into_owned());
                    self.pending.clear();
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

/// Folds the node's coverage bitmap into the world's (at each suspension and
/// at exit: a crash can only strike a node that is suspended or inside a host
/// call, so nothing it reached is lost).
pub fn harvest_coverage<T: wasmtime::AsContext<Data = NodeCtx>>(store: T, local_idx: usize, world: &mut crate::world::World) {
    let ctx = store.as_context();
    let Some((memory, functions)) = ctx.data().local.coverage else { return };
    let bytes = &memory.data(&ctx)[..functions as usize];
    let acc = &mut world.coverage[local_idx];
    if acc.len() < bytes.len() {
        acc.resize(bytes.len(), 0);
    }
    for (a, b) in acc.iter_mut().zip(bytes) {
        *a |= *b;
    }
}
