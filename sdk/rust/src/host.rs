//! The boundary to the seedfall host: on `wasm32` the imports of the
//! `seedfall` module this SDK uses (see docs/abi.md), elsewhere a native
//! stand-in so the same program builds and runs outside the simulator
//! (failures go to stderr, randomness is a time-seeded xorshift, buggify
//! never fires, guidance does nothing, the oracle is this process's memory
//! under the host's bounds). Under `cfg(test)` every property evaluation and
//! guidance call is also recorded for the unit tests.

/// `kind` values of the `assert` import (docs/abi.md).
pub const ALWAYS: u32 = 0;
/// Fails when ever false; never reaching it is fine.
pub const ALWAYS_OR_UNREACHABLE: u32 = 1;
/// Fails when never true in any run of the sweep.
pub const SOMETIMES: u32 = 2;
/// Fails when never reached in any run of the sweep.
pub const REACHABLE: u32 = 3;
/// Fails when ever reached.
pub const UNREACHABLE: u32 = 4;

/// The kind is the low 8 bits of `kind`; bits 8-15 carry a numeric form's
/// comparison, so the host reads `"left"`/`"right"` from the details and
/// guides `left - right` toward the bound (docs/abi.md).
pub const KIND_MASK: u32 = 0xff;
/// `left > right`.
pub const OP_GT: u32 = 1 << 8;
/// `left >= right`.
pub const OP_GE: u32 = 2 << 8;
/// `left < right`.
pub const OP_LT: u32 = 3 << 8;
/// `left <= right`.
pub const OP_LE: u32 = 4 << 8;

/// Bounds of the test oracle, the host's (`ORACLE_*` in server/sim/src/abi.rs).
pub const ORACLE_KEY_BYTES_MAX: usize = 1024;
pub const ORACLE_VALUE_BYTES_MAX: usize = 64 << 10;
pub const ORACLE_KEYS_MAX: usize = 10_000;

/// One evaluation of a property.
pub fn assert(kind: u32, cond: bool, msg: &str, details: &str, loc: &str) {
    #[cfg(test)]
    recorder::record(kind, cond, msg, details, loc);
    imp::assert(kind, cond, msg, details, loc);
}

/// The workload finished its set-up (no details).
pub fn setup_complete() {
    imp::setup_complete("");
}

/// 64 bits from the run's `random` stream.
pub fn random_u64() -> u64 {
    imp::random_u64()
}

/// Whether the buggify site `site` fires now.
pub fn buggify(site: &str) -> bool {
    imp::buggify(site)
}

/// One value of the guided quantity `name` (the `guide` import).
pub fn guide(maximize: bool, value: f64, name: &str) {
    #[cfg(test)]
    recorder::record_guide(maximize, value, name);
    imp::guide(maximize, value, name);
}

/// Stores `value` under `key` in the run's oracle (bounds checked by the caller).
pub fn oracle_put(key: &str, value: &[u8]) {
    imp::oracle_put(key, value)
}

/// The value stored under `key`, if any.
pub fn oracle_get(key: &str) -> Option<Vec<u8>> {
    imp::oracle_get(key)
}

#[cfg(target_arch = "wasm32")]
mod imp {
    #[link(wasm_import_module = "seedfall")]
    extern "C" {
        #[link_name = "assert"]
        fn sf_assert(
            kind: u32,
            cond: u32,
            msg_ptr: *const u8,
            msg_len: usize,
            details_ptr: *const u8,
            details_len: usize,
            loc_ptr: *const u8,
            loc_len: usize,
        );
        #[link_name = "setup_complete"]
        fn sf_setup_complete(details_ptr: *const u8, details_len: usize);
        #[link_name = "random_u64"]
        fn sf_random_u64() -> u64;
        #[link_name = "buggify"]
        fn sf_buggify(site_ptr: *const u8, site_len: usize) -> u32;
        #[link_name = "guide"]
        fn sf_guide(maximize: u32, value: f64, name_ptr: *const u8, name_len: usize);
        #[link_name = "oracle_put"]
        fn sf_oracle_put(key_ptr: *const u8, key_len: usize, value_ptr: *const u8, value_len: usize);
        #[link_name = "oracle_get"]
        fn sf_oracle_get(key_ptr: *const u8, key_len: usize, buf_ptr: *mut u8, buf_len: usize) -> i32;
    }

