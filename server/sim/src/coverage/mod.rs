//! Function coverage: rewrite a guest module so that the first entry into
//! any function is logged, in order, in a memory the host reads.
//!
//! The rewrite appends one linear memory (exported as `COVERAGE_EXPORT`, a
//! name a guest cannot clash with by accident; its layout is [`Layout`]) and
//! puts at the start of every function body a probe (see [`probe`]): if the
//! function's byte in the bitmap is still 0, set it and append the function
//! index to the log. The host reads the log's new entries at every host call
//! (`node::harvest_coverage`), so it knows when, in virtual time and steps, a
//! function was first entered, to the nearest host call: exploration can
//! branch just after it.
//!
//! Virtual time is charged from fuel, so a probe must not change how much
//! fuel the program burns. The path taken on every entry after the first
//! costs 3 fuel (`i32.const`, `i32.load8_u`, `br_if`; `block` and `end` are
//! free), exactly as the earlier probe (`i32.const`, `i32.const`,
//! `i32.store8`) did; the first entry's extra `FIRST_ENTRY_FUEL` is given
//! back at the host call that reads its log entry. Traces are the same as
//! with the earlier probe unless a fuel quantum ends within the first-entry
//! fuel burnt since the last host call (15 per new function): then a run
//! gains a scheduler step, and the quantum's full charge can put virtual
//! time ahead until the next host call.
//!
//! Adding a memory shifts no index; adding a function import would shift
//! every one, so we do not. `.debug_*` sections are dropped (their offsets
//! would be wrong); the `name` section is kept. Go switches goroutines by
//! unwinding and rewinding the wasm stack, so a probe may run again on
//! resume: it finds its byte set and does nothing.
//!
//! [`Mode::Edges`] adds AFL-style edge probes on top (see [`edges`]); they
//! cost fuel on every execution, so they change virtual timing.
pub mod edges;

use wasm_encoder::{CodeSection, Encode, RawSection, Section};
use wasmparser::{Parser, Payload, TypeRef};

pub const COVERAGE_EXPORT: &str = "__seedfall_coverage";

/// An instrumented module and what the host needs to read its bitmap.
pub struct Instrumented {
    pub wasm: Vec<u8>,
    pub layout: Layout,
    /// Function names from the `name` section, for display (index order).
    pub names: std::collections::BTreeMap<u32, String>,
}

/// Function names from a module's `name` section (empty when it has none).
pub fn function_names(wasm: &[u8]) -> std::collections::BTreeMap<u32, String> {
    let mut names = std::collections::BTreeMap::new();
    for payload in Parser::new(0).parse_all(wasm).flatten() {
        let Payload::CustomSection(c) = payload else { continue };
        let wasmparser::KnownCustom::Name(reader) = c.as_known() else { continue };
        for name in reader.into_iter().flatten() {
            if let wasmparser::Name::Function(map) = name {
                for naming in map.into_iter().flatten() {
                    names.insert(naming.index, naming.name.to_string());
                }
            }
        }
    }
    names
}

pub(crate) fn leb(mut v: u64, out: &mut Vec<u8>) {
    loop {
        let b = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out.push(b);
            return;
        }
        out.push(b | 0x80);
    }
}

fn read_leb(bytes: &[u8]) -> Result<(u64, usize), String> {
    let mut v = 0u64;
    for (i, &b) in bytes.iter().enumerate().take(10) {
        v |= u64::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            return Ok((v, i + 1));
        }
    }
    Err("bad LEB128".into())
}

/// A vector section's payload with one more entry appended.
pub(crate) fn append_entry(payload: &[u8], entry: &[u8]) -> Result<Vec<u8>, String> {
    let (count, n) = read_leb(payload)?;
    let mut out = Vec::with_capacity(payload.len() + entry.len() + 2);
    leb(count + 1, &mut out);
    out.extend_from_slice(&payload[n..]);
    out.extend_from_slice(entry);
    Ok(out)
}

/// Position of a section id in the order the binary format requires.
fn rank(id: u8) -> usize {
    const ORDER: [u8; 13] = [1, 2, 3, 4, 5, 13, 6, 7, 8, 9, 12, 10, 11];
    ORDER.iter().position(|&x| x == id).unwrap_or(0)
}

