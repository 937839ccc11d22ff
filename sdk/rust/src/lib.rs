//! `seedfall`: the Rust guest SDK of seedfall, a deterministic simulation
//! testing tool. A guest is an ordinary `wasm32-wasip1` program; this crate
//! binds the extra `seedfall` import module (docs/abi.md) behind
//!
//! - property macros ([`always!`], [`always_or_unreachable!`], [`sometimes!`],
//!   [`reachable!`], [`assert_unreachable!`] and the numeric forms such as
//!   [`always_less_than!`]), each of which also places a record of its call
//!   site in the `seedfall_catalog` wasm custom section at compile time, so
//!   seedfall knows every property before running the program and can fail a
//!   sweep for one that never ran;
//! - [`setup_complete`], [`random_u64`], [`random_below`], [`buggify()`] and
//!   [`buggify!`];
//! - numeric guidance, [`maximize()`] and [`minimize()`] (and their macros):
//!   values `seedfall explore` climbs toward a bound;
//! - the test oracle, [`remember`] and [`recall`]: bytes kept by seedfall
//!   outside every node, so a check can know what was acknowledged before a
//!   crash.
//!
//! The message of every property macro must be a **string literal**: it is
//! the property's identity and it goes into the catalog through `concat!`.
//! Each record also carries an exported symbol so the linker keeps it even
//! when it sits in library code the binary never calls (see `__catalog!`);
//! the .wasm therefore has one extra exported global per call site.
//! docs/sdk-rust.md is the user guide.
//!
//! Off `wasm32` (say, a native `cargo run` of the same program) nothing is
//! recorded: a failing property prints `seedfall: property failed: <message>`
//! to stderr and the program continues, randomness is a time-seeded
//! xorshift, `buggify` never fires, and the oracle is the process's memory.
//!
//! ```
//! let balance: i64 = 10;
//! let who = "alice";
//! seedfall::always!(balance >= 0, "balance is never negative", { "balance" => balance, "who" => who });
//! seedfall::sometimes!(balance == 0, "an account is emptied");
//! seedfall::always_less_than_or_equal_to!(balance, 100, "balance stays under the cap");
//! if seedfall::buggify!("slow-commit") {
//!     // inject a delay, a short write, ...
//! }
//! let coin = seedfall::random_below(2);
//! assert!(coin < 2);
//! ```
//!
//! A message that is not a string literal does not compile:
//!
//! ```compile_fail
//! let msg = String::from("dynamic");
//! seedfall::always!(true, msg);
//! ```

mod host;
mod json;

/// Tells seedfall the workload finished its set-up (the `setup_complete`
/// import, with no details). A no-op off `wasm32`.
pub fn setup_complete() {
    host::setup_complete();
}

/// 64 random bits from the run's `random` stream (the one `random_get`
/// reads; explore re-keys it to steer a run).
pub fn random_u64() -> u64 {
    host::random_u64()
}

/// A uniformly distributed number in `0..n`, without modulo bias (draws
/// that fall in the short last block of `u64` are rejected and redrawn).
///
/// # Panics
///
/// When `n` is 0: the range is empty.
pub fn random_below(n: u64) -> u64 {
    below_with(n, host::random_u64)
}

/// [`random_below`] over any source of `u64`s (split out for the tests).
fn below_with(n: u64, mut draw: impl FnMut() -> u64) -> u64 {
    assert!(n > 0, "seedfall::random_below(0): the range 0..0 is empty");
    // 2^64 mod n: the draws below it are the incomplete block.
    let threshold = n.wrapping_neg() % n;
    loop {
        let r = draw();
        if r >= threshold {
            return r % n;
        }
    }
}

/// Whether the buggify site named `site` fires now. FoundationDB
/// semantics: the first evaluation of a site in a run enables it for the
/// whole run with probability 1/4; an enabled site then fires with
/// probability 1/4 per call. Every firing is recorded as a fault of the run.
/// Always `false` off `wasm32`.
pub fn buggify(site: &str) -> bool {
    host::buggify(site)
}

