//! The threads rewrite: every `memory.atomic.wait32`, `wait64` and
//! `notify` becomes a call of a host function imported from [`MODULE`].
//!
//! The instruction's operands are already on the stack (`addr, expected,
//! timeout` or `addr, count`); the rewrite pushes the memarg's static offset
//! as one more `i32` argument and calls the import, so no local is needed
//! and the host computes the effective address exactly as the instruction
//! would (`addr as u32 + offset`).
//!
//! Coverage adds a memory instead of an import precisely because a new
//! function import moves every defined function's index; this pass has no
//! such choice, so it re-encodes the whole module with wasm-encoder's
//! `reencode`, which routes every function index (calls, `ref.func`,
//! exports, the start function, element segments, the `name` section)
//! through [`Reencode::function_index`]. The imports are appended after the
//! module's own, so imported functions keep their indices and defined ones
//! move up by [`ADDED`]; the types are appended after the module's own, so
//! no type index moves.
//!
//! Custom sections that point into code by offset or index would silently
//! become wrong, and are dropped: DWARF (`.debug_*`) and the code metadata
//! sections (`metadata.code.*`, branch hints among them). Seedfall reads
//! neither (coverage drops `.debug_*` too); every other custom section is
//! copied as it was.
//!
//! Run it before coverage's rewrite: coverage's layout then counts the
//! final function indices.
use super::{ADDED_IMPORTS, MODULE};
use wasm_encoder::reencode::{utils, Error, Reencode};
use wasm_encoder::{CodeSection, EntityType, ImportSection, SectionId, TypeSection, ValType};
use wasmparser::{Operator, Parser, Payload, TypeRef};

/// Function imports the rewrite appends (wait32, wait64, notify).
const ADDED: u32 = ADDED_IMPORTS.len() as u32;

/// Custom sections dropped because they address code by offset or index.
fn addresses_code(name: &str) -> bool {
    name.starts_with(".debug") || name.starts_with("metadata.code.")
}

struct ThreadsRewrite {
    /// The module's own function imports: the first added import's index.
    imported_funcs: u32,
    /// The module's own types: the first added type's index.
    types: u32,
    /// Whether memory 0 is a 64-bit memory (the added imports take i32
    /// addresses, as wasm32-wasip1-threads' memory has).
    memory64: bool,
    /// Sections already written, so a module without a type or an import
    /// section still gets the added ones, in their place.
    wrote_types: bool,
    wrote_imports: bool,
    /// The defined function being rewritten, for errors.
    body: u32,
}

impl ThreadsRewrite {
    fn added_types(&self, types: &mut TypeSection) {
        use ValType::{I32, I64};
        // wait32(addr, expected, timeout_ns, offset) -> 0 woken | 1 not equal | 2 timed out
        types.ty().function([I32, I32, I64, I32], [I32]);
        // wait64(addr, expected, timeout_ns, offset) -> the same
        types.ty().function([I32, I64, I64, I32], [I32]);
        // notify(addr, count, offset) -> how many woke
        types.ty().function([I32, I32, I32], [I32]);
    }

    fn added_imports(&self, imports: &mut ImportSection) {
        for (i, name) in ADDED_IMPORTS.iter().enumerate() {
            imports.import(MODULE, name, EntityType::Function(self.types + i as u32));
        }
    }
}

impl Reencode for ThreadsRewrite {
    type Error = String;

    fn function_index(&mut self, f: u32) -> Result<u32, Error<String>> {
        Ok(if f >= self.imported_funcs { f + ADDED } else { f })
    }

    fn parse_type_section(&mut self, types: &mut TypeSection, section: wasmparser::TypeSectionReader<'_>) -> Result<(), Error<String>> {
        utils::parse_type_section(self, types, section)?;
        self.added_types(types);
        self.wrote_types = true;
        Ok(())
    }

    fn parse_import_section(&mut self, imports: &mut ImportSection, section: wasmparser::ImportSectionReader<'_>) -> Result<(), Error<String>> {
        utils::parse_import_section(self, imports, section)?;
        self.added_imports(imports);
        self.wrote_imports = true;
        Ok(())
    }

