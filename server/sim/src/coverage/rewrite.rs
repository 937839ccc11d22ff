//! The module rewriting: the coverage memory, its export and (for edges)
//! the `prev` global appended to their sections, and every function body
//! given its probes; plus what is read of a module before (its memories'
//! sizes, its function names).
use super::edges::{self, Sites};
use super::encode::{append_entry, leb, rank};
use super::functions::probe;
use super::{Layout, Mode, COVERAGE_EXPORT};
use wasm_encoder::{CodeSection, Encode, RawSection, Section};
use wasmparser::{FunctionBody, Operator, OperatorsReader, Parser, Payload, TypeRef};

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
    // What the rewrite appends, by section id: our memory, with edges the
    // `prev` global (after every existing one), and our memory's export;
    // and whether its section was written yet.
    let mut added: Vec<(u8, &[u8], bool)> = vec![(5, &memtype, false)];
    if edges_on {
        added.push((6, edges::PREV_GLOBAL, false));
    }
    added.push((7, &export, false));
    let edge_sites = Sites { layout, memory: cov_memory, prev: imported_globals + defined_globals };

    let mut out: Vec<u8> = b"\0asm\x01\0\0\0".to_vec();
    let mut code: Option<(CodeSection, u32)> = None;
    let mut func_idx = imported_funcs;
    for payload in Parser::new(0).parse_all(wasm) {
        let payload = payload.map_err(e)?;
        if let Some((id, range)) = payload.as_section() {
            // A section of ours the module lacks goes in, on its own, before
            // the first section that must follow it.
            for (added_id, entry, written) in added.iter_mut() {
                if id != 0 && !*written && id != *added_id && rank(id) > rank(*added_id) {
                    RawSection { id: *added_id, data: &append_entry(&[0], entry)? }.append_to(&mut out);
                    *written = true;
                }
            }
            let data = &wasm[range];
            if let Some((_, entry, written)) = added.iter_mut().find(|(added_id, _, _)| *added_id == id) {
                RawSection { id, data: &append_entry(data, entry)? }.append_to(&mut out);
                *written = true;
                continue;
            }
            match (id, &payload) {
                (10, Payload::CodeSectionStart { count, .. }) => code = Some((CodeSection::new(), *count)),
                (0, Payload::CustomSection(c)) if c.name().starts_with(".debug") => {}
                _ => RawSection { id, data }.append_to(&mut out),
            }
            continue;
        }
        if let Payload::CodeSectionEntry(body) = payload {
            let (section, remaining) = code.as_mut().expect("code entries follow the code section start");
            let edge_probes = if edges_on {
                let ty = func_types.get((func_idx - imported_funcs) as usize).copied();
                let params = ty.and_then(|t| type_params.get(t as usize).copied().flatten()).ok_or("a function's type is not a function type")?;
                Some((params, edge_sites))
            } else {
                None
            };
            section.raw(&with_probes(wasm, &body, func_idx, &probe(layout, cov_memory, func_idx), edge_probes)?);
            func_idx += 1;
            *remaining -= 1;
            if *remaining == 0 {
                let (section, _) = code.take().unwrap();
                section.append_to(&mut out);
            }
        }
    }
    assert!(code.is_none(), "every code entry was written");
    for (id, entry, written) in added {
        if !written {
            RawSection { id, data: &append_entry(&[0], entry)? }.append_to(&mut out);
        }
    }
    wasmparser::Validator::new_with_features(wasmparser::WasmFeatures::all())
        .validate_all(&out)
        .map_err(|err| format!("the instrumented module is invalid: {err}"))?;
    Ok(Instrumented { wasm: out, layout, names: function_names(wasm) })
}

/// Function `f`'s body rewritten: `fn_probe` at its entry. With `edge_probes`
/// (`params`, the function type's parameter count: local indices start
/// after the parameters), also one more i32 local (the edge probes'
/// scratch), an edge probe at its entry after `fn_probe`, and one at every
/// other basic-block start (`edges` module docs).
fn with_probes(wasm: &[u8], body: &FunctionBody<'_>, f: u32, fn_probe: &[u8], edge_probes: Option<(u32, Sites)>) -> Result<Vec<u8>, String> {
    let e = |err: wasmparser::BinaryReaderError| format!("cannot read the module: {err}");
    let range = body.range();
    let reader = body.get_binary_reader_for_operators().map_err(e)?;
    let ops_start = reader.original_position();
    let Some((params, sites)) = edge_probes else {
        let mut out = Vec::with_capacity(range.len() + fn_probe.len());
        out.extend_from_slice(&wasm[range.start..ops_start]);
        out.extend_from_slice(fn_probe);
        out.extend_from_slice(&wasm[ops_start..range.end]);
        return Ok(out);
    };
    let mut locals = body.get_locals_reader().map_err(e)?;
    let mut declared = u64::from(params);
    for _ in 0..locals.get_count() {
        declared += u64::from(locals.read().map_err(e)?.0);
    }
    let scratch = u32::try_from(declared).map_err(|_| "a function has too many locals".to_string())?;
    let mut out = append_entry(&wasm[range.start..ops_start], &[0x01, 0x7f])?;
    out.reserve(range.len() * 2);
    out.extend_from_slice(fn_probe);
    out.extend_from_slice(&edges::probe(sites, scratch, edges::site(f, 0)));
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
            out.extend_from_slice(&edges::probe(sites, scratch, edges::site(f, (after - ops_start) as u32)));
        }
    }
    out.extend_from_slice(&wasm[copied..range.end]);
    Ok(out)
}
