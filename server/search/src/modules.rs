//! Compiled modules, cached on disk: compiling a Go guest takes seconds,
//! loading its cached code takes under a millisecond.
//!
//! A cache entry is keyed by the wasm bytes' hash and the engine's
//! compatibility key (wasmtime version and settings), and is only ever a file
//! this code wrote (atomically), which is what makes loading it sound.
use crate::cache::{hash_hex, write_atomic, Cache};
use seedfall_sim::Engine;
use std::path::Path;
use wasmtime::Module;

pub fn compiled(engine: &Engine, wasm_path: &Path, cache: &Cache, log: &mut dyn FnMut(&str)) -> Result<Module, String> {
    let bytes = seedfall_sim::files::read_bytes(wasm_path, seedfall_sim::files::MODULE_BYTES_MAX, "the module")?;
    compiled_bytes(engine, &bytes, wasm_path, cache, log)
}

/// A file that is not a wasm module at all gets one line saying so, not a
/// parser's dump of its first bytes.
pub fn check_magic(bytes: &[u8], wasm_path: &Path) -> Result<(), String> {
    if !bytes.starts_with(b"\0asm") {
        let shown: String = bytes.iter().take(8).map(|b| format!("{b:02x}")).collect::<Vec<_>>().join(" ");
        return Err(format!("{} is not a WebAssembly module (a module starts with 00 61 73 6d, this one with {shown})", wasm_path.display()));
    }
    Ok(())
}

/// Like `compiled`, for bytes already in hand (an instrumented module).
pub fn compiled_bytes(engine: &Engine, bytes: &[u8], wasm_path: &Path, cache: &Cache, log: &mut dyn FnMut(&str)) -> Result<Module, String> {
    let key = hash_hex(&[bytes, &engine.compatibility_key().to_le_bytes()]);
    let path = cache.path("modules", &format!("{key}.cwasm"));
    if path.is_file() {
        // SAFETY: files under modules/ are written only by this function, from
        // `Engine::precompile` of an engine with the same compatibility key.
        match unsafe { engine.load(&path) } {
            Ok(m) => return Ok(m),
            Err(e) => log(&format!("ignoring an unreadable cached module {} ({e}); recompiling", path.display())),
        }
    }
    log(&format!("compiling {} ({} KiB)", wasm_path.file_name().unwrap_or_default().to_string_lossy(), bytes.len() / 1024));
    check_magic(bytes, wasm_path)?;
    // wasmtime's error may carry a dump of the bytes around the fault: the
    // first line says what is wrong.
    let code = engine.precompile(bytes).map_err(|e| {
        let text = e.to_string();
        let first = text.lines().next().unwrap_or("").trim_end_matches(':');
        format!("{} is not a valid module: {first}", wasm_path.display())
    })?;
    if let Some(dir) = path.parent() {
        crate::cache::clear_stale_tmp(dir);
    }
    write_atomic(&path, &code).map_err(|e| format!("cannot write the module cache {}: {e}", path.display()))?;
    // SAFETY: as above; we just wrote it.
    unsafe { engine.load(&path) }
}