/// Stores `value` under `key` in seedfall's memory for this run: the test
/// oracle, kept outside every node, so it survives crashes and restarts.
/// It is for the workload's checks, never for the system under test: a
/// client remembers which writes were acknowledged, and after a crash the
/// checker [`recall`]s them to verify they survived. Storing under a key
/// again replaces its value.
///
/// Bounds (the host's, docs/abi.md): a key is at most 1 KiB and a value at
/// most 64 KiB, and a run keeps at most 10,000 keys (a new key past that is
/// ignored; existing keys still change). Off `wasm32` the oracle is this
/// process's memory, with the same bounds.
///
/// # Panics
///
/// When `key` is over 1 KiB or `value` over 64 KiB: the host would drop it,
/// and a later [`recall`] would report a loss that never happened.
pub fn remember(key: &str, value: &[u8]) {
    assert!(
        key.len() <= host::ORACLE_KEY_BYTES_MAX,
        "seedfall::remember: a key is at most {} bytes, this one has {}",
        host::ORACLE_KEY_BYTES_MAX,
        key.len()
    );
    assert!(
        value.len() <= host::ORACLE_VALUE_BYTES_MAX,
        "seedfall::remember: a value is at most {} bytes, the one for {key:?} has {}",
        host::ORACLE_VALUE_BYTES_MAX,
        value.len()
    );
    host::oracle_put(key, value);
}

/// What [`remember`] stored under `key` in this run, or `None` if nothing
/// was (an empty value is `Some(vec![])`).
pub fn recall(key: &str) -> Option<Vec<u8>> {
    if key.len() > host::ORACLE_KEY_BYTES_MAX {
        return None; // no such key can have been stored
    }
    host::oracle_get(key)
}

/// A number [`maximize`] and [`minimize`] accept: every primitive integer
/// and float type (converted to `f64`, as the host keeps it).
pub trait Number: Copy {
    /// The value as the host receives it.
    fn to_f64(self) -> f64;
}

macro_rules! impl_number {
    ($($t:ty),*) => {
        $(impl Number for $t {
            fn to_f64(self) -> f64 {
                self as f64
            }
        })*
    };
}
impl_number!(i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, u128, usize, f32, f64);

/// Numeric guidance: drive the quantity `name` up. Each call reports one
/// value (the `guide` import); a run's watermark for `name` is the largest
/// value it reported, with the virtual time it was first reached, and
/// `seedfall explore` prefers runs that raise it, so it climbs toward large
/// values (a queue length, a retry count, a replica's lag). Guidance only: it
/// never fails a run or a sweep. NaN and infinities are ignored; a name is at
/// most 4096 bytes and a run keeps at most 1,000 watermarks. A no-op off
/// `wasm32`.
pub fn maximize<T: Number>(value: T, name: &str) {
    host::guide(true, value.to_f64(), name);
}

/// [`maximize`] toward small values: the watermark is the smallest value
/// reported (a free-space margin, the time left before a deadline).
pub fn minimize<T: Number>(value: T, name: &str) {
    host::guide(false, value.to_f64(), name);
}

/// `maximize!(value, "name")`: [`maximize()`] as a macro.
#[macro_export]
macro_rules! maximize {
    ($value:expr, $name:expr $(,)?) => {
        $crate::maximize($value, $name)
    };
}

/// `minimize!(value, "name")`: [`minimize()`] as a macro.
#[macro_export]
macro_rules! minimize {
    ($value:expr, $name:expr $(,)?) => {
        $crate::minimize($value, $name)
    };
}

/// A `Sometimes` whose message is built at run time (say,
/// `format!("level {n} reached")`). It counts in runs and is a signal for
/// `seedfall explore` like any property, but it is not in the catalog (only
/// the macros' literal messages are), so a sweep never fails because it was
/// never true: use it for progress markers, not for requirements.
#[track_caller]
pub fn sometimes_dynamic(cond: bool, message: &str) {
    let caller = std::panic::Location::caller();
    let loc = format!("{}:{}", caller.file(), caller.line());
    host::assert(host::SOMETIMES, cond, message, "", &loc);
}

