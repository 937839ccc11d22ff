//! The wasmtime engine, configured for determinism.
//!
//! Every option that matters for determinism or cost is spelled out here:
//! fuel metering on (preemption and the watchdog are counted in
//! instructions, never in wall time), atomics and shared memories on for
//! guests built for wasm32-wasip1-threads (their threads never become OS
//! threads: each is a fiber of the run's one thread, and its atomic waits
//! are rewritten into host calls by `threads`), relaxed SIMD in its
//! deterministic mode, NaN canonicalisation as a switch (needed only for
//! float identity across CPU architectures; costs ~3.7x on float code).
use wasmtime::{Config, InstanceAllocationStrategy, Module, OptLevel, PoolingAllocationConfig, Strategy};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EngineOptions {
    pub canonicalize_nans: bool,
    /// The most linear memory one node instance may use.
    pub memory_bytes_max: u64,
    /// Node instances alive at once across all worker threads (pool slots).
    pub instances_max: u32,
    /// Compile epoch checks in, for sampling guest stacks
    /// (`guest_profile`). Other compiled code: modules are cached apart.
    pub guest_profiling: bool,
}

impl Default for EngineOptions {
    fn default() -> Self {
        EngineOptions { canonicalize_nans: false, memory_bytes_max: 512 << 20, instances_max: 512, guest_profiling: false }
    }
}

#[derive(Clone)]
pub struct Engine {
    pub(crate) inner: wasmtime::Engine,
    pub options: EngineOptions,
}

/// Native stack a node's fiber may use (virtual memory, reserved per node).
pub const ASYNC_STACK_BYTES: usize = 2 << 20;
pub const WASM_STACK_BYTES: usize = 1 << 20;
/// Frames of a trap's backtrace a failure report reads (a profiling engine
/// captures more; reports cut them to this, so they read the same).
pub const TRAP_FRAMES_MAX: usize = 32;
/// Bytes of a freed pool slot reset with memset instead of returned to the
/// kernel: cheaper for small guests, and spares parallel workers the
/// address-space lock (measured in scripts/bench).
pub const KEEP_RESIDENT_BYTES: usize = 1 << 20;
/// The same for linear memory, larger, where the kernel can tell which
/// pages a run dirtied (PAGEMAP_SCAN, Linux 6.7+): a Go guest restarted
/// after a crash touches tens of MiB again, and memset of only the dirtied
/// pages is cheaper than handing them back and faulting them in zeroed.
/// bbolt crashed 15 times a virtual second runs 1.16x faster at 128 MiB
/// than at 1 MiB, peak memory unchanged (a slot holds at most what its last
/// instance touched; docs/performance.md). Without the scan, wasmtime would
/// memset the whole kept part at every reset, so older kernels keep 1 MiB.
pub const MEMORY_KEEP_RESIDENT_BYTES: usize = 128 << 20;

/// Whether this kernel has PAGEMAP_SCAN (Linux 6.7 or later).
fn kernel_has_pagemap_scan() -> bool {
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    let mut parts = release.trim().split(|c: char| !c.is_ascii_digit()).map(|p| p.parse::<u32>().unwrap_or(0));
    let (major, minor) = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
    (major, minor) >= (6, 7)
}

impl Engine {
    pub fn new(options: EngineOptions) -> Result<Engine, String> {
        let mut c = Config::new();
        c.strategy(Strategy::Cranelift)
            .cranelift_opt_level(OptLevel::Speed)
            .consume_fuel(true)
            .epoch_interruption(false)
            // Atomics and shared memories validate and compile; modules
            // without them compile to the same code as before. A shared
            // memory is created by seedfall (`SharedMemory::new`) and
            // imported, never defined by the module: the pooling allocator
            // refuses defined shared memories, and an imported one is no
            // pool slot.
            .wasm_threads(true)
            .shared_memory(true)
            .wasm_multi_memory(true)
            .wasm_relaxed_simd(true)
            .relaxed_simd_deterministic(true)
            .cranelift_nan_canonicalization(options.canonicalize_nans)
            .async_stack_size(ASYNC_STACK_BYTES)
            .max_wasm_stack(WASM_STACK_BYTES)
            .parallel_compilation(true)
            // No wasm-offset map: nothing reads frames' module offsets, and
            // a backtrace (taken at every exit and every dropped node)
            // spent most of its time decoding it.
            .generate_address_map(false)
            .wasm_backtrace_max_frames(std::num::NonZeroUsize::new(if options.guest_profiling { crate::guest_profile::FRAMES_MAX } else { TRAP_FRAMES_MAX }));
        if options.guest_profiling {
            // Checks cost no fuel: a profiled run is the same run.
            c.epoch_interruption(true);
        }
        // The pooling allocator reuses instance slots instead of mapping and
        // unmapping memory per run: cheaper, and it keeps parallel workers from
        // contending on the kernel's address-space lock. Slots only reserve
        // address space until used.
        let mut pool = PoolingAllocationConfig::new();
        pool.total_core_instances(options.instances_max)
            .total_memories(options.instances_max * 2)
            .total_tables(options.instances_max)
            .total_stacks(options.instances_max)
            // A module's own memory and coverage's; an imported shared
            // memory is not counted.
            .max_memories_per_module(2)
            .max_tables_per_module(1)
            .table_elements(200_000)
            .max_core_instance_size(4 << 20)
            .max_memory_size(options.memory_bytes_max as usize)
            .linear_memory_keep_resident(if kernel_has_pagemap_scan() { MEMORY_KEEP_RESIDENT_BYTES } else { KEEP_RESIDENT_BYTES })
            .table_keep_resident(KEEP_RESIDENT_BYTES)
            .async_stack_keep_resident(KEEP_RESIDENT_BYTES)
            // Reset only the pages a run dirtied (Linux 6.7+, else the plain
            // memset of the low KEEP_RESIDENT_BYTES): a small guest touches
            // a few pages of its memory and table, and memset of the whole
            // resident part was 15% of an echo run (scripts/bench).
            .pagemap_scan(wasmtime::Enabled::Auto);
        c.allocation_strategy(InstanceAllocationStrategy::Pooling(pool));
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

    /// One sampling tick for every store of a profiling engine
    /// (`guest_profile`); called from outside the runs, by a timer.
    pub fn tick_epoch(&self) {
        self.inner.increment_epoch();
    }

    /// Changes whenever compiled code from another engine could not be used
    /// by this one (wasmtime version, target, settings).
    pub fn compatibility_key(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = crate::hash::StableHasher::default();
        self.inner.precompile_compatibility_hash().hash(&mut h);
        "wasmtime-48.0.8".hash(&mut h);
        self.options.canonicalize_nans.hash(&mut h);
        self.options.memory_bytes_max.hash(&mut h);
        self.options.instances_max.hash(&mut h);
        // Only when on: plain engines keep the keys (and caches) they had.
        if self.options.guest_profiling {
            "guest-profiling".hash(&mut h);
        }
        h.finish()
    }
}
