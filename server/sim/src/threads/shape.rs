//! What a module's imports, function exports and start function are: what
//! the threads rewrite must keep (every function index it shifts), read
//! back by its tests on hand-written and on real guest modules.
use wasmparser::{ExternalKind, Parser, Payload, TypeRef};

/// One import of a module.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Import {
    pub module: String,
    pub name: String,
    /// A function (else a memory, a table, a global or a tag).
    pub func: bool,
    pub shared_memory: bool,
}

/// Every import, in order; panics on a module that does not parse (for
/// tests: the rewrite validates what it writes).
pub fn imports(wasm: &[u8]) -> Vec<Import> {
    let mut out = Vec::new();
    for p in Parser::new(0).parse_all(wasm) {
        if let Payload::ImportSection(r) = p.expect("a module that parses") {
            for i in r.into_imports() {
                let i = i.expect("an import that parses");
                out.push(Import { module: i.module.to_string(), name: i.name.to_string(), func: matches!(i.ty, TypeRef::Func(_)), shared_memory: matches!(i.ty, TypeRef::Memory(m) if m.shared) });
            }
        }
    }
    out
}

/// Every function export: (name, function index).
pub fn func_exports(wasm: &[u8]) -> Vec<(String, u32)> {
    let mut out = Vec::new();
    for p in Parser::new(0).parse_all(wasm) {
        if let Payload::ExportSection(r) = p.expect("a module that parses") {
            for x in r {
                let x = x.expect("an export that parses");
                if x.kind == ExternalKind::Func {
                    out.push((x.name.to_string(), x.index));
                }
            }
        }
    }
    out
}

/// The start function's index, if the module has one.
pub fn start(wasm: &[u8]) -> Option<u32> {
    Parser::new(0).parse_all(wasm).find_map(|p| match p.expect("a module that parses") {
        Payload::StartSection { func, .. } => Some(func),
        _ => None,
    })
}
