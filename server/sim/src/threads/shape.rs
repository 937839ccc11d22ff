//! What a module's imports, function exports, start function and bodies are: what
//! the threads rewrite must keep (every function index it shifts), read
//! back by its tests on hand-written and on real guest modules.
use wasmparser::{ExternalKind, FunctionBody, Operator, Parser, Payload, TypeRef};

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

/// Every function body, in order.
pub fn bodies(wasm: &[u8]) -> Vec<FunctionBody<'_>> {
    Parser::new(0)
        .parse_all(wasm)
        .filter_map(|p| match p.expect("a module that parses") {
            Payload::CodeSectionEntry(b) => Some(b),
            _ => None,
        })
        .collect()
}

/// A body's operators, each as its `{:?}` text.
pub fn ops(body: &FunctionBody<'_>) -> Vec<String> {
    let mut r = body.get_operators_reader().expect("a body that parses");
    let mut out = Vec::new();
    while !r.eof() {
        out.push(format!("{:?}", r.read().expect("an operator that parses")));
    }
    out
}

/// What the rewrite must make of `original` (a body of a module with
/// `imported` imported functions before it), as `ops` prints it: each wait
/// or notify `i32.const offset; call <added import>`, every call of a
/// defined function shifted past the three added imports, all else as is.
pub fn rewritten_ops(original: &FunctionBody<'_>, imported: u32) -> Vec<String> {
    let added = super::ADDED_IMPORTS.len() as u32;
    let shift = |f: u32| if f >= imported { f + added } else { f };
    let mut r = original.get_operators_reader().expect("a body that parses");
    let mut want = Vec::new();
    while !r.eof() {
        let op = r.read().expect("an operator that parses");
        let call = |which: u32, offset: u64| [format!("{:?}", Operator::I32Const { value: offset as u32 as i32 }), format!("{:?}", Operator::Call { function_index: imported + which })];
        match op {
            Operator::MemoryAtomicWait32 { memarg } => want.extend(call(0, memarg.offset)),
            Operator::MemoryAtomicWait64 { memarg } => want.extend(call(1, memarg.offset)),
            Operator::MemoryAtomicNotify { memarg } => want.extend(call(2, memarg.offset)),
            Operator::Call { function_index } => want.push(format!("{:?}", Operator::Call { function_index: shift(function_index) })),
            Operator::ReturnCall { function_index } => want.push(format!("{:?}", Operator::ReturnCall { function_index: shift(function_index) })),
            Operator::RefFunc { function_index } => want.push(format!("{:?}", Operator::RefFunc { function_index: shift(function_index) })),
            other => want.push(format!("{other:?}")),
        }
    }
    want
}
