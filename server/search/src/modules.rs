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
    let bytes = std::fs::read(wasm_path).map_err(|e| format!("cannot read {}: {e}", wasm_path.display()))?;
    compiled_bytes(engine, &bytes, wasm_path, cache, log)
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
    let code = engine.precompile(bytes).map_err(|e| format!("{} is not a valid module: {e}", wasm_path.display()))?;
    write_atomic(&path, &code).map_err(|e| format!("cannot write the module cache {}: {e}", path.display()))?;
    // SAFETY: as above; we just wrote it.
    unsafe { engine.load(&path) }
}