    pub fn assert(kind: u32, cond: bool, msg: &str, details: &str, loc: &str) {
        // SAFETY: the host only reads the three (pointer, length) ranges,
        // each a live &str for the duration of the call.
        unsafe {
            sf_assert(
                kind,
                cond as u32,
                msg.as_ptr(),
                msg.len(),
                details.as_ptr(),
                details.len(),
                loc.as_ptr(),
                loc.len(),
            )
        }
    }

    pub fn setup_complete(details: &str) {
        // SAFETY: the host only reads `details`, live for the call.
        unsafe { sf_setup_complete(details.as_ptr(), details.len()) }
    }

    pub fn random_u64() -> u64 {
        // SAFETY: no arguments, no memory access.
        unsafe { sf_random_u64() }
    }

    pub fn buggify(site: &str) -> bool {
        // SAFETY: the host only reads `site`, live for the call.
        unsafe { sf_buggify(site.as_ptr(), site.len()) != 0 }
    }

    pub fn guide(maximize: bool, value: f64, name: &str) {
        // SAFETY: the host only reads `name`, live for the call.
        unsafe { sf_guide(maximize as u32, value, name.as_ptr(), name.len()) }
    }

    pub fn oracle_put(key: &str, value: &[u8]) {
        // SAFETY: the host only reads the two ranges, live for the call.
        unsafe { sf_oracle_put(key.as_ptr(), key.len(), value.as_ptr(), value.len()) }
    }

    pub fn oracle_get(key: &str) -> Option<Vec<u8>> {
        // The host answers the value's length and copies it only when it
        // fits. A small buffer first; a larger value is read again into
        // room for the largest value the host keeps, not its exact size:
        // between the two calls another thread of this program (built for
        // wasm32-wasip1-threads) may remember a larger value under the key,
        // since a host call is where the scheduler may switch threads.
        let mut buf = vec![0u8; 256];
        for _ in 0..2 {
            // SAFETY: the host reads `key` and writes at most `buf.len()`
            // bytes into `buf`, both live for the call.
            let n = unsafe { sf_oracle_get(key.as_ptr(), key.len(), buf.as_mut_ptr(), buf.len()) };
            let Ok(n) = usize::try_from(n) else { return None };
            if n <= buf.len() {
                buf.truncate(n);
                return Some(buf);
            }
            buf = vec![0u8; super::ORACLE_VALUE_BYTES_MAX];
        }
        // The second buffer holds any value the host keeps.
        unreachable!("seedfall oracle value for {key:?} is over ORACLE_VALUE_BYTES_MAX bytes")
    }
}

#[cfg(not(target_arch = "wasm32"))]
mod imp {
    use std::sync::atomic::{AtomicU64, Ordering};

    pub fn assert(kind: u32, cond: bool, msg: &str, _details: &str, _loc: &str) {
        let failed = match kind & super::KIND_MASK {
            super::ALWAYS | super::ALWAYS_OR_UNREACHABLE => !cond,
            super::UNREACHABLE => true,
            _ => false,
        };
        if failed {
            eprintln!("seedfall: property failed: {msg}");
        }
    }

    pub fn setup_complete(_details: &str) {}

    /// xorshift64 state; 0 means "not seeded yet" (xorshift never yields 0).
    static STATE: AtomicU64 = AtomicU64::new(0);