/// Support for the macros; not a stable API.
#[doc(hidden)]
pub mod __private {
    pub use crate::host::{
        ALWAYS, ALWAYS_OR_UNREACHABLE, OP_GE, OP_GT, OP_LE, OP_LT, REACHABLE, SOMETIMES,
        UNREACHABLE,
    };
    pub use crate::json::Details;

    /// One evaluation of a property (the `assert` import).
    pub fn assert(kind: u32, cond: bool, msg: &str, details: &str, loc: &str) {
        crate::host::assert(kind, cond, msg, details, loc);
    }

    /// The bytes of a catalog record as an array, so the record can be a
    /// static with no pointer in it (a custom section cannot hold a
    /// relocated `&str`).
    pub const fn record_bytes<const N: usize>(s: &str) -> [u8; N] {
        let b = s.as_bytes();
        assert!(b.len() == N, "catalog record length mismatch");
        let mut out = [0u8; N];
        let mut i = 0;
        while i < N {
            out[i] = b[i];
            i += 1;
        }
        out
    }

    /// `left > right`.
    pub fn gt<L: PartialOrd<R> + ?Sized, R: ?Sized>(left: &L, right: &R) -> bool {
        left > right
    }
    /// `left >= right`.
    pub fn ge<L: PartialOrd<R> + ?Sized, R: ?Sized>(left: &L, right: &R) -> bool {
        left >= right
    }
    /// `left < right`.
    pub fn lt<L: PartialOrd<R> + ?Sized, R: ?Sized>(left: &L, right: &R) -> bool {
        left < right
    }
    /// `left <= right`.
    pub fn le<L: PartialOrd<R> + ?Sized, R: ?Sized>(left: &L, right: &R) -> bool {
        left <= right
    }
}

/// The catalog record of a call site: `kind 0x1f file 0x1f line 0x1f
/// message 0x1e` (docs/abi.md). `file!()`/`line!()` name the user's call
/// site, the outermost macro invocation.
#[doc(hidden)]
#[macro_export]
macro_rules! __catalog_record {
    ($kind:literal, $msg:literal) => {
        ::core::concat!(
            $kind,
            "\x1f",
            ::core::file!(),
            "\x1f",
            ::core::line!(),
            "\x1f",
            $msg,
            "\x1e"
        )
    };
}

/// The program-unique symbol of a call site's catalog record.
#[doc(hidden)]
#[macro_export]
macro_rules! __export_name {
    ($kind:literal, $msg:literal) => {
        ::core::concat!(
            "seedfall_catalog:",
            ::core::module_path!(),
            ":",
            ::core::file!(),
            ":",
            ::core::line!(),
            ":",
            ::core::column!(),
            ":",
            $kind,
            ":",
            $msg
        )
    };
}

/// Places the call site's catalog record in the `seedfall_catalog` custom
/// section (wasm32 only).
///
/// - `#[used]` keeps the otherwise unreferenced static through rustc (and
///   LLVM's optimisations and LTO); wasm-ld concatenates the custom sections
///   of the same name of every object file it links and never
///   garbage-collects them.
/// - `#[export_name]` (a program-unique symbol) is what makes it complete:
///   a dependency crate (including a package's own `lib` target) reaches
///   wasm-ld as an rlib archive, and wasm-ld only extracts an archive member
///   that defines a symbol something needs. Custom sections define none, so
///   the records of a codegen unit the binary never calls into would be
///   silently dropped (rust-lang/rust#56639), and which ones depends on
///   codegen-unit partitioning. On wasm, rustc passes `--export` for every
///   `#[no_mangle]`/`#[export_name]` symbol of every crate, even for a
///   binary, which forces the member holding the record to be extracted.
///   The cost is one exported global per call site.
#[doc(hidden)]
#[macro_export]
macro_rules! __catalog {
    ($kind:literal, $msg:literal) => {
        // The host ignores an `assert` call whose message is over 4096 bytes.
        const _: () = ::core::assert!(
            $msg.len() <= 4096,
            "seedfall: a property message is at most 4096 bytes (docs/abi.md)"
        );
        #[cfg(target_arch = "wasm32")]
        const __SEEDFALL_RECORD: &str = $crate::__catalog_record!($kind, $msg);
        #[cfg(target_arch = "wasm32")]
        #[cfg_attr(target_arch = "wasm32", link_section = "seedfall_catalog")]
        #[cfg_attr(target_arch = "wasm32", export_name = $crate::__export_name!($kind, $msg))]
        #[used]
        static __SEEDFALL_CATALOG_RECORD: [u8; __SEEDFALL_RECORD.len()] =
            $crate::__private::record_bytes(__SEEDFALL_RECORD);
    };
}