    /// Called before every non-custom section and at the end: where the
    /// module has no type or import section of its own, the added ones go
    /// in before the first section that must follow them.
    fn intersperse_section_hook(&mut self, module: &mut wasm_encoder::Module, _after: Option<SectionId>, before: Option<SectionId>) -> Result<(), Error<String>> {
        // Type (1) and Import (2) come first in a module's section order.
        if !self.wrote_types && before != Some(SectionId::Type) {
            let mut types = TypeSection::new();
            self.added_types(&mut types);
            module.section(&types);
            self.wrote_types = true;
        }
        if !self.wrote_imports && before != Some(SectionId::Type) && before != Some(SectionId::Import) {
            let mut imports = ImportSection::new();
            self.added_imports(&mut imports);
            module.section(&imports);
            self.wrote_imports = true;
        }
        Ok(())
    }

    fn parse_custom_section(&mut self, module: &mut wasm_encoder::Module, section: wasmparser::CustomSectionReader<'_>) -> Result<(), Error<String>> {
        if addresses_code(section.name()) {
            return Ok(());
        }
        utils::parse_custom_section(self, module, section)
    }

    fn parse_function_body(&mut self, code: &mut CodeSection, func: wasmparser::FunctionBody<'_>) -> Result<(), Error<String>> {
        let mut f = self.new_function_with_parsed_locals(&func)?;
        let mut reader = func.get_operators_reader()?;
        let function = self.imported_funcs + self.body;
        while !reader.eof() {
            let op = reader.read()?;
            let (memarg, which) = match &op {
                Operator::MemoryAtomicWait32 { memarg } => (*memarg, 0),
                Operator::MemoryAtomicWait64 { memarg } => (*memarg, 1),
                Operator::MemoryAtomicNotify { memarg } => (*memarg, 2),
                _ => {
                    f.instruction(&self.instruction(op)?);
                    continue;
                }
            };
            let name = ADDED_IMPORTS[which as usize];
            if memarg.memory != 0 {
                return Err(Error::UserError(format!("function {function}: an atomic {name} on memory {}, expected memory 0 (the shared memory)", memarg.memory)));
            }
            if self.memory64 {
                return Err(Error::UserError(format!("function {function}: an atomic {name} on a 64-bit memory, expected a 32-bit one (wasm32-wasip1-threads)")));
            }
            // A 32-bit memory's memarg offset is below 2^32 (validated):
            // the i32 carries its bits, and the host reads them as u32.
            f.instructions().i32_const(memarg.offset as u32 as i32).call(self.imported_funcs + which);
        }
        code.function(&f);
        self.body += 1;
        Ok(())
    }
}

/// What went wrong, in words (`Error`'s own text drops the parser's).
fn described(e: Error<String>) -> String {
    match e {
        Error::ParseError(e) => format!("cannot read the module: {e}"),
        Error::UserError(e) => e,
        other => other.to_string(),
    }
}

