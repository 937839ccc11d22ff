//! Edge coverage (`Mode::Edges`), AFL-style: a hit count per (previous
//! site, current site) pair, bucketed by order of magnitude.
//!
//! On top of the function probes, every basic-block start of every function
//! body gets an edge probe: the function's entry (after its function
//! probe), and the instruction after each `loop`, `if`, `else`, `br_if`
//! (its fall-through) and each `end` but the function's last. A probe's site
//! constant `cur` is a hash of the function index and the instruction's
//! offset in the body, masked to 16 bits; the probe increments
//! `map[cur ^ prev]`, saturating at 255 (never wrapping to 0), and sets
//! `prev = cur >> 1` (so A→B and B→A differ, and a tight loop A→A does not
//! land on 0). `prev` is a mutable i32 global appended after every existing
//! global (no global index shifts); the probe's scratch value is an i32
//! local appended to each function's locals (no local index shifts
//! either): a local is a register to the compiler where a second global
//! would be a load and a store of the instance's globals, and it keeps the
//! probe at 14 instructions (see [`probe`]). The map is [`MAP_BYTES`] long,
//! in the coverage memory at `Layout::edges_at`.
//!
//! The host reads the map at each suspension and when the instance exits,
//! not at every host call (64 KiB is too much per call): each nonzero count
//! is put in an AFL bucket ([`super::bucket`]), and an (edge index, bucket) pair the
//! instance (over all its incarnations) had not reached is recorded with
//! the current virtual time and step ([`super::EdgesReached`]). A restarted
//! instance starts with a fresh map, so its counts start again from 0.
//!
//! # Timing
//!
//! An edge probe costs `PROBE_FUEL` on every execution, and fuel is
//! virtual time. Unlike the function probes' one-off first-entry cost this
//! is not given back: it depends on how often each block runs, which no host
//! call sees exactly. So a module instrumented for edges runs with other
//! virtual times (and other interleavings) than the ordinary one: runs under
//! `Mode::Edges` are an exploration aid, and a failure found with them must
//! be confirmed on the module instrumented as usual (`Mode::Functions`)
//! before it is reported.
use super::encode::{leb, memarg, sleb};
use super::Layout;

/// Bytes of the hit-count map: one per 16-bit edge index.
pub const MAP_BYTES: u32 = 1 << 16;

/// Fuel one edge probe burns each time it runs (every instruction costs 1):
/// what the tests hold the probe to.
#[cfg(test)]
pub const PROBE_FUEL: u64 = 14;

/// The global section entry of `prev`: `(global (mut i32) (i32.const 0))`.
pub(super) const PREV_GLOBAL: &[u8] = &[0x7f, 0x01, 0x41, 0x00, 0x0b];

/// What an edge probe needs to know about the module.
#[derive(Clone, Copy, Debug)]
pub struct Sites {
    pub layout: Layout,
    /// Index of the coverage memory.
    pub memory: u32,
    /// Index of the `prev` global.
    pub prev: u32,
}

/// The site constant of the probe at `offset` (bytes from the start of the
/// body's instructions; 0 is the function entry) of function `f`.
pub fn site(f: u32, offset: u32) -> u32 {
    // splitmix64's finalizer over (f, offset).
    let mut x = ((u64::from(f) << 32) | u64::from(offset)).wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^= x >> 31;
    (x & 0xffff) as u32
}

/// The edge probe of site `cur`, with `scratch` the function's scratch local:
///
/// ```wat
/// global.get $prev  i32.const cur  i32.xor  local.tee $s   ;; idx
/// local.get $s  i32.load8_u cov edges                       ;; idx c
/// local.tee $s  local.get $s  i32.const 255  i32.ne  i32.add ;; idx c+(c!=255)
/// i32.store8 cov edges                                      ;; map[idx] = ...
/// i32.const cur>>1  global.set $prev
/// ```
///
/// 14 instructions, no branch; it takes nothing from the operand stack and
/// leaves nothing on it, so it may go where the stack holds block params or
/// results (or is unreachable).
pub fn probe(sites: Sites, scratch: u32, cur: u32) -> Vec<u8> {
    let at = sites.layout.edges_at();
    let mut p = Vec::with_capacity(40);
    p.push(0x23);
    leb(u64::from(sites.prev), &mut p);
    p.push(0x41);
    sleb(cur, &mut p);
    p.push(0x73);
    p.push(0x22);
    leb(u64::from(scratch), &mut p);
    p.push(0x20);
    leb(u64::from(scratch), &mut p);
    p.push(0x2d);
    memarg(0, sites.memory, at, &mut p);
    p.push(0x22);
    leb(u64::from(scratch), &mut p);
    p.push(0x20);
    leb(u64::from(scratch), &mut p);
    p.push(0x41);
    sleb(255, &mut p);
    p.extend_from_slice(&[0x47, 0x6a, 0x3a]);
    memarg(0, sites.memory, at, &mut p);
    p.push(0x41);
    sleb(cur >> 1, &mut p);
    p.push(0x24);
    leb(u64::from(sites.prev), &mut p);
    p
}
