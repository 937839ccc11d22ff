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
//! is put in an AFL bucket ([`bucket`]), and an (edge index, bucket) pair the
//! instance (over all its incarnations) had not reached is recorded with
//! the current virtual time and step ([`EdgesReached`]). A restarted
//! instance starts with a fresh map, so its counts start again from 0.
//!
//! # Timing
//!
//! An edge probe costs [`PROBE_FUEL`] on every execution, and fuel is
//! virtual time. Unlike the function probes' one-off first-entry cost this
//! is not given back: it depends on how often each block runs, which no host
//! call sees exactly. So a module instrumented for edges runs with other
//! virtual times (and other interleavings) than the ordinary one: runs under
//! `Mode::Edges` are an exploration aid, and a failure found with them must
//! be confirmed on the module instrumented as usual (`Mode::Functions`)
//! before it is reported.
use super::{append_entry, leb, memarg, sleb, Layout};
use wasmparser::{FunctionBody, Operator, OperatorsReader};

/// Bytes of the hit-count map: one per 16-bit edge index.
pub const MAP_BYTES: u32 = 1 << 16;

/// Fuel one edge probe burns each time it runs (every instruction costs 1).
pub const PROBE_FUEL: u64 = 14;

/// AFL's count classes: bucket ids 0..=7 for counts 1, 2, 3, 4-7, 8-15,
/// 16-31, 32-127, 128+.
pub const BUCKETS: u8 = 8;

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

/// Function `f`'s body rewritten: one more i32 local (the probes' scratch),
/// `fn_probe` then an edge probe at its entry, and an edge probe at every
/// other basic-block start (module docs). `params` is the function type's
/// parameter count (local indices start after the parameters).
pub(super) fn body(wasm: &[u8], body: &FunctionBody<'_>, f: u32, params: u32, fn_probe: &[u8], sites: Sites) -> Result<Vec<u8>, String> {
    let e = |err: wasmparser::BinaryReaderError| format!("cannot read the module: {err}");
    let range = body.range();
    let mut locals = body.get_locals_reader().map_err(e)?;
    let mut declared = u64::from(params);
    for _ in 0..locals.get_count() {
        declared += u64::from(locals.read().map_err(e)?.0);
    }
    let scratch = u32::try_from(declared).map_err(|_| "a function has too many locals".to_string())?;
    let reader = body.get_binary_reader_for_operators().map_err(e)?;
    let ops_start = reader.original_position();
    let mut out = append_entry(&wasm[range.start..ops_start], &[0x01, 0x7f])?;
    out.reserve(range.len() * 2);
    out.extend_from_slice(fn_probe);
    out.extend_from_slice(&probe(sites, scratch, site(f, 0)));
    let mut ops = OperatorsReader::new(reader);
    let (mut copied, mut depth) = (ops_start, 0u32);
    while !ops.eof() {
        let op = ops.read().map_err(e)?;
        let after = ops.original_position();
        let starts_block = match op {
            Operator::Block { .. } | Operator::Try { .. } | Operator::TryTable { .. } => {
                depth += 1;
                false
            }
            Operator::Loop { .. } | Operator::If { .. } => {
                depth += 1;
                true
            }
            Operator::Else | Operator::BrIf { .. } => true,
            Operator::Delegate { .. } => {
                depth = depth.saturating_sub(1);
                false
            }
            // The function's last `end` has nothing after it.
            Operator::End if depth == 0 => false,
            Operator::End => {
                depth -= 1;
                true
            }
            _ => false,
        };
        if starts_block {
            out.extend_from_slice(&wasm[copied..after]);
            copied = after;
            out.extend_from_slice(&probe(sites, scratch, site(f, (after - ops_start) as u32)));
        }
    }
    out.extend_from_slice(&wasm[copied..range.end]);
    Ok(out)
}

/// The AFL bucket of a hit count (None for 0: the edge was not taken).
pub fn bucket(count: u8) -> Option<u8> {
    Some(match count {
        0 => return None,
        1 => 0,
        2 => 1,
        3 => 2,
        4..=7 => 3,
        8..=15 => 4,
        16..=31 => 5,
        32..=127 => 6,
        128..=255 => 7,
    })
}