/// `wasm` with its atomic waits and notifies turned into calls of the
/// [`MODULE`] imports, appended after its own imports; every defined
/// function's index moves up by three. The output is validated. A module
/// without those instructions is rewritten all the same (same code, indices
/// moved, the imports added unused): callers key on
/// [`super::imports_shared_memory`], not on the instructions.
pub fn rewrite(wasm: &[u8]) -> Result<Vec<u8>, String> {
    let e = |err: wasmparser::BinaryReaderError| format!("cannot read the module: {err}");
    let (mut imported_funcs, mut types, mut memory64) = (0u32, 0u32, None);
    for payload in Parser::new(0).parse_all(wasm) {
        match payload.map_err(e)? {
            Payload::TypeSection(r) => {
                for group in r {
                    types += group.map_err(e)?.types().len() as u32;
                }
            }
            Payload::ImportSection(r) => {
                for import in r.into_imports() {
                    match import.map_err(e)?.ty {
                        TypeRef::Func(_) | TypeRef::FuncExact(_) => imported_funcs += 1,
                        TypeRef::Memory(m) => {
                            memory64.get_or_insert(m.memory64);
                        }
                        _ => {}
                    }
                }
            }
            Payload::MemorySection(r) => {
                for m in r {
                    memory64.get_or_insert(m.map_err(e)?.memory64);
                }
            }
            _ => {}
        }
    }
    let mut rw = ThreadsRewrite { imported_funcs, types, memory64: memory64.unwrap_or(false), wrote_types: false, wrote_imports: false, body: 0 };
    let mut module = wasm_encoder::Module::new();
    rw.parse_core_module(&mut module, Parser::new(0), wasm).map_err(described)?;
    let out = module.finish();
    wasmparser::Validator::new_with_features(wasmparser::WasmFeatures::all()).validate_all(&out).map_err(|err| format!("the threads rewrite made an invalid module (a seedfall bug): {err}"))?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::super::{imports_shared_memory, NOTIFY, WAIT32, WAIT64};
    use super::*;
    use wasmparser::WasmFeatures;

    /// The features a wasm32-wasip1-threads module is built with (rustc's
    /// wasm32 defaults are all in WASM2) plus threads, and no more: the
    /// output must not need anything the input did not.
    fn features() -> WasmFeatures {
        WasmFeatures::WASM2 | WasmFeatures::THREADS
    }

    fn validate(wasm: &[u8]) {
        wasmparser::Validator::new_with_features(features()).validate_all(wasm).unwrap_or_else(|e| panic!("invalid module: {e}"));
    }

    /// (module, name, is a function) of every import, in order.
    use super::super::shape::{bodies, func_exports, ops, rewritten_ops, start};

    /// (module, name, is a function) of every import.
    fn imports(wasm: &[u8]) -> Vec<(String, String, bool)> {
        super::super::shape::imports(wasm).into_iter().map(|i| (i.module, i.name, i.func)).collect()
    }

    fn custom_sections(wasm: &[u8]) -> Vec<String> {
        Parser::new(0)
            .parse_all(wasm)
            .filter_map(|p| match p.unwrap() {
                Payload::CustomSection(c) => Some(c.name().to_string()),
                _ => None,
            })
            .collect()
    }

    fn imported_funcs(wasm: &[u8]) -> u32 {
        imports(wasm).iter().filter(|i| i.2).count() as u32
    }

    /// The rewritten module is the original with every function index
    /// above the imports moved up by three, each wait or notify replaced by
    /// `i32.const offset; call import`, the imports appended, and nothing
    /// else changed: checked body by body, operator by operator.
    fn assert_faithful(original: &[u8], rewritten: &[u8]) -> usize {
        validate(rewritten);
        let n = imported_funcs(original);
        let shift = |f: u32| if f >= n { f + ADDED } else { f };
        // Imports: the module's own, then the three, in order.
        let (before, after) = (imports(original), imports(rewritten));
        assert_eq!(after.len(), before.len() + 3);
        assert_eq!(after[..before.len()], before[..]);
        let added: Vec<(String, String, bool)> = ADDED_IMPORTS.iter().map(|name| (MODULE.to_string(), name.to_string(), true)).collect();
        assert_eq!(after[before.len()..], added[..]);
        // Exports and the start function name the same bodies.
        let shifted: Vec<(String, u32)> = func_exports(original).into_iter().map(|(name, f)| (name, shift(f))).collect();
        assert_eq!(func_exports(rewritten), shifted);
        assert_eq!(start(rewritten), start(original).map(shift));
        // Every body, operator by operator.
        let (a, b) = (bodies(original), bodies(rewritten));
        assert_eq!(a.len(), b.len(), "defined functions");
        for (i, (a, b)) in a.iter().zip(&b).enumerate() {
            let want = rewritten_ops(a, n);
            let got = ops(b);
            assert_eq!(got, want, "defined function {i}");
            assert!(!got.iter().any(|o| o.starts_with("MemoryAtomicWait") || o.starts_with("MemoryAtomicNotify")), "defined function {i} still waits or notifies");
        }
        // How many calls of the added imports there are now.
        b.iter().flat_map(ops).filter(|o| (0..ADDED).any(|k| *o == format!("{:?}", Operator::Call { function_index: n + k }))).count()
    }

    const THREADED: &str = r#"
        (module
          (type $v (func))
          (import "wasi_snapshot_preview1" "proc_exit" (func $exit (param i32)))
          (import "env" "memory" (memory 1 16 shared))
          (import "wasi" "thread-spawn" (func $spawn (param i32) (result i32)))
          (table 2 funcref)
          (elem (i32.const 0) func $main $helper)
          (global $f (mut funcref) (ref.func $helper))
          (func $init (call $helper))
          (func $main (export "_start")
            (drop (memory.atomic.wait32 offset=20 (i32.const 64) (i32.const 0) (i64.const -1)))
            (drop (memory.atomic.wait64 (i32.const 128) (i64.const 7) (i64.const 1000)))
            (drop (memory.atomic.notify offset=8 (i32.const 64) (i32.const 1)))
            (drop (call $spawn (i32.const 0)))
            (call_indirect (type $v) (i32.const 1))
            (call $helper))
          (func $helper
            (drop (memory.atomic.notify (i32.const 4) (i32.const -1))))
          (func (export "wasi_thread_start") (param i32 i32) (call $helper) (call $exit (i32.const 0)))
          (start $init)
          (@custom ".debug_info" "dwarf")
          (@custom "metadata.code.branch_hint" "hints")
          (@custom "producers" "kept"))
    "#;

    #[test]
    fn waits_and_notifies_become_calls_of_appended_imports() {
        let original = wat::parse_str(THREADED).unwrap();
        assert!(imports_shared_memory(&original));
        let rewritten = rewrite(&original).unwrap();
        // Two waits and two notifies, each now a call of an added import.
        assert_eq!(assert_faithful(&original, &rewritten), 4);
        // The added imports' types are the documented signatures.
        let engine = wasmtime::Engine::new(wasmtime::Config::new().shared_memory(true)).unwrap();
        let module = wasmtime::Module::new(&engine, &rewritten).unwrap();
        let sig = |name: &str| module.imports().find(|i| i.module() == MODULE && i.name() == name).and_then(|i| i.ty().func().cloned()).map(|f| format!("{:?} -> {:?}", f.params().collect::<Vec<_>>(), f.results().collect::<Vec<_>>()));
        assert_eq!(sig(WAIT32).unwrap(), "[i32, i32, i64, i32] -> [i32]");
        assert_eq!(sig(WAIT64).unwrap(), "[i32, i64, i64, i32] -> [i32]");
        assert_eq!(sig(NOTIFY).unwrap(), "[i32, i32, i32] -> [i32]");
        // Sections that address code are gone; the others stay.
        assert_eq!(custom_sections(&original), [".debug_info", "metadata.code.branch_hint", "producers", "name"]);
        assert_eq!(custom_sections(&rewritten), ["producers", "name"]);
        // The name section names the same functions at their new indices.
        let names = crate::coverage::function_names(&rewritten);
        let n = imported_funcs(&original);
        let shifted: std::collections::BTreeMap<u32, String> = crate::coverage::function_names(&original).into_iter().map(|(f, name)| (if f >= n { f + ADDED } else { f }, name)).collect();
        assert_eq!(names, shifted);
        assert_eq!(names.get(&(n + ADDED + 1)).map(String::as_str), Some("main"));
    }

    #[test]
    fn the_rewritten_module_passes_each_operand_and_offset_to_the_host() {
        use wasmtime::{Caller, Engine, Linker, MemoryType, SharedMemory, Store};
        let original = wat::parse_str(THREADED).unwrap();
        let rewritten = rewrite(&original).unwrap();
        let engine = Engine::new(wasmtime::Config::new().shared_memory(true)).unwrap();
        let module = wasmtime::Module::new(&engine, &rewritten).unwrap();
        let mut store: Store<Vec<String>> = Store::new(&engine, Vec::new());
        let mut linker: Linker<Vec<String>> = Linker::new(&engine);
        linker.define(&store, "env", "memory", SharedMemory::new(&engine, MemoryType::shared(1, 16)).unwrap()).unwrap();
        linker.func_wrap("wasi_snapshot_preview1", "proc_exit", |mut c: Caller<'_, Vec<String>>, code: i32| c.data_mut().push(format!("exit {code}"))).unwrap();
        linker.func_wrap("wasi", "thread-spawn", |mut c: Caller<'_, Vec<String>>, arg: i32| -> i32 {
            c.data_mut().push(format!("spawn {arg}"));
            1
        })
        .unwrap();
        linker.func_wrap(MODULE, WAIT32, |mut c: Caller<'_, Vec<String>>, addr: i32, expected: i32, timeout: i64, offset: i32| -> i32 {
            c.data_mut().push(format!("wait32 {addr}+{offset} {expected} {timeout}"));
            2
        })
        .unwrap();
        linker.func_wrap(MODULE, WAIT64, |mut c: Caller<'_, Vec<String>>, addr: i32, expected: i64, timeout: i64, offset: i32| -> i32 {
            c.data_mut().push(format!("wait64 {addr}+{offset} {expected} {timeout}"));
            1
        })
        .unwrap();
        linker.func_wrap(MODULE, NOTIFY, |mut c: Caller<'_, Vec<String>>, addr: i32, count: i32, offset: i32| -> i32 {
            c.data_mut().push(format!("notify {addr}+{offset} {count}"));
            0
        })
        .unwrap();
        let instance = linker.instantiate(&mut store, &module).unwrap();
        // The start function ran $init, which calls $helper.
        assert_eq!(store.data(), &["notify 4+0 -1"]);
        store.data_mut().clear();
        instance.get_typed_func::<(), ()>(&mut store, "_start").unwrap().call(&mut store, ()).unwrap();
        // In program order; call_indirect through the moved table reached $helper.
        assert_eq!(store.data(), &["wait32 64+20 0 -1", "wait64 128+0 7 1000", "notify 64+8 1", "spawn 0", "notify 4+0 -1", "notify 4+0 -1"]);
        store.data_mut().clear();
        instance.get_typed_func::<(i32, i32), ()>(&mut store, "wasi_thread_start").unwrap().call(&mut store, (1, 0)).unwrap();
        assert_eq!(store.data(), &["notify 4+0 -1", "exit 0"]);
    }

    #[test]
    fn a_module_without_atomics_computes_the_same() {
        use wasmtime::{Engine, Instance, Store};
        let original = wat::parse_str(
            r#"(module
                 (type $un (func (param i32) (result i32)))
                 (table 1 funcref)
                 (elem (i32.const 0) func $fact)
                 (global $g (mut i32) (i32.const 0))
                 (func $fact (type $un)
                   (if (result i32) (i32.le_s (local.get 0) (i32.const 1))
                     (then (i32.const 1))
                     (else (i32.mul (local.get 0) (call $fact (i32.sub (local.get 0) (i32.const 1)))))))
                 (func $set (global.set $g (i32.const 5)))
                 (func (export "run") (param i32) (result i32)
                   (i32.add (global.get $g) (call_indirect (type $un) (local.get 0) (i32.const 0))))
                 (start $set))"#,
        )
        .unwrap();
        assert!(!imports_shared_memory(&original));
        let rewritten = rewrite(&original).unwrap();
        assert_eq!(assert_faithful(&original, &rewritten), 0, "no waits or notifies to replace");
        let engine = Engine::default();
        let run = |wasm: &[u8], n: i32| {
            let mut store = Store::new(&engine, ());
            let module = wasmtime::Module::new(&engine, wasm).unwrap();
            // The added imports are never called: stand-ins that trap would do.
            let imports: Vec<wasmtime::Extern> = module
                .imports()
                .map(|i| wasmtime::Func::new(&mut store, i.ty().func().unwrap().clone(), |_, _, _| Err(wasmtime::format_err!("never called"))).into())
                .collect();
            let instance = Instance::new(&mut store, &module, &imports).unwrap();
            instance.get_typed_func::<i32, i32>(&mut store, "run").unwrap().call(&mut store, n).unwrap()
        };
        for n in [0, 1, 5, 10] {
            assert_eq!(run(&rewritten, n), run(&original, n), "run({n})");
        }
        assert_eq!(run(&rewritten, 5), 125);
    }

    #[test]
    fn modules_without_types_or_imports_get_both_sections() {
        for text in ["(module)", "(module (memory 1))", "(module (func (export \"f\")))", "(module (import \"env\" \"memory\" (memory 1 2 shared)))"] {
            let original = wat::parse_str(text).unwrap();
            let rewritten = rewrite(&original).unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_faithful(&original, &rewritten);
        }
    }

    #[test]
    fn what_it_cannot_rewrite_is_named() {
        let other_memory = wat::parse_str(r#"(module (memory 1) (memory $two 1 1 shared) (func (drop (memory.atomic.notify $two (i32.const 0) (i32.const 1)))))"#).unwrap();
        assert_eq!(rewrite(&other_memory).unwrap_err(), "function 0: an atomic notify on memory 1, expected memory 0 (the shared memory)");
        let wide = wat::parse_str(r#"(module (memory i64 1 1 shared) (func (drop (memory.atomic.notify (i64.const 0) (i32.const 1)))))"#).unwrap();
        assert_eq!(rewrite(&wide).unwrap_err(), "function 0: an atomic notify on a 64-bit memory, expected a 32-bit one (wasm32-wasip1-threads)");
        assert!(rewrite(b"\0asm\x01\0\0\0\x01").unwrap_err().starts_with("cannot read the module: "));
    }

    #[test]
    fn only_an_imported_shared_memory_marks_a_threaded_module() {
        let yes = |text: &str| imports_shared_memory(&wat::parse_str(text).unwrap());
        assert!(yes(r#"(module (import "env" "memory" (memory 1 2 shared)))"#));
        assert!(!yes(r#"(module (import "env" "memory" (memory 1 2)))"#));
        // wasi::thread-spawn alone (a plain wasip1 build) is no threaded module.
        assert!(!yes(r#"(module (import "wasi" "thread-spawn" (func (param i32) (result i32))) (memory 1))"#));
        // A module that defines its own shared memory is not one either.
        assert!(!yes(r#"(module (memory 1 2 shared))"#));
        assert!(!imports_shared_memory(b"not wasm"));
    }
}