/// The run-time location string, `file:line` of the user's call site.
#[doc(hidden)]
#[macro_export]
macro_rules! __loc {
    () => {
        ::core::concat!(::core::file!(), ":", ::core::line!())
    };
}

/// A boolean property: catalog record plus one evaluation.
#[doc(hidden)]
#[macro_export]
macro_rules! __property {
    ($kind:expr, $name:literal, $cond:expr, $msg:literal, { $($k:literal => $v:expr),* }) => {{
        $crate::__catalog!($name, $msg);
        let __seedfall_cond: bool = $cond;
        let __seedfall_details = $crate::__private::Details::new()
            $(.field($k, &$v))*
            .finish();
        $crate::__private::assert($kind, __seedfall_cond, $msg, &__seedfall_details, $crate::__loc!());
    }};
}

/// A numeric property: `left <op> right` through `PartialOrd`, each side
/// evaluated once, both added to the details as `"left"` and `"right"`.
/// `$kind` carries the comparison in bits 8-15 (`OP_*`), so the host also
/// guides `left - right` toward the bound, in the same call.
#[doc(hidden)]
#[macro_export]
macro_rules! __numeric {
    ($kind:expr, $name:literal, $op:ident, $left:expr, $right:expr, $msg:literal, { $($k:literal => $v:expr),* }) => {{
        $crate::__catalog!($name, $msg);
        match (&$left, &$right) {
            (__seedfall_left, __seedfall_right) => {
                let __seedfall_cond = $crate::__private::$op(__seedfall_left, __seedfall_right);
                let __seedfall_details = $crate::__private::Details::new()
                    $(.field($k, &$v))*
                    .field("left", __seedfall_left)
                    .field("right", __seedfall_right)
                    .finish();
                $crate::__private::assert($kind, __seedfall_cond, $msg, &__seedfall_details, $crate::__loc!());
            }
        }
    }};
}

/// The error for a property macro called with the wrong shape, most often
/// a message that is not a string literal.
#[doc(hidden)]
#[macro_export]
macro_rules! __usage {
    ($usage:literal) => {
        ::core::compile_error!(::core::concat!(
            "seedfall: expected ",
            $usage,
            ". The message must be a string literal: it is the property's identity and is recorded \
             at compile time in the `seedfall_catalog` section, so seedfall can fail a sweep for a \
             property that never ran."
        ))
    };
}

/// `always!(cond, "message" [, { "key" => value, ... }])`: `cond` must be
/// true every time, and the call must be reached at least once in the sweep.
#[macro_export]
macro_rules! always {
    ($cond:expr, $msg:literal $(, { $($k:literal => $v:expr),* $(,)? })? $(,)?) => {
        $crate::__property!($crate::__private::ALWAYS, "always", $cond, $msg, { $($($k => $v),*)? })
    };
    ($($t:tt)*) => {
        $crate::__usage!("always!(condition, \"message\" [, { \"key\" => value, ... }])")
    };
}