/// The initial size in bytes of every memory a module defines or imports
/// (read before compiling: a module too big for the pool must be named in
/// the config's terms, not the allocator's).
pub fn memory_starts(wasm: &[u8]) -> Result<Vec<u64>, String> {
    let e = |err: wasmparser::BinaryReaderError| format!("cannot read the module: {err}");
    let bytes = |m: wasmparser::MemoryType| m.initial.saturating_mul(1u64 << m.page_size_log2.unwrap_or(16));
    let mut out = Vec::new();
    for payload in Parser::new(0).parse_all(wasm) {
        match payload.map_err(e)? {
            Payload::ImportSection(r) => {
                for imp in r.into_imports() {
                    if let TypeRef::Memory(m) = imp.map_err(e)?.ty {
                        out.push(bytes(m));
                    }
                }
            }
            Payload::MemorySection(r) => {
                for m in r {
                    out.push(bytes(m.map_err(e)?));
                }
            }
            _ => {}
        }
    }
    Ok(out)
}

/// What a module is instrumented for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Mode {
    /// Function first entries only: timing-neutral (first-entry fuel is
    /// given back), the default.
    #[default]
    Functions,
    /// Function first entries plus AFL-style edge hit counts
    /// ([`edges`]): an exploration aid that changes virtual timing.
    Edges,
}

/// Where things live in the coverage memory: a u32 count of log entries at
/// 0, the log (one u32 function index per first entry, in entry order) at
/// 4, one byte per function index after it, and with `edges` the
/// `edges::MAP_BYTES` hit-count map after that.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    pub functions: u32,
    /// The module has edge probes (`Mode::Edges`) and the map at `edges_at`.
    pub edges: bool,
}

impl Layout {
    pub const COUNT_AT: u32 = 0;
    pub const LOG_AT: u32 = 4;

    pub fn bitmap_at(&self) -> u32 {
        Self::LOG_AT + 4 * self.functions
    }

    /// The edge hit-count map (meaningful only with `edges`).
    pub fn edges_at(&self) -> u32 {
        self.bitmap_at() + self.functions
    }

    pub fn bytes(&self) -> u64 {
        u64::from(self.edges_at()) + if self.edges { u64::from(edges::MAP_BYTES) } else { 0 }
    }
}

/// Fuel a probe burns beyond the usual 3 the first time its function is
/// entered (every instruction of the cold path below costs 1).
pub const FIRST_ENTRY_FUEL: u64 = 15;

/// Memory argument: alignment (log2), the memory index, the offset.
pub(crate) fn memarg(align: u8, memory: u32, offset: u32, out: &mut Vec<u8>) {
    out.push(align | 0x40);
    leb(u64::from(memory), out);
    leb(u64::from(offset), out);
}

/// Signed LEB128 of a non-negative i32 (what `i32.const` takes).
pub(crate) fn sleb(v: u32, out: &mut Vec<u8>) {
    let mut v = i64::from(v);
    loop {
        let b = (v & 0x7f) as u8;
        v >>= 7;
        if (v == 0 && b & 0x40 == 0) || (v == -1 && b & 0x40 != 0) {
            out.push(b);
            return;
        }
        out.push(b | 0x80);
    }
}

/// The probe at the start of function `f`'s body:
///
/// ```wat
/// block
///   i32.const 0  i32.load8_u cov bitmap+f  br_if 0      ;; seen: 3 fuel
///   i32.const 0  i32.const 1  i32.store8 cov bitmap+f    ;; first entry:
///   i32.const 0  i32.load cov 0  i32.const 2  i32.shl     ;;   log[count] = f
///   i32.const f  i32.store cov 4
///   i32.const 0  i32.const 0  i32.load cov 0  i32.const 1  i32.add
///   i32.store cov 0                                       ;;   count += 1
/// end
/// ```
pub fn probe(layout: Layout, memory: u32, f: u32) -> Vec<u8> {
    let at = layout.bitmap_at() + f;
    let mut p = vec![0x02, 0x40, 0x41, 0x00, 0x2d];
    memarg(0, memory, at, &mut p);
    p.extend_from_slice(&[0x0d, 0x00]);
    p.extend_from_slice(&[0x41, 0x00, 0x41, 0x01, 0x3a]);
    memarg(0, memory, at, &mut p);
    p.extend_from_slice(&[0x41, 0x00, 0x28]);
    memarg(2, memory, Layout::COUNT_AT, &mut p);
    p.extend_from_slice(&[0x41, 0x02, 0x74, 0x41]);
    sleb(f, &mut p);
    p.push(0x36);
    memarg(2, memory, Layout::LOG_AT, &mut p);
    p.extend_from_slice(&[0x41, 0x00, 0x41, 0x00, 0x28]);
    memarg(2, memory, Layout::COUNT_AT, &mut p);
    p.extend_from_slice(&[0x41, 0x01, 0x6a, 0x36]);
    memarg(2, memory, Layout::COUNT_AT, &mut p);
    p.push(0x0b);
    p
}