    fn seed() -> u64 {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0);
        // splitmix64 finaliser: spreads the clock's low-entropy bits.
        let mut z = nanos.wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        if z == 0 {
            0x2545_f491_4f6c_dd1d
        } else {
            z
        }
    }

    fn step(mut x: u64) -> u64 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    }

    pub fn random_u64() -> u64 {
        let mut cur = STATE.load(Ordering::Relaxed);
        loop {
            let base = if cur == 0 { seed() } else { cur };
            let next = step(base);
            match STATE.compare_exchange_weak(cur, next, Ordering::Relaxed, Ordering::Relaxed) {
                Ok(_) => return next,
                Err(seen) => cur = seen,
            }
        }
    }

    pub fn buggify(_site: &str) -> bool {
        false
    }

    /// Nothing to guide outside the simulator.
    pub fn guide(_maximize: bool, _value: f64, _name: &str) {}

    /// The process's oracle: what the host keeps for a run, kept here for
    /// the life of the process, with the same key cap.
    static ORACLE: std::sync::Mutex<super::NativeOracle> = std::sync::Mutex::new(super::NativeOracle::new());

    pub fn oracle_put(key: &str, value: &[u8]) {
        ORACLE.lock().unwrap_or_else(|e| e.into_inner()).put(key, value);
    }

    pub fn oracle_get(key: &str) -> Option<Vec<u8>> {
        ORACLE.lock().unwrap_or_else(|e| e.into_inner()).get(key)
    }
}

/// The oracle off `wasm32`, with the host's rule for the key cap: past
/// `ORACLE_KEYS_MAX` keys, new keys are ignored and existing ones still
/// change.
#[cfg_attr(target_arch = "wasm32", allow(dead_code))]
pub struct NativeOracle {
    values: std::collections::BTreeMap<String, Vec<u8>>,
}

#[cfg_attr(target_arch = "wasm32", allow(dead_code))]
impl NativeOracle {
    pub const fn new() -> NativeOracle {
        NativeOracle { values: std::collections::BTreeMap::new() }
    }

    pub fn put(&mut self, key: &str, value: &[u8]) {
        if self.values.len() < ORACLE_KEYS_MAX || self.values.contains_key(key) {
            self.values.insert(key.to_string(), value.to_vec());
        }
        assert!(self.values.len() <= ORACLE_KEYS_MAX, "the native oracle keeps at most ORACLE_KEYS_MAX keys");
    }

    pub fn get(&self, key: &str) -> Option<Vec<u8>> {
        self.values.get(key).cloned()
    }
}

/// Test hook: every property evaluation on this thread, in order.
#[cfg(test)]
pub mod recorder {
    use std::cell::RefCell;

    /// One recorded call of `assert`.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct Evaluation {
        pub kind: u32,
        pub cond: bool,
        pub msg: String,
        pub details: String,
        pub loc: String,
    }

    thread_local! {
        static CALLS: RefCell<Vec<Evaluation>> = const { RefCell::new(Vec::new()) };
    }

    pub fn record(kind: u32, cond: bool, msg: &str, details: &str, loc: &str) {
        CALLS.with(|c| {
            c.borrow_mut().push(Evaluation {
                kind,
                cond,
                msg: msg.to_string(),
                details: details.to_string(),
                loc: loc.to_string(),
            })
        });
    }

    /// Returns and clears what this thread recorded so far.
    pub fn take() -> Vec<Evaluation> {
        CALLS.with(|c| std::mem::take(&mut *c.borrow_mut()))
    }

    thread_local! {
        static GUIDES: RefCell<Vec<(bool, f64, String)>> = const { RefCell::new(Vec::new()) };
    }

    pub fn record_guide(maximize: bool, value: f64, name: &str) {
        GUIDES.with(|g| g.borrow_mut().push((maximize, value, name.to_string())));
    }

    /// Returns and clears the `guide` calls (maximize, value, name) of this thread.
    pub fn take_guides() -> Vec<(bool, f64, String)> {
        GUIDES.with(|g| std::mem::take(&mut *g.borrow_mut()))
    }
}