/// `always_or_unreachable!(cond, "message" [, {details}])`: `cond` must be
/// true every time; never reaching the call is fine.
#[macro_export]
macro_rules! always_or_unreachable {
    ($cond:expr, $msg:literal $(, { $($k:literal => $v:expr),* $(,)? })? $(,)?) => {
        $crate::__property!($crate::__private::ALWAYS_OR_UNREACHABLE, "always_or_unreachable", $cond, $msg, { $($($k => $v),*)? })
    };
    ($($t:tt)*) => {
        $crate::__usage!("always_or_unreachable!(condition, \"message\" [, { \"key\" => value, ... }])")
    };
}

/// `sometimes!(cond, "message" [, {details}])`: `cond` must be true at
/// least once across the sweep.
#[macro_export]
macro_rules! sometimes {
    ($cond:expr, $msg:literal $(, { $($k:literal => $v:expr),* $(,)? })? $(,)?) => {
        $crate::__property!($crate::__private::SOMETIMES, "sometimes", $cond, $msg, { $($($k => $v),*)? })
    };
    ($($t:tt)*) => {
        $crate::__usage!("sometimes!(condition, \"message\" [, { \"key\" => value, ... }])")
    };
}

/// `reachable!("message" [, {details}])`: the call must be reached at least
/// once across the sweep.
#[macro_export]
macro_rules! reachable {
    ($msg:literal $(, { $($k:literal => $v:expr),* $(,)? })? $(,)?) => {
        $crate::__property!($crate::__private::REACHABLE, "reachable", true, $msg, { $($($k => $v),*)? })
    };
    ($($t:tt)*) => {
        $crate::__usage!("reachable!(\"message\" [, { \"key\" => value, ... }])")
    };
}

/// `assert_unreachable!("message" [, {details}])`: the call must never be
/// reached; reaching it fails the run at once.
#[macro_export]
macro_rules! assert_unreachable {
    ($msg:literal $(, { $($k:literal => $v:expr),* $(,)? })? $(,)?) => {
        $crate::__property!($crate::__private::UNREACHABLE, "unreachable", true, $msg, { $($($k => $v),*)? })
    };
    ($($t:tt)*) => {
        $crate::__usage!("assert_unreachable!(\"message\" [, { \"key\" => value, ... }])")
    };
}

/// `always_greater_than!(left, right, "message" [, {details}])`: an
/// [`always!`] of `left > right`.
#[macro_export]
macro_rules! always_greater_than {
    ($left:expr, $right:expr, $msg:literal $(, { $($k:literal => $v:expr),* $(,)? })? $(,)?) => {
        $crate::__numeric!($crate::__private::ALWAYS | $crate::__private::OP_GT, "always", gt, $left, $right, $msg, { $($($k => $v),*)? })
    };
    ($($t:tt)*) => {
        $crate::__usage!("always_greater_than!(left, right, \"message\" [, { \"key\" => value, ... }])")
    };
}

/// `always_greater_than_or_equal_to!(left, right, "message" [, {details}])`:
/// an [`always!`] of `left >= right`.
#[macro_export]
macro_rules! always_greater_than_or_equal_to {
    ($left:expr, $right:expr, $msg:literal $(, { $($k:literal => $v:expr),* $(,)? })? $(,)?) => {
        $crate::__numeric!($crate::__private::ALWAYS | $crate::__private::OP_GE, "always", ge, $left, $right, $msg, { $($($k => $v),*)? })
    };
    ($($t:tt)*) => {
        $crate::__usage!("always_greater_than_or_equal_to!(left, right, \"message\" [, { \"key\" => value, ... }])")
    };
}

/// `always_less_than!(left, right, "message" [, {details}])`: an
/// [`always!`] of `left < right`.
#[macro_export]
macro_rules! always_less_than {
    ($left:expr, $right:expr, $msg:literal $(, { $($k:literal => $v:expr),* $(,)? })? $(,)?) => {
        $crate::__numeric!($crate::__private::ALWAYS | $crate::__private::OP_LT, "always", lt, $left, $right, $msg, { $($($k => $v),*)? })
    };
    ($($t:tt)*) => {
        $crate::__usage!("always_less_than!(left, right, \"message\" [, { \"key\" => value, ... }])")
    };
}

