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
    compiled_keyed(engine, &module_key(engine, bytes), bytes, wasm_path, cache, log)
}

/// The cache key of `bytes` compiled by `engine`.
fn module_key(engine: &Engine, bytes: &[u8]) -> String {
    hash_hex(&[bytes, &engine.compatibility_key().to_le_bytes()])
}

/// The cached compiled module of key `key`, if the cache holds a readable
/// one; an unreadable one is said, with what happens `next`.
fn cached(engine: &Engine, key: &str, cache: &Cache, next: &str, log: &mut dyn FnMut(&str)) -> Option<Module> {
    let path = cache.path("modules", &format!("{key}.cwasm"));
    if !path.is_file() {
        return None;
    }
    // SAFETY: files under modules/ are written only by `compiled_keyed`, from
    // `Engine::precompile` of an engine with the same compatibility key (the
    // key holds it).
    match unsafe { engine.load(&path) } {
        Ok(m) => Some(m),
        Err(e) => {
            log(&format!("ignoring an unreadable cached module {} ({e}); {next}", path.display()));
            None
        }
    }
}

/// The compiled module of `bytes`, whose key is `key`.
fn compiled_keyed(engine: &Engine, key: &str, bytes: &[u8], wasm_path: &Path, cache: &Cache, log: &mut dyn FnMut(&str)) -> Result<Module, String> {
    if let Some(m) = cached(engine, key, cache, "recompiling", log) {
        return Ok(m);
    }
    let path = cache.path("modules", &format!("{key}.cwasm"));
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

/// A module rewritten for coverage: its compiled code, where its probes
/// write, and its functions' names.
pub struct Instrumented {
    pub module: Module,
    pub layout: seedfall_sim::coverage::Layout,
    pub names: std::collections::BTreeMap<u32, String>,
}

/// What the instrumentation cache keeps of a module (`instrumented`):
/// everything but the rewritten bytes, which only the compiled module's key
/// needed.
#[derive(serde::Serialize, serde::Deserialize)]
struct InstrumentedEntry {
    version: u32,
    mode: seedfall_sim::coverage::Mode,
    module_key: String,
    layout: seedfall_sim::coverage::Layout,
    names: std::collections::BTreeMap<u32, String>,
}

const INSTRUMENTED_VERSION: u32 = 1;

/// The build of seedfall that is running, by its version and its
/// executable's size, inode and modification time: instrumentation is this
/// build's code, so another build rewrites afresh rather than trust what
/// this one cached (installs that fix every mtime still get a new inode).
fn this_build() -> &'static str {
    static STAMP: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    STAMP.get_or_init(|| {
        use std::os::unix::fs::MetadataExt;
        let meta = std::env::current_exe().and_then(std::fs::metadata);
        match meta {
            Ok(m) => {
                let mtime = m.modified().ok().and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok()).map_or(0, |d| d.as_nanos());
                format!("{}-{}-{}-{}-{mtime}", env!("CARGO_PKG_VERSION"), m.len(), m.dev(), m.ino())
            }
            // Nothing to tell builds apart by: this process's own key.
            Err(_) => format!("pid-{}", std::process::id()),
        }
    })
}

/// `raw` (whose content hash is `raw_hash`) rewritten for coverage in
/// `mode` and compiled. Rewriting a large module costs more than running it
/// (a 33 MB nats-server: about 190 ms to rewrite and validate, 40 ms to hash
/// the result, at every load), so the result is cached by the raw module's
/// hash, the mode and this build of seedfall; an entry that cannot be read
/// is said and rebuilt.
pub fn instrumented(engine: &Engine, raw: &[u8], raw_hash: &str, mode: seedfall_sim::coverage::Mode, wasm_path: &Path, cache: &Cache, log: &mut dyn FnMut(&str)) -> Result<Instrumented, String> {
    // The engine's key too: the entry names compiled code, which only an
    // engine of the same settings may load (a profiling engine, another
    // memory limit).
    let engine_key = engine.compatibility_key().to_le_bytes();
    let entry_path = cache.path("instrumented", &format!("{}.json", hash_hex(&[raw_hash.as_bytes(), format!("{mode:?}").as_bytes(), this_build().as_bytes(), &engine_key])));
    if entry_path.is_file() {
        let read = std::fs::read(&entry_path).map_err(|e| e.to_string()).and_then(|b| serde_json::from_slice::<InstrumentedEntry>(&b).map_err(|e| e.to_string()));
        match read {
            Ok(e) if e.version == INSTRUMENTED_VERSION && e.mode == mode => {
                if let Some(module) = cached(engine, &e.module_key, cache, "rewriting", log) {
                    return Ok(Instrumented { module, layout: e.layout, names: e.names });
                }
            }
            Ok(_) => {}
            Err(err) => log(&format!("ignoring an unreadable instrumentation cache entry {} ({err}); rewriting", entry_path.display())),
        }
    }
    let inst = seedfall_sim::coverage::instrument_with(raw, mode)?;
    let key = module_key(engine, &inst.wasm);
    let module = compiled_keyed(engine, &key, &inst.wasm, wasm_path, cache, log)?;
    let entry = InstrumentedEntry { version: INSTRUMENTED_VERSION, mode, module_key: key, layout: inst.layout, names: inst.names };
    let text = serde_json::to_vec(&entry).map_err(|e| e.to_string())?;
    if let Some(dir) = entry_path.parent() {
        crate::cache::clear_stale_tmp(dir);
    }
    // The rewrite is in hand: a cache that cannot take it costs the next
    // load the rewrite again, not this one its run.
    if let Err(e) = write_atomic(&entry_path, &text) {
        log(&format!("cannot write the instrumentation cache {} ({e}); going on without it", entry_path.display()));
    }
    Ok(Instrumented { module, layout: entry.layout, names: entry.names })
}
