//! The threads rewrite (`seedfall_sim::threads`) on real modules: the
//! binaries of tests/guests/rust-threads (std threads with a planted race,
//! `Mutex` + `Condvar` + `mpsc`, a rayon pool), built by the cargo recipe
//! for wasm32-wasip1-threads as tests/guests/threads.json asks. Each
//! rewritten module validates with no more than the features it was built
//! with, waits and notifies nowhere, imports the three host functions after
//! its own imports, and is the original body for body, with its exports and
//! start function naming the same code. The recipe keys builds by target.
use seedfall_search::{cache::Cache, recipe};
use seedfall_sim::config::{RustTarget, WasmSource};
use seedfall_sim::threads::{self, ADDED_IMPORTS, MODULE};
use seedfall_sim::Config;
use std::path::{Path, PathBuf};
use wasmparser::{FunctionBody, Operator, WasmFeatures};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// (module, name, is a function, is a shared memory) of every import.
fn imports(wasm: &[u8]) -> Vec<(String, String, bool, bool)> {
    threads::shape::imports(wasm).into_iter().map(|i| (i.module, i.name, i.func, i.shared_memory)).collect()
}

use threads::shape::{bodies, func_exports, start};

fn operators<'a>(body: &FunctionBody<'a>) -> Vec<Operator<'a>> {
    let mut r = body.get_operators_reader().unwrap();
    let mut out = Vec::new();
    while !r.eof() {
        out.push(r.read().unwrap());
    }
    out
}

/// How many of `wasm`'s operators are waits and notifies.
fn waits_and_notifies(wasm: &[u8]) -> (usize, usize) {
    let ops: Vec<Operator> = bodies(wasm).iter().flat_map(operators).collect();
    let waits = ops.iter().filter(|o| matches!(o, Operator::MemoryAtomicWait32 { .. } | Operator::MemoryAtomicWait64 { .. })).count();
    let notifies = ops.iter().filter(|o| matches!(o, Operator::MemoryAtomicNotify { .. })).count();
    (waits, notifies)
}

/// The rewritten body is the original's with function indices moved and
/// each wait or notify replaced by `i32.const offset; call import`.
fn same_body(original: &FunctionBody, rewritten: &FunctionBody, imported: u32) -> Result<(), String> {
    let want = threads::shape::rewritten_ops(original, imported);
    let got: Vec<String> = operators(rewritten).iter().map(|o| format!("{o:?}")).collect();
    match got.iter().zip(&want).position(|(g, w)| g != w) {
        Some(i) => Err(format!("operator {i}: {} where the original gives {}", got[i], want[i])),
        None if got.len() != want.len() => Err(format!("{} operators where the original gives {}", got.len(), want.len())),
        None => Ok(()),
    }
}

#[test]
fn real_threaded_modules_are_rewritten_faithfully() {
    let config = Config::load(&repo().join("tests/guests/threads.json")).unwrap();
    let cache = Cache::for_config(config.dir());
    assert_eq!(config.nodes.len(), 3);
    for node in &config.nodes {
        assert!(matches!(node.source, WasmSource::Cargo { target: RustTarget::Wasip1Threads, .. }), "{}: built for the threads target", node.name);
        let built = recipe::wasm_for(node, &cache, &mut |_| {}).unwrap_or_else(|e| panic!("{e}"));
        let original = std::fs::read(&built.wasm).unwrap();
        let name = &node.name;
        assert!(threads::imports_shared_memory(&original), "{name}: a wasm32-wasip1-threads module imports a shared memory");
        assert!(imports(&original).iter().any(|i| i.0 == threads::SPAWN_MODULE && i.1 == threads::SPAWN), "{name}: imports wasi::thread-spawn");
        assert!(func_exports(&original).iter().any(|e| e.0 == threads::THREAD_START), "{name}: exports wasi_thread_start");
        let (waits, notifies) = waits_and_notifies(&original);
        assert!(waits > 0 && notifies > 0, "{name}: std's locks wait ({waits}) and notify ({notifies})");

        let rewritten = threads::rewrite(&original).unwrap_or_else(|e| panic!("{name}: {e}"));
        // What rustc builds for the target (WASM2's features) plus threads.
        wasmparser::Validator::new_with_features(WasmFeatures::WASM2 | WasmFeatures::THREADS).validate_all(&rewritten).unwrap_or_else(|e| panic!("{name}: the rewritten module is invalid: {e}"));
        assert_eq!(waits_and_notifies(&rewritten), (0, 0), "{name}: no wait or notify is left");
        // The module's own imports, unchanged, then the three.
        let (before, after) = (imports(&original), imports(&rewritten));
        assert_eq!(after[..before.len()], before[..], "{name}: its own imports come first, unchanged");
        let added: Vec<(String, String, bool, bool)> = ADDED_IMPORTS.iter().map(|f| (MODULE.to_string(), f.to_string(), true, false)).collect();
        assert_eq!(after[before.len()..], added[..], "{name}: the three imports are appended");
        // Every export and the start function name the same body.
        let imported = before.iter().filter(|i| i.2).count() as u32;
        let (old, new) = (bodies(&original), bodies(&rewritten));
        assert_eq!(old.len(), new.len(), "{name}: as many defined functions");
        let (old_exports, new_exports) = (func_exports(&original), func_exports(&rewritten));
        assert_eq!(old_exports.iter().map(|e| &e.0).collect::<Vec<_>>(), new_exports.iter().map(|e| &e.0).collect::<Vec<_>>());
        assert!(new_exports.iter().any(|e| e.0 == "_start"), "{name}: exports _start");
        let body_of = |f: u32, shift: u32| (f - imported - shift) as usize;
        for ((export, was), (_, is)) in old_exports.iter().zip(&new_exports) {
            assert_eq!(*is, was + 3, "{name}: {export} moved by the three imports");
            same_body(&old[body_of(*was, 0)], &new[body_of(*is, 3)], imported).unwrap_or_else(|e| panic!("{name}: {export}: {e}"));
        }
        let (was, is) = (start(&original).expect("a start function (__wasm_init_memory)"), start(&rewritten).unwrap());
        assert_eq!(is, was + 3, "{name}: the start function moved");
        same_body(&old[body_of(was, 0)], &new[body_of(is, 3)], imported).unwrap_or_else(|e| panic!("{name}: start: {e}"));
        // And every other body too.
        for (i, (a, b)) in old.iter().zip(&new).enumerate() {
            same_body(a, b, imported).unwrap_or_else(|e| panic!("{name}: defined function {i}: {e}"));
        }
    }
}

#[test]
fn the_build_is_keyed_by_its_target() {
    let config = Config::load(&repo().join("tests/guests/threads.json")).unwrap();
    let cache = Cache::for_config(config.dir());
    let threaded = config.nodes.iter().find(|n| n.name == "pingpong").unwrap();
    let mut plain = threaded.clone();
    let WasmSource::Cargo { target, .. } = &mut plain.source else { panic!("a cargo recipe") };
    *target = RustTarget::Wasip1;
    let (a, b) = (recipe::wasm_for(threaded, &cache, &mut |_| {}).unwrap(), recipe::wasm_for(&plain, &cache, &mut |_| {}).unwrap());
    assert_ne!(a.fingerprint, b.fingerprint, "one recipe, two targets, two builds");
    assert_ne!(a.wasm, b.wasm);
    // Each is what its target makes: only the threads build imports a shared memory.
    assert!(threads::imports_shared_memory(&std::fs::read(&a.wasm).unwrap()));
    assert!(!threads::imports_shared_memory(&std::fs::read(&b.wasm).unwrap()));
}