/// `always_less_than_or_equal_to!(left, right, "message" [, {details}])`:
/// an [`always!`] of `left <= right`.
#[macro_export]
macro_rules! always_less_than_or_equal_to {
    ($left:expr, $right:expr, $msg:literal $(, { $($k:literal => $v:expr),* $(,)? })? $(,)?) => {
        $crate::__numeric!($crate::__private::ALWAYS | $crate::__private::OP_LE, "always", le, $left, $right, $msg, { $($($k => $v),*)? })
    };
    ($($t:tt)*) => {
        $crate::__usage!("always_less_than_or_equal_to!(left, right, \"message\" [, { \"key\" => value, ... }])")
    };
}

/// `sometimes_greater_than!(left, right, "message" [, {details}])`: a
/// [`sometimes!`] of `left > right`.
#[macro_export]
macro_rules! sometimes_greater_than {
    ($left:expr, $right:expr, $msg:literal $(, { $($k:literal => $v:expr),* $(,)? })? $(,)?) => {
        $crate::__numeric!($crate::__private::SOMETIMES | $crate::__private::OP_GT, "sometimes", gt, $left, $right, $msg, { $($($k => $v),*)? })
    };
    ($($t:tt)*) => {
        $crate::__usage!("sometimes_greater_than!(left, right, \"message\" [, { \"key\" => value, ... }])")
    };
}

/// `sometimes_greater_than_or_equal_to!(left, right, "message" [, {details}])`:
/// a [`sometimes!`] of `left >= right`.
#[macro_export]
macro_rules! sometimes_greater_than_or_equal_to {
    ($left:expr, $right:expr, $msg:literal $(, { $($k:literal => $v:expr),* $(,)? })? $(,)?) => {
        $crate::__numeric!($crate::__private::SOMETIMES | $crate::__private::OP_GE, "sometimes", ge, $left, $right, $msg, { $($($k => $v),*)? })
    };
    ($($t:tt)*) => {
        $crate::__usage!("sometimes_greater_than_or_equal_to!(left, right, \"message\" [, { \"key\" => value, ... }])")
    };
}

/// `sometimes_less_than!(left, right, "message" [, {details}])`: a
/// [`sometimes!`] of `left < right`.
#[macro_export]
macro_rules! sometimes_less_than {
    ($left:expr, $right:expr, $msg:literal $(, { $($k:literal => $v:expr),* $(,)? })? $(,)?) => {
        $crate::__numeric!($crate::__private::SOMETIMES | $crate::__private::OP_LT, "sometimes", lt, $left, $right, $msg, { $($($k => $v),*)? })
    };
    ($($t:tt)*) => {
        $crate::__usage!("sometimes_less_than!(left, right, \"message\" [, { \"key\" => value, ... }])")
    };
}

/// `sometimes_less_than_or_equal_to!(left, right, "message" [, {details}])`:
/// a [`sometimes!`] of `left <= right`.
#[macro_export]
macro_rules! sometimes_less_than_or_equal_to {
    ($left:expr, $right:expr, $msg:literal $(, { $($k:literal => $v:expr),* $(,)? })? $(,)?) => {
        $crate::__numeric!($crate::__private::SOMETIMES | $crate::__private::OP_LE, "sometimes", le, $left, $right, $msg, { $($($k => $v),*)? })
    };
    ($($t:tt)*) => {
        $crate::__usage!("sometimes_less_than_or_equal_to!(left, right, \"message\" [, { \"key\" => value, ... }])")
    };
}

/// `buggify!("site")`: [`buggify()`] as a macro, for call sites that read
/// like the FoundationDB `BUGGIFY` idiom.
#[macro_export]
macro_rules! buggify {
    ($site:expr $(,)?) => {
        $crate::buggify($site)
    };
}

#[cfg(test)]
mod tests;
