//! Unit tests of the macros and functions, run natively (`cargo test`):
//! every property evaluation is observed through the `host::recorder` hook,
//! which records (kind, cond, message, details, location) per thread.
use crate::host::recorder::{take, Evaluation};
use crate::host::{
    ALWAYS, ALWAYS_OR_UNREACHABLE, OP_GE, OP_GT, OP_LE, OP_LT, REACHABLE, SOMETIMES, UNREACHABLE,
};

fn here(line: u32) -> String {
    format!("{}:{}", file!(), line)
}

fn eval(kind: u32, cond: bool, msg: &str, details: &str, line: u32) -> Evaluation {
    Evaluation {
        kind,
        cond,
        msg: msg.to_string(),
        details: details.to_string(),
        loc: here(line),
    }
}

#[test]
fn boolean_properties_pass_kind_cond_message_details_and_location() {
    take();
    let balance = -3i64;
    let who = "alice";
    let l1 = line!() + 1;
    crate::always!(balance >= 0, "balance is never negative", { "balance" => balance, "who" => who });
    let l2 = line!() + 1;
    crate::always_or_unreachable!(true, "refunds are positive");
    let l3 = line!() + 1;
    crate::sometimes!(balance == 0, "an account is emptied", { "n" => 1u8, });
    let l4 = line!() + 1;
    crate::reachable!("the commit path runs");
    let l5 = line!() + 1;
    crate::assert_unreachable!("a deleted account is written", { "id" => 7 });
    assert_eq!(
        take(),
        vec![
            eval(
                ALWAYS,
                false,
                "balance is never negative",
                r#"{"balance":"-3","who":"\"alice\""}"#,
                l1
            ),
            eval(ALWAYS_OR_UNREACHABLE, true, "refunds are positive", "", l2),
            eval(
                SOMETIMES,
                false,
                "an account is emptied",
                r#"{"n":"1"}"#,
                l3
            ),
            eval(REACHABLE, true, "the commit path runs", "", l4),
            eval(
                UNREACHABLE,
                true,
                "a deleted account is written",
                r#"{"id":"7"}"#,
                l5
            ),
        ]
    );
}

#[test]
fn numeric_macros_compute_the_condition_with_partial_ord() {
    take();
    crate::always_greater_than!(5, 3, "gt true");
    crate::always_greater_than!(3, 3, "gt equal");
    crate::always_greater_than_or_equal_to!(3, 3, "ge equal");
    crate::always_greater_than_or_equal_to!(2, 3, "ge false");
    crate::always_less_than!(2.5, 3.0, "lt true");
    crate::always_less_than!(3, 3, "lt equal");
    crate::always_less_than_or_equal_to!(3u64, 3u64, "le equal");
    crate::always_less_than_or_equal_to!(4, 3, "le false");
    crate::sometimes_greater_than!("b", "a", "sgt strings");
    crate::sometimes_greater_than_or_equal_to!(-1i32, 0i32, "sge false");
    crate::sometimes_less_than!(f64::NAN, 1.0, "slt nan");
    crate::sometimes_less_than_or_equal_to!(1, 1, "sle equal");
    let got: Vec<(u32, bool, String)> = take()
        .into_iter()
        .map(|e| (e.kind, e.cond, e.msg))
        .collect();
    let want: Vec<(u32, bool, String)> = [
        (ALWAYS | OP_GT, true, "gt true"),
        (ALWAYS | OP_GT, false, "gt equal"),
        (ALWAYS | OP_GE, true, "ge equal"),
        (ALWAYS | OP_GE, false, "ge false"),
        (ALWAYS | OP_LT, true, "lt true"),
        (ALWAYS | OP_LT, false, "lt equal"),
        (ALWAYS | OP_LE, true, "le equal"),
        (ALWAYS | OP_LE, false, "le false"),
        (SOMETIMES | OP_GT, true, "sgt strings"),
        (SOMETIMES | OP_GE, false, "sge false"),
        (SOMETIMES | OP_LT, false, "slt nan"),
        (SOMETIMES | OP_LE, true, "sle equal"),
    ]
    .into_iter()
    .map(|(k, c, m)| (k, c, m.to_string()))
    .collect();
    assert_eq!(got, want);
}

