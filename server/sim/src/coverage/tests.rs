//! Tests of coverage: function probes (the log, their fuel) and edge
//! probes (buckets, saturation, stack neutrality, timing).
use super::*;

/// A module whose `a` calls `b` twice and `c2`, which calls `b`; `c`
/// never runs. Edge tests use it too.
pub(crate) const WAT: &str = r#"(module
    (import "env" "f" (func $imp))
    (memory 1)
    (func $a (export "a") call $b call $b call $c2)
    (func $b)
    (func $c)
    (func $c2 call $b))"#;

fn run(wasm: &[u8]) -> (wasmtime::Store<()>, wasmtime::Instance, u64) {
    let mut config = wasmtime::Config::new();
    config.consume_fuel(true);
    let engine = wasmtime::Engine::new(&config).unwrap();
    let module = wasmtime::Module::new(&engine, wasm).unwrap();
    let mut store = wasmtime::Store::new(&engine, ());
    store.set_fuel(1_000_000).unwrap();
    let imp = wasmtime::Func::wrap(&mut store, || {});
    let instance = wasmtime::Instance::new(&mut store, &module, &[imp.into()]).unwrap();
    instance.get_typed_func::<(), ()>(&mut store, "a").unwrap().call(&mut store, ()).unwrap();
    let used = 1_000_000 - store.get_fuel().unwrap();
    (store, instance, used)
}

#[test]
fn probes_log_first_entries_in_order() {
    let wasm = wat::parse_str(WAT).unwrap();
    let inst = instrument(&wasm).unwrap();
    assert_eq!(inst.layout.functions, 5);
    assert_eq!(inst.names.get(&1).map(String::as_str), Some("a"), "names come from the name section");
    let (mut store, instance, _) = run(&inst.wasm);
    let cov = instance.get_memory(&mut store, COVERAGE_EXPORT).unwrap();
    let mem = cov.data(&store);
    assert_eq!(log_count(mem, inst.layout), 3);
    assert_eq!(log_since(mem, inst.layout, 0).collect::<Vec<_>>(), vec![1, 2, 4], "a, then b, then c2; c never ran, the import has no probe");
    assert_eq!(log_since(mem, inst.layout, 2).collect::<Vec<_>>(), vec![4]);
    assert_eq!(log_since(mem, inst.layout, 9).count(), 0);
}

/// Virtual time comes from fuel: a probe costs 3 on every entry and
/// FIRST_ENTRY_FUEL more on the first, which the host gives back.
#[test]
fn probes_cost_known_fuel() {
    let wasm = wat::parse_str(WAT).unwrap();
    let inst = instrument(&wasm).unwrap();
    let (_, _, plain) = run(&wasm);
    let (_, _, probed) = run(&inst.wasm);
    // Entries: a once, b three times, c2 once; first entries: a, b, c2.
    assert_eq!(probed - plain, 3 * 5 + FIRST_ENTRY_FUEL * 3);
}

use super::edges::{MAP_BYTES, PROBE_FUEL};
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
    let wasm = wat::parse_str(WAT).unwrap();
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