/// Function coverage only (`Mode::Functions`).
pub fn instrument(wasm: &[u8]) -> Result<Instrumented, String> {
    instrument_with(wasm, Mode::Functions)
}

/// Rewrites `wasm` for `mode`: function probes always; with `Mode::Edges`
/// also edge probes, a `prev` global after the existing ones, a scratch i32
/// local at the end of each function's locals, and the edge map in the
/// coverage memory (`edges` module docs). The output is validated.
pub fn instrument_with(wasm: &[u8], mode: Mode) -> Result<Instrumented, String> {
    let e = |err: wasmparser::BinaryReaderError| format!("cannot read the module: {err}");
    let (mut imported_funcs, mut imported_memories, mut defined_memories, mut defined_funcs) = (0u32, 0u32, 0u32, 0u32);
    let (mut imported_globals, mut defined_globals) = (0u32, 0u32);
    // For edge probes' scratch local: each type's parameter count (None for
    // a non-function type) and each defined function's type.
    let (mut type_params, mut func_types): (Vec<Option<u32>>, Vec<u32>) = (Vec::new(), Vec::new());
    let edges_on = mode == Mode::Edges;
    for payload in Parser::new(0).parse_all(wasm) {
        match payload.map_err(e)? {
            Payload::ImportSection(r) => {
                for imp in r.into_imports() {
                    match imp.map_err(e)?.ty {
                        TypeRef::Func(_) | TypeRef::FuncExact(_) => imported_funcs += 1,
                        TypeRef::Memory(_) => imported_memories += 1,
                        TypeRef::Global(_) => imported_globals += 1,
                        _ => {}
                    }
                }
            }
            Payload::MemorySection(r) => defined_memories = r.count(),
            Payload::GlobalSection(r) => defined_globals = r.count(),
            Payload::FunctionSection(r) => {
                defined_funcs = r.count();
                if edges_on {
                    func_types = r.into_iter().collect::<Result<_, _>>().map_err(e)?;
                }
            }
            Payload::TypeSection(r) if edges_on => {
                for group in r {
                    for sub in group.map_err(e)?.types() {
                        type_params.push(match &sub.composite_type.inner {
                            wasmparser::CompositeInnerType::Func(ft) => Some(ft.params().len() as u32),
                            _ => None,
                        });
                    }
                }
            }
            _ => {}
        }
    }
    let functions = imported_funcs + defined_funcs;
    let layout = Layout { functions, edges: edges_on };
    let cov_memory = imported_memories + defined_memories;
    let pages = layout.bytes().div_ceil(65536).max(1);
    let mut memtype = vec![0x01];
    leb(pages, &mut memtype);
    leb(pages, &mut memtype);
    let mut export = Vec::new();
    COVERAGE_EXPORT.encode(&mut export);
    export.push(0x02);
    leb(u64::from(cov_memory), &mut export);
    let empty_memories = append_entry(&[0], &memtype)?;
    let empty_exports = append_entry(&[0], &export)?;
    // Edges: the `prev` global, appended after every existing one.
    let prev_global = edges::PREV_GLOBAL;
    let empty_globals = append_entry(&[0], prev_global)?;
    let edge_sites = edges::Sites { layout, memory: cov_memory, prev: imported_globals + defined_globals };

    let mut out: Vec<u8> = b"\0asm\x01\0\0\0".to_vec();
    let (mut wrote_memory, mut wrote_export) = (false, false);
    let mut wrote_global = !edges_on;
    let mut code: Option<(CodeSection, u32)> = None;
    let mut func_idx = imported_funcs;
    for payload in Parser::new(0).parse_all(wasm) {
        let payload = payload.map_err(e)?;
        if let Some((id, range)) = payload.as_section() {
            // Our memory and export go in before the first section that must follow them.
            if id != 0 && !wrote_memory && id != 5 && rank(id) > rank(5) {
                RawSection { id: 5, data: &empty_memories }.append_to(&mut out);
                wrote_memory = true;
            }
            if id != 0 && !wrote_global && id != 6 && rank(id) > rank(6) {
                RawSection { id: 6, data: &empty_globals }.append_to(&mut out);
                wrote_global = true;
            }
            if id != 0 && !wrote_export && id != 7 && rank(id) > rank(7) {
                RawSection { id: 7, data: &empty_exports }.append_to(&mut out);
                wrote_export = true;
            }
            let data = &wasm[range];
            match (id, &payload) {
                (5, _) => {
                    RawSection { id, data: &append_entry(data, &memtype)? }.append_to(&mut out);
                    wrote_memory = true;
                }
                (6, _) if edges_on => {
                    RawSection { id, data: &append_entry(data, prev_global)? }.append_to(&mut out);
                    wrote_global = true;
                }
                (7, _) => {
                    RawSection { id, data: &append_entry(data, &export)? }.append_to(&mut out);
                    wrote_export = true;
                }
                (10, Payload::CodeSectionStart { count, .. }) => code = Some((CodeSection::new(), *count)),
                (0, Payload::CustomSection(c)) if c.name().starts_with(".debug") => {}
                _ => RawSection { id, data }.append_to(&mut out),
            }
            continue;
        }
        if let Payload::CodeSectionEntry(body) = payload {
            let (section, remaining) = code.as_mut().expect("code entries follow the code section start");
            let range = body.range();
            let ops = body.get_binary_reader_for_operators().map_err(e)?.original_position();
            let probe = probe(layout, cov_memory, func_idx);
            let new_body = if edges_on {
                let ty = func_types.get((func_idx - imported_funcs) as usize).copied();
                let params = ty.and_then(|t| type_params.get(t as usize).copied().flatten()).ok_or("a function's type is not a function type")?;
                edges::body(wasm, &body, func_idx, params, &probe, edge_sites)?
            } else {
                let mut new_body = Vec::with_capacity(range.len() + probe.len());
                new_body.extend_from_slice(&wasm[range.start..ops]);
                new_body.extend_from_slice(&probe);
                new_body.extend_from_slice(&wasm[ops..range.end]);
                new_body
            };
            section.raw(&new_body);
            func_idx += 1;
            *remaining -= 1;
            if *remaining == 0 {
                let (section, _) = code.take().unwrap();
                section.append_to(&mut out);
            }
        }
    }
    assert!(code.is_none(), "every code entry was written");
    if !wrote_memory {
        RawSection { id: 5, data: &empty_memories }.append_to(&mut out);
    }
    if !wrote_global {
        RawSection { id: 6, data: &empty_globals }.append_to(&mut out);
    }
    if !wrote_export {
        RawSection { id: 7, data: &empty_exports }.append_to(&mut out);
    }
    wasmparser::Validator::new_with_features(wasmparser::WasmFeatures::all())
        .validate_all(&out)
        .map_err(|err| format!("the instrumented module is invalid: {err}"))?;
    Ok(Instrumented { wasm: out, layout, names: function_names(wasm) })
}

