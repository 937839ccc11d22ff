//! rust-props: every property kind of the Rust SDK on a real guest, the
//! twin of go-props. "x stays below 9" fails in about one seed in ten; "x is
//! 3 sometimes" is true in some seeds; "x exceeds 100" is never true; "only
//! in dead-code mode" is never reached (its catalog entry comes from the
//! wasm custom section). Mode `oracle` keeps a start count and a value
//! larger than the SDK's first recall buffer in the test oracle
//! (`seedfall::remember`/`recall`) and checks both after each crash; its
//! properties are `always_or_unreachable`, so the other modes' sweeps do not
//! miss them.
fn main() {
    let mode = std::env::args().nth(1).unwrap_or_default();
    if mode == "oracle" {
        return oracle();
    }
    std::thread::sleep(std::time::Duration::from_millis(1));
    seedfall::setup_complete();
    let x = seedfall::random_below(10);
    println!("x = {x}");
    seedfall::reachable!("rust ready");
    seedfall::sometimes!(x == 3, "rust x is 3 sometimes", { "x" => x });
    seedfall::sometimes!(x > 100, "rust x exceeds 100");
    seedfall::always_greater_than_or_equal_to!(x, 0, "rust x is not negative");
    if mode == "dead-code" {
        seedfall::always!(true, "rust only in dead-code mode");
    }
    if mode == "unreachable" && x < 5 {
        seedfall::assert_unreachable!("rust impossible branch ran", { "x" => x });
    }
    seedfall::always!(x < 9, "rust x stays below 9", { "x" => x });
    println!("after the always");
}

/// Counts starts in the oracle, which outlives crashes, and checks that a
/// 1000-byte value remembered by the first start comes back whole.
fn oracle() {
    let blob: Vec<u8> = (0..1000u32).map(|i| (i % 251) as u8).collect();
    let starts = match seedfall::recall("starts") {
        Some(v) => u64::from_le_bytes(v.try_into().expect("8 bytes")) + 1,
        None => 1,
    };
    seedfall::remember("starts", &starts.to_le_bytes());
    if starts == 1 {
        seedfall::remember("blob", &blob);
    }
    let back = seedfall::recall("blob");
    seedfall::always_or_unreachable!(back.as_deref() == Some(&blob[..]), "rust the oracle keeps a value whole across crashes",
        { "starts" => starts, "len" => back.as_ref().map(Vec::len) });
    seedfall::always_or_unreachable!(seedfall::recall("never remembered").is_none(), "rust the oracle recalls nothing for an unknown key");
    println!("start {starts}, blob of {} bytes recalled", back.map_or(0, |b| b.len()));
    for _ in 0..40 {
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
}
