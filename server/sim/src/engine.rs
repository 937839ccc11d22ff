//! The wasmtime engine, configured for determinism.
//!
//! Every option that matters for determinism or cost is spelled out here:
//! fuel metering on (preemption and the watchdog are counted in
//! instructions, never in wall time), threads off, relaxed SIMD in its
//! deterministic mode, NaN canonicalisation as a switch (needed only for
//! float identity across CPU architectures; costs ~3.7x on float code).
use wasmtime::{Config, Module, OptLevel, Strategy};

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EngineOptions {
    pub canonicalize_nans: bool,
}

#[derive(Clone)]
pub struct Engine {
    pub(crate) inner: wasmtime::Engine,
    pub options: EngineOptions,
}

/// Native stack a node's fiber may use (virtual memory, reserved per node).
pub const ASYNC_STACK_BYTES: usize = 2 << 20;
pub const WASM_STACK_BYTES: usize = 1 << 20;

impl Engine {
    pub fn new(options: EngineOptions) -> Result<Engine, String> {
        let mut c = Config::new();
        c.strategy(Strategy::Cranelift)
            .cranelift_opt_level(OptLevel::Speed)
            .consume_fuel(true)
            .epoch_interruption(false)
            // Threads are off: the `threads` feature is not compiled into wasmtime.
            .wasm_relaxed_simd(true)
            .relaxed_simd_deterministic(true)
            .cranelift_nan_canonicalization(options.canonicalize_nans)
            .async_stack_size(ASYNC_STACK_BYTES)
            .max_wasm_stack(WASM_STACK_BYTES)
            .parallel_compilation(true)
            .wasm_backtrace_max_frames(std::num::NonZeroUsize::new(32));
        let inner = wasmtime::Engine::new(&c).map_err(|e| format!("cannot configure wasmtime: {e}"))?;
        Ok(Engine { inner, options })
    }

    pub fn compile(&self, wasm: &[u8]) -> Result<Module, String> {
        Module::new(&self.inner, wasm).map_err(|e| format!("{e:#}"))
    }

    /// Compiled machine code for `wasm`, to cache on disk.
    pub fn precompile(&self, wasm: &[u8]) -> Result<Vec<u8>, String> {
        self.inner.precompile_module(wasm).map_err(|e| format!("{e:#}"))
    }

    /// Loads compiled code written by [`Engine::precompile`].
    ///
    /// # Safety
    /// The file must have been written by `precompile` of a compatible engine
    /// (the cache keys files by [`Engine::compatibility_key`]) and not changed
    /// since: wasmtime maps it and runs it as machine code.
    pub unsafe fn load(&self, path: &std::path::Path) -> Result<Module, String> {
        unsafe { Module::deserialize_file(&self.inner, path) }.map_err(|e| format!("{e:#}"))
    }

    /// Changes whenever compiled code from another engine could not be used
    /// by this one (wasmtime version, target, settings).
    pub fn compatibility_key(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = crate::trace::StableHasher::default();
        self.inner.precompile_compatibility_hash().hash(&mut h);
        "wasmtime-48.0.8".hash(&mut h);
        self.options.canonicalize_nans.hash(&mut h);
        h.finish()
    }
}