#[test]
fn numeric_macros_add_left_and_right_after_the_callers_details() {
    take();
    let l1 = line!() + 1;
    crate::always_less_than!(10, 4, "x below cap", { "node" => "client#2" });
    let l2 = line!() + 1;
    crate::sometimes_greater_than!(-3i64, 0, "positive balance");
    assert_eq!(
        take(),
        vec![
            eval(
                ALWAYS | OP_LT,
                false,
                "x below cap",
                r#"{"node":"\"client#2\"","left":"10","right":"4"}"#,
                l1
            ),
            eval(
                SOMETIMES | OP_GT,
                false,
                "positive balance",
                r#"{"left":"-3","right":"0"}"#,
                l2
            ),
        ]
    );
}

#[test]
fn numeric_kinds_are_the_abi_values() {
    // docs/abi.md: kind in bits 0-7, comparison in bits 8-15.
    assert_eq!(
        [
            ALWAYS | OP_GT,
            ALWAYS | OP_GE,
            SOMETIMES | OP_LT,
            SOMETIMES | OP_LE
        ],
        [0x100, 0x200, 0x302, 0x402]
    );
    assert_eq!((ALWAYS | OP_LT) & crate::host::KIND_MASK, ALWAYS);
}

#[test]
fn maximize_and_minimize_send_one_guide_call_each() {
    use crate::host::recorder::take_guides;
    take_guides();
    crate::maximize(3u8, "queue depth");
    crate::maximize!(7i64, "queue depth");
    crate::minimize(-2.5f32, "margin");
    crate::minimize!(u64::MAX, "big");
    assert_eq!(
        take_guides(),
        vec![
            (true, 3.0, "queue depth".to_string()),
            (true, 7.0, "queue depth".to_string()),
            (false, -2.5, "margin".to_string()),
            (false, u64::MAX as f64, "big".to_string()),
        ]
    );
    assert!(take().is_empty(), "guidance is not a property evaluation");
}

