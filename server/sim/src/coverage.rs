//! Function coverage: rewrite a guest module so that entering any function
//! marks a byte in a bitmap the host can read.
//!
//! The rewrite appends one linear memory (exported as `COVERAGE_EXPORT`, a
//! name a guest cannot clash with by accident) and puts at the start of every
//! function body `i32.const 0; i32.const 1; i32.store8 (memory cov) offset=F`
//! where F is the function's absolute index. Adding a memory shifts no index;
//! adding a function import would shift every one, so we do not. `.debug_*`
//! sections are dropped (their offsets would be wrong); the `name` section is
//! kept. Go switches goroutines by unwinding and rewinding the wasm stack, so
//! a probe may fire again on resume: harmless for a byte map.
use wasm_encoder::{CodeSection, Encode, RawSection, Section};
use wasmparser::{Parser, Payload, TypeRef};

pub const COVERAGE_EXPORT: &str = "__seedfall_coverage";

/// An instrumented module and what the host needs to read its bitmap.
pub struct Instrumented {
    pub wasm: Vec<u8>,
    /// Bytes of the bitmap that matter: one per function index.
    pub functions: u32,
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

fn leb(mut v: u64, out: &mut Vec<u8>) {
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
fn append_entry(payload: &[u8], entry: &[u8]) -> Result<Vec<u8>, String> {
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

pub fn instrument(wasm: &[u8]) -> Result<Instrumented, String> {
    let e = |err: wasmparser::BinaryReaderError| format!("cannot read the module: {err}");
    let (mut imported_funcs, mut imported_memories, mut defined_memories, mut defined_funcs) = (0u32, 0u32, 0u32, 0u32);
    for payload in Parser::new(0).parse_all(wasm) {
        match payload.map_err(e)? {
            Payload::ImportSection(r) => {
                for imp in r.into_imports() {
                    match imp.map_err(e)?.ty {
                        TypeRef::Func(_) | TypeRef::FuncExact(_) => imported_funcs += 1,
                        TypeRef::Memory(_) => imported_memories += 1,
                        _ => {}
                    }
                }
            }
            Payload::MemorySection(r) => defined_memories = r.count(),
            Payload::FunctionSection(r) => defined_funcs = r.count(),
            _ => {}
        }
    }
    let functions = imported_funcs + defined_funcs;
    let cov_memory = imported_memories + defined_memories;
    let pages = (u64::from(functions) + 1).div_ceil(65536).max(1);
    let mut memtype = vec![0x01];
    leb(pages, &mut memtype);
    leb(pages, &mut memtype);
    let mut export = Vec::new();
    COVERAGE_EXPORT.encode(&mut export);
    export.push(0x02);
    leb(u64::from(cov_memory), &mut export);
    let empty_memories = append_entry(&[0], &memtype)?;
    let empty_exports = append_entry(&[0], &export)?;

    let mut out: Vec<u8> = b"\0asm\x01\0\0\0".to_vec();
    let (mut wrote_memory, mut wrote_export) = (false, false);
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
            let mut probe = vec![0x41, 0x00, 0x41, 0x01, 0x3a, 0x40];
            leb(u64::from(cov_memory), &mut probe);
            leb(u64::from(func_idx), &mut probe);
            let mut new_body = Vec::with_capacity(range.len() + probe.len());
            new_body.extend_from_slice(&wasm[range.start..ops]);
            new_body.extend_from_slice(&probe);
            new_body.extend_from_slice(&wasm[ops..range.end]);
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
    if !wrote_export {
        RawSection { id: 7, data: &empty_exports }.append_to(&mut out);
    }
    wasmparser::Validator::new_with_features(wasmparser::WasmFeatures::all())
        .validate_all(&out)
        .map_err(|err| format!("the instrumented module is invalid: {err}"))?;
    Ok(Instrumented { wasm: out, functions, names: function_names(wasm) })
}

/// Indices of the functions a bitmap marks as reached.
pub fn reached(bitmap: &[u8]) -> Vec<u32> {
    bitmap.iter().enumerate().filter(|(_, &b)| b != 0).map(|(i, _)| i as u32).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probes_mark_called_functions_only() {
        let wasm = wat::parse_str(
            r#"(module
                (import "env" "f" (func $imp))
                (memory 1)
                (func $a (export "a") call $b)
                (func $b)
                (func $c)
                (data (i32.const 0) "x"))"#,
        )
        .unwrap();
        let inst = instrument(&wasm).unwrap();
        assert_eq!(inst.functions, 4);
        assert_eq!(inst.names.get(&1).map(String::as_str), Some("a"), "names come from the name section");
        let engine = wasmtime::Engine::default();
        let module = wasmtime::Module::new(&engine, &inst.wasm).unwrap();
        let mut store = wasmtime::Store::new(&engine, ());
        let imp = wasmtime::Func::wrap(&mut store, || {});
        let instance = wasmtime::Instance::new(&mut store, &module, &[imp.into()]).unwrap();
        instance.get_typed_func::<(), ()>(&mut store, "a").unwrap().call(&mut store, ()).unwrap();
        let cov = instance.get_memory(&mut store, COVERAGE_EXPORT).unwrap();
        let bitmap = cov.data(&store)[..4].to_vec();
        assert_eq!(reached(&bitmap), vec![1, 2], "a and b ran, c did not, the import has no probe");
    }
}
