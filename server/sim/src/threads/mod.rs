//! Guest threads: what a module built for `wasm32-wasip1-threads` needs
//! before it can run here, and the names of its thread ABI.
//!
//! Such a module imports one shared linear memory (`env::memory`), spawns
//! threads through `wasi::thread-spawn`, starts each in a new instance of
//! itself at the export `wasi_thread_start(tid, start_arg)`, and blocks and
//! wakes them with `memory.atomic.wait32`/`wait64`/`notify` (every std
//! `Mutex`, `Condvar`, `mpsc` and `park` ends there). In wasmtime those
//! instructions block the OS thread for wall-clock time, which one
//! deterministic run on one OS thread cannot allow, so [`rewrite`] turns
//! each into a call of a host function seedfall defines ([`MODULE`]), where
//! the scheduler can suspend the calling guest thread and pick another.
//!
//! The whole path is keyed on [`imports_shared_memory`]: a module that
//! imports `wasi::thread-spawn` but no shared memory (a plain wasip1 build
//! of a crate that mentions threads) is an ordinary module, and modules
//! without threads are never rewritten, so their bytes and traces stay as
//! they were.
mod rewrite;
pub mod shape;

pub use rewrite::rewrite;

/// The import module of the host functions the rewrite adds: a name no
/// guest toolchain uses, so they can never clash with the guest's imports.
pub const MODULE: &str = "seedfall_threads";
/// `wait32(addr: i32, expected: i32, timeout_ns: i64, offset: i32) -> i32`:
/// `memory.atomic.wait32` at `addr + offset`.
pub const WAIT32: &str = "wait32";
/// `wait64(addr: i32, expected: i64, timeout_ns: i64, offset: i32) -> i32`:
/// `memory.atomic.wait64` at `addr + offset`.
pub const WAIT64: &str = "wait64";
/// `notify(addr: i32, count: i32, offset: i32) -> i32`:
/// `memory.atomic.notify` at `addr + offset`; returns how many woke.
pub const NOTIFY: &str = "notify";
/// The added imports in the order they are appended after the module's own
/// imports (their function indices are the module's imported-function count
/// plus 0, 1 and 2).
pub const ADDED_IMPORTS: [&str; 3] = [WAIT32, WAIT64, NOTIFY];

/// What a wait returns (the threads proposal's codes, which wasi-libc's
/// futex wait maps to 0, -EAGAIN and -ETIMEDOUT).
pub const WAIT_WOKEN: i32 = 0;
/// The memory did not hold `expected`: the wait returned at once.
pub const WAIT_NOT_EQUAL: i32 = 1;
pub const WAIT_TIMED_OUT: i32 = 2;

/// wasi-threads' spawn import: `(start_arg: i32) -> i32`, a thread id from 1
/// up, or a negative number when no thread can start.
pub const SPAWN_MODULE: &str = "wasi";
pub const SPAWN: &str = "thread-spawn";
/// The same import as toolchains of early 2023 (and the wasi-threads test
/// suite's .wat files) spell it.
pub const SPAWN_LEGACY: &str = "thread_spawn";
/// The export a spawned thread runs: `(tid: i32, start_arg: i32) -> ()`.
pub const THREAD_START: &str = "wasi_thread_start";

/// Whether `wasm` imports a shared memory: the mark of a module built for
/// wasm32-wasip1-threads, and the trigger of the threads path (the rewrite,
/// one `SharedMemory` per node instance, a guest thread per spawn). A
/// module that cannot be read answers false: compiling it names the error.
pub fn imports_shared_memory(wasm: &[u8]) -> bool {
    for payload in wasmparser::Parser::new(0).parse_all(wasm) {
        match payload {
            Ok(wasmparser::Payload::ImportSection(r)) => {
                return r.into_imports().any(|i| matches!(i, Ok(wasmparser::Import { ty: wasmparser::TypeRef::Memory(m), .. }) if m.shared));
            }
            // Imports come before every section that defines something:
            // past them, there are none.
            Ok(wasmparser::Payload::FunctionSection(_) | wasmparser::Payload::MemorySection(_) | wasmparser::Payload::CodeSectionStart { .. }) => return false,
            Ok(_) => {}
            Err(_) => return false,
        }
    }
    false
}