#[test]
fn numeric_macros_evaluate_each_side_once() {
    take();
    let mut calls = 0;
    let mut next = || {
        calls += 1;
        calls
    };
    crate::always_less_than!(next(), 2, "first call is 1");
    assert_eq!(calls, 1);
    let e = take();
    assert_eq!(e.len(), 1);
    assert!(e[0].cond);
    assert_eq!(e[0].details, r#"{"left":"1","right":"2"}"#);
}

#[test]
fn catalog_record_has_the_abi_layout() {
    let line = line!() + 1;
    let rec = crate::__catalog_record!("sometimes", "queue \"drains\"");
    assert_eq!(
        rec,
        format!(
            "sometimes\x1f{}\x1f{}\x1fqueue \"drains\"\x1e",
            file!(),
            line
        )
    );
    const REC: &str = "always\x1fsrc/main.rs\x1f12\x1fok\x1e";
    let bytes: [u8; REC.len()] = crate::__private::record_bytes(REC);
    assert_eq!(&bytes, b"always\x1fsrc/main.rs\x1f12\x1fok\x1e");
    assert_eq!(bytes.len(), 25);
}

#[test]
fn random_below_rejects_the_incomplete_block() {
    // 2^64 mod 3 == 1: a draw of 0 is biased and redrawn.
    let mut seq = [0u64, 5].into_iter();
    assert_eq!(crate::below_with(3, || seq.next().unwrap()), 2);
    assert_eq!(seq.next(), None);
    // n = 2^63 + 1: 2^64 mod n == 2^63 - 1, so draws below that are redrawn.
    let n = (1u64 << 63) + 1;
    let mut seq = [(1u64 << 63) - 2, u64::MAX].into_iter();
    assert_eq!(
        crate::below_with(n, || seq.next().unwrap()),
        (1u64 << 63) - 2
    );
    // A power of two never rejects: the low bits are used as they are.
    let mut seq = [0xffff_ffff_ffff_fff5u64].into_iter();
    assert_eq!(crate::below_with(16, || seq.next().unwrap()), 5);
    assert_eq!(crate::below_with(1, || 12345), 0);
    assert_eq!(crate::below_with(u64::MAX, || u64::MAX - 1), u64::MAX - 1);
}

#[test]
fn random_below_stays_in_bounds_and_covers_the_range() {
    for n in [1u64, 2, 3, 7, 10, 1000, (1 << 63) + 1, u64::MAX] {
        for _ in 0..2000 {
            let r = crate::random_below(n);
            assert!(r < n, "random_below({n}) gave {r}");
        }
    }
    let mut seen = [0u32; 6];
    for _ in 0..6000 {
        seen[crate::random_below(6) as usize] += 1;
    }
    assert!(
        seen.iter().all(|&c| c > 0),
        "some face of 0..6 never came up: {seen:?}"
    );
}

#[test]
fn random_below_zero_panics_with_a_message() {
    let err = std::panic::catch_unwind(|| crate::random_below(0)).unwrap_err();
    assert_eq!(
        err.downcast_ref::<&str>(),
        Some(&"seedfall::random_below(0): the range 0..0 is empty")
    );
}

#[test]
fn native_random_u64_varies_and_buggify_never_fires() {
    let draws: Vec<u64> = (0..64).map(|_| crate::random_u64()).collect();
    let mut distinct = draws.clone();
    distinct.sort_unstable();
    distinct.dedup();
    assert_eq!(distinct.len(), 64);
    assert!(!draws.contains(&0));
    assert!(!crate::buggify("disk-full"));
    assert!(!crate::buggify!("slow-commit"));
    crate::setup_complete();
}

#[test]
fn the_native_oracle_remembers_replaces_and_tells_empty_from_absent() {
    assert_eq!(crate::recall("tests/oracle/never stored"), None);
    crate::remember("tests/oracle/acked", b"k1");
    assert_eq!(crate::recall("tests/oracle/acked").as_deref(), Some(&b"k1"[..]));
    crate::remember("tests/oracle/acked", b"k1,k2");
    assert_eq!(crate::recall("tests/oracle/acked").as_deref(), Some(&b"k1,k2"[..]));
    crate::remember("tests/oracle/empty", b"");
    assert_eq!(crate::recall("tests/oracle/empty"), Some(Vec::new()));
    // The largest value the host keeps round-trips whole.
    let big = vec![7u8; crate::host::ORACLE_VALUE_BYTES_MAX];
    crate::remember("tests/oracle/big", &big);
    assert_eq!(crate::recall("tests/oracle/big"), Some(big));
}

#[test]
fn oracle_bounds_are_the_hosts() {
    let long_key = "k".repeat(crate::host::ORACLE_KEY_BYTES_MAX + 1);
    let key_panic = std::panic::catch_unwind(|| crate::remember(&long_key, b"v")).unwrap_err();
    let text = key_panic.downcast_ref::<String>().unwrap();
    assert_eq!(text, "seedfall::remember: a key is at most 1024 bytes, this one has 1025");
    assert_eq!(crate::recall(&long_key), None);
    let too_big = vec![0u8; crate::host::ORACLE_VALUE_BYTES_MAX + 1];
    let value_panic = std::panic::catch_unwind(|| crate::remember("tests/oracle/too big", &too_big)).unwrap_err();
    let text = value_panic.downcast_ref::<String>().unwrap();
    assert_eq!(text, "seedfall::remember: a value is at most 65536 bytes, the one for \"tests/oracle/too big\" has 65537");
    assert_eq!(crate::recall("tests/oracle/too big"), None);
    // Past the key cap a new key is ignored and an existing one still changes
    // (a private store: the process's oracle is shared by the other tests).
    let mut oracle = crate::host::NativeOracle::new();
    for i in 0..crate::host::ORACLE_KEYS_MAX {
        oracle.put(&format!("k{i}"), b"x");
    }
    oracle.put("one too many", b"x");
    assert_eq!(oracle.get("one too many"), None);
    oracle.put("k0", b"changed");
    assert_eq!(oracle.get("k0").as_deref(), Some(&b"changed"[..]));
}
