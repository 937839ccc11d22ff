//! rust-props: every property kind of the Rust SDK on a real guest, the
//! twin of go-props. "x stays below 9" fails in about one seed in ten; "x is
//! 3 sometimes" is true in some seeds; "x exceeds 100" is never true; "only
//! in dead-code mode" is never reached (its catalog entry comes from the
//! wasm custom section).
fn main() {
    let mode = std::env::args().nth(1).unwrap_or_default();
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