/// A function first entered in a run: when (virtual time, scheduler step).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub struct FirstEntry {
    pub index: u32,
    pub at_ns: u64,
    pub step: u64,
}

/// What one node instance reached over its whole run, across restarts:
/// a byte per function index, and each first entry in order.
#[derive(Clone, Debug, Default)]
pub struct Reached {
    seen: Vec<u8>,
    pub first: Vec<FirstEntry>,
}

impl Reached {
    /// Notes functions an incarnation entered for the first time; one
    /// entered by an earlier incarnation keeps its first time.
    pub fn note(&mut self, layout: Layout, indices: &[u32], at_ns: u64, step: u64) {
        if self.seen.len() < layout.functions as usize {
            self.seen.resize(layout.functions as usize, 0);
        }
        for &index in indices {
            let Some(b) = self.seen.get_mut(index as usize) else { continue };
            if *b == 0 {
                *b = 1;
                self.first.push(FirstEntry { index, at_ns, step });
            }
        }
    }
}

/// The log entries at and after `from` (function indices in first-entry
/// order) in a coverage memory laid out as `layout`; the count is clamped to
/// the log's size, so a damaged memory cannot make the host read past it.
pub fn log_since(mem: &[u8], layout: Layout, from: u32) -> impl Iterator<Item = u32> + '_ {
    let word = |at: usize| mem.get(at..at + 4).map_or(0, |b| u32::from_le_bytes(b.try_into().unwrap()));
    let count = word(Layout::COUNT_AT as usize).min(layout.functions);
    (from.min(count)..count).map(move |i| word((Layout::LOG_AT + 4 * i) as usize))
}

/// The log's entry count (clamped like `log_since`).
pub fn log_count(mem: &[u8], layout: Layout) -> u32 {
    mem.get(0..4).map_or(0, |b| u32::from_le_bytes(b.try_into().unwrap())).min(layout.functions)
}

#[cfg(test)]
pub(crate) mod tests {
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
}