/// An (edge index, bucket) pair first reached in a run: when (virtual time,
/// scheduler step), to the nearest suspension or exit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
pub struct EdgeEntry {
    pub index: u32,
    pub bucket: u8,
    pub at_ns: u64,
    pub step: u64,
}

/// What one node instance reached over its whole run, across restarts: per
/// edge index a byte of buckets seen (bit b for bucket b), and each new
/// (index, bucket) in the order found. At most `MAP_BYTES * BUCKETS` entries
/// by construction.
#[derive(Clone, Debug, Default)]
pub struct EdgesReached {
    seen: Vec<u8>,
    /// The map as last noted (of whichever incarnation): a count equal to
    /// its last value has a bucket already in `seen`, so only the 8-byte
    /// words that changed are looked at.
    last: Vec<u64>,
    pub first: Vec<EdgeEntry>,
}

impl EdgesReached {
    /// Notes the (index, bucket) pairs of an incarnation's map not reached
    /// before; returns how many were new.
    pub fn note(&mut self, map: &[u8], at_ns: u64, step: u64) -> usize {
        const WORDS: usize = MAP_BYTES as usize / 8;
        if self.seen.is_empty() {
            self.seen = vec![0; MAP_BYTES as usize];
            self.last = vec![0; WORDS];
        }
        let before = self.first.len();
        for (k, (chunk, last)) in map.chunks_exact(8).zip(self.last.iter_mut()).enumerate() {
            let word = u64::from_le_bytes(chunk.try_into().expect("8 bytes"));
            if word == *last {
                continue;
            }
            *last = word;
            for (j, &count) in chunk.iter().enumerate() {
                let Some(b) = bucket(count) else { continue };
                let index = k * 8 + j;
                let seen = &mut self.seen[index];
                if *seen & (1 << b) == 0 {
                    *seen |= 1 << b;
                    self.first.push(EdgeEntry { index: index as u32, bucket: b, at_ns, step });
                }
            }
        }
        self.first.len() - before
    }
}

#[cfg(test)]
mod tests {
    use super::super::{instrument, instrument_with, log_since, Mode, COVERAGE_EXPORT, FIRST_ENTRY_FUEL};
    use super::*;
    use std::collections::BTreeSet;

    fn engine() -> wasmtime::Engine {
        let mut config = wasmtime::Config::new();
        config.consume_fuel(true);
        wasmtime::Engine::new(&config).unwrap()
    }

    /// Instantiates `wasm` (imports: `env.f` a function, `env.g`/`env.gm`
    /// globals when asked), calls `name(args)`; returns the results, the
    /// fuel used, and the coverage memory's bytes when there is one.
    fn call(wasm: &[u8], name: &str, args: &[wasmtime::Val], results: usize) -> (Vec<wasmtime::Val>, u64, Option<Vec<u8>>) {
        let engine = engine();
        let module = wasmtime::Module::new(&engine, wasm).unwrap();
        let mut store = wasmtime::Store::new(&engine, ());
        store.set_fuel(100_000_000).unwrap();
        let mut imports = Vec::new();
        for imp in module.imports() {
            imports.push(match imp.name() {
                "f" => wasmtime::Func::wrap(&mut store, || {}).into(),
                "g" => wasmtime::Global::new(&mut store, wasmtime::GlobalType::new(wasmtime::ValType::I32, wasmtime::Mutability::Const), 40.into()).unwrap().into(),
                "gm" => wasmtime::Global::new(&mut store, wasmtime::GlobalType::new(wasmtime::ValType::I32, wasmtime::Mutability::Var), 2.into()).unwrap().into(),
                other => panic!("no import {other}"),
            });
        }
        let instance = wasmtime::Instance::new(&mut store, &module, &imports).unwrap();
        let f = instance.get_func(&mut store, name).unwrap();
        let mut out = vec![wasmtime::Val::I32(0); results];
        f.call(&mut store, args, &mut out).unwrap();
        let used = 100_000_000 - store.get_fuel().unwrap();
        let cov = instance.get_memory(&mut store, COVERAGE_EXPORT).map(|m| m.data(&store).to_vec());
        (out, used, cov)
    }

    fn pairs(layout: Layout, mem: &[u8]) -> BTreeSet<(u32, u8)> {
        let at = layout.edges_at() as usize;
        let mut r = EdgesReached::default();
        r.note(&mem[at..at + MAP_BYTES as usize], 0, 0);
        r.first.iter().map(|e| (e.index, e.bucket)).collect()
    }

    const BRANCHY: &str = r#"(module
        (func (export "f") (param $n i32) (param $c i32) (result i32)
            (local $i i32)
            (if (local.get $c) (then (local.set $i (i32.const 0))) (else (local.set $i (i32.const 0))))
            (loop $l
                (local.set $i (i32.add (local.get $i) (i32.const 1)))
                (br_if $l (i32.lt_u (local.get $i) (local.get $n))))
            (local.get $i)))"#;

    fn branchy(n: i32, c: i32) -> BTreeSet<(u32, u8)> {
        let inst = instrument_with(&wat::parse_str(BRANCHY).unwrap(), Mode::Edges).unwrap();
        assert!(inst.layout.edges);
        let (out, _, mem) = call(&inst.wasm, "f", &[n.into(), c.into()], 1);
        assert_eq!(out[0].unwrap_i32(), n.max(1), "the probes do not change what the function computes");
        pairs(inst.layout, &mem.unwrap())
    }

    #[test]
    fn branches_and_loop_counts_give_different_edges() {
        let then = branchy(1, 1);
        let els = branchy(1, 0);
        assert_ne!(then, els, "if and else take different edges");
        let (two, five) = (branchy(2, 1), branchy(5, 1));
        assert_ne!(then, two);
        assert_ne!(two, five);
        assert_ne!(then, five);
        assert_eq!(then, branchy(1, 1), "the same path gives the same edges");
        // The loop's back edge (br_if's target, the loop's start) is taken
        // n - 1 times: absent at 1, bucket 0 at 2, bucket 3 (4-7) at 5.
        let new_at_two: Vec<_> = two.difference(&then).collect();
        assert!(!new_at_two.is_empty());
        assert!(five.iter().any(|&(_, b)| b == 3), "{five:?}");
    }

    #[test]
    fn counts_saturate_at_255() {
        let inst = instrument_with(&wat::parse_str(BRANCHY).unwrap(), Mode::Edges).unwrap();
        let (_, _, mem) = call(&inst.wasm, "f", &[300.into(), 1.into()], 1);
        let mem = mem.unwrap();
        let at = inst.layout.edges_at() as usize;
        let map = &mem[at..at + MAP_BYTES as usize];
        // The loop's back edge ran 299 times (every other edge once).
        assert_eq!(map.iter().filter(|&&c| c == 255).count(), 1, "the back edge saturates at 255");
        assert!(map.iter().all(|&c| c <= 1 || c == 255), "no count wrapped");
        assert!(pairs(inst.layout, &mem).iter().any(|&(_, b)| b == 7));
    }

    /// Imported globals (the `prev` global's index counts them), a global
    /// section of the module's own, and probes where the operand stack holds
    /// block params and results, or is unreachable.
    #[test]
    fn probes_are_stack_neutral_and_keep_global_indices() {
        let wat = r#"(module
            (import "env" "f" (func $imp))
            (import "env" "g" (global $g i32))
            (import "env" "gm" (global $gm (mut i32)))
            (global $own (mut i32) (i32.const 100))
            (memory 1)
            (func (export "f") (param $x i32) (result i32)
                (local i64 i64) (local f32)
                call $imp
                (i32.const 1)
                (block (param i32) (result i32)
                    (i32.add (global.get $g))
                    (br_if 0 (local.get $x)) ;; falls through with the i32 on the stack
                    (i32.add (i32.const 1000)))
                (if (param i32) (result i32) (local.get $x)
                    (then (i32.add (global.get $own)))
                    (else (i32.sub (global.get $gm))))
                (loop (param i32) (result i32)
                    (global.set $gm (i32.add (global.get $gm) (i32.const 1)))
                    (i32.const 1)
                    (i32.add)
                    (br_if 0 (i32.ne (global.get $gm) (i32.const 5))))
                (block (result i32)
                    (block
                        (br 1 (i32.const 7))
                        (i32.const 1) ;; unreachable from here on
                        (if (then unreachable))
                    )
                    (i32.const 9))
                (i32.add))
            (func $nothing))"#;
        let wasm = wat::parse_str(wat).unwrap();
        let inst = instrument_with(&wasm, Mode::Edges).unwrap();
        for x in [0, 1] {
            let (plain, _, _) = call(&wasm, "f", &[x.into()], 1);
            let (probed, _, mem) = call(&inst.wasm, "f", &[x.into()], 1);
            assert_eq!(probed[0].unwrap_i32(), plain[0].unwrap_i32(), "x = {x}");
            assert!(!pairs(inst.layout, &mem.unwrap()).is_empty());
        }
        // And with no global section of its own: one is added.
        let inst = instrument_with(&wat::parse_str(BRANCHY).unwrap(), Mode::Edges).unwrap();
        let globals = wasmparser::Parser::new(0).parse_all(&inst.wasm).filter(|p| matches!(p, Ok(wasmparser::Payload::GlobalSection(_)))).count();
        assert_eq!(globals, 1);
    }

    /// Function first entries are logged as in `Mode::Functions`, and the
    /// fuel is the function probes' plus `PROBE_FUEL` per edge probe run.
    #[test]
    fn function_logging_still_works() {
        let wasm = wat::parse_str(crate::coverage::tests::WAT).unwrap();
        let funcs = instrument(&wasm).unwrap();
        let inst = instrument_with(&wasm, Mode::Edges).unwrap();
        assert_eq!(inst.layout.functions, funcs.layout.functions);
        assert!(!funcs.layout.edges);
        assert_eq!(inst.layout.bitmap_at(), funcs.layout.bitmap_at());
        let (_, plain, _) = call(&wasm, "a", &[], 0);
        let (_, fuel_funcs, _) = call(&funcs.wasm, "a", &[], 0);
        let (_, fuel_edges, mem) = call(&inst.wasm, "a", &[], 0);
        let mem = mem.unwrap();
        assert_eq!(log_since(&mem, inst.layout, 0).collect::<Vec<_>>(), vec![1, 2, 4]);
        assert_eq!(fuel_funcs - plain, 3 * 5 + FIRST_ENTRY_FUEL * 3);
        // Five entries, no blocks: five edge probes.
        assert_eq!(fuel_edges - fuel_funcs, PROBE_FUEL * 5);
        // a→b, b→b (entries of b follow each other in the probe order), ...
        assert!(pairs(inst.layout, &mem).len() >= 3);
    }

    #[test]
    fn buckets_are_afl_classes() {
        let classes: Vec<Option<u8>> = [0u8, 1, 2, 3, 4, 7, 8, 15, 16, 31, 32, 127, 128, 255].iter().map(|&c| bucket(c)).collect();
        assert_eq!(classes, [None, Some(0), Some(1), Some(2), Some(3), Some(3), Some(4), Some(4), Some(5), Some(5), Some(6), Some(6), Some(7), Some(7)]);
    }

    #[test]
    fn reached_keeps_the_first_time_across_incarnations() {
        let mut r = EdgesReached::default();
        let mut map = vec![0u8; MAP_BYTES as usize];
        map[5] = 1;
        map[7000] = 9;
        assert_eq!(r.note(&map, 10, 1), 2);
        assert_eq!(r.note(&map, 20, 2), 0, "nothing new");
        map[5] = 2;
        assert_eq!(r.note(&map, 30, 3), 1);
        // A restart: fresh counts; bucket 0 of edge 5 keeps its first time.
        let mut fresh = vec![0u8; MAP_BYTES as usize];
        fresh[5] = 1;
        assert_eq!(r.note(&fresh, 40, 4), 0);
        let got: Vec<_> = r.first.iter().map(|e| (e.index, e.bucket, e.at_ns)).collect();
        assert_eq!(got, [(5, 0, 10), (7000, 4, 10), (5, 1, 30)]);
    }
}
