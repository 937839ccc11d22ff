//! rust-guide: numeric guidance from the Rust SDK on a real guest, the twin
//! of go-guide (server/search/tests/guidance.rs): "rust level" is maximized
//! and minimized with 3, 7, 5 a millisecond apart; the numeric macros
//! evaluate x = 2, 8, 4 against 10 and 0; "both levels" gets 6 here and 4
//! from go-guide.
fn main() {
    let ms = std::time::Duration::from_millis(1);
    seedfall::reachable!("rust level 3");
    seedfall::maximize!(3, "rust level");
    seedfall::minimize!(3, "rust level");
    std::thread::sleep(ms);
    seedfall::reachable!("rust level 7");
    seedfall::maximize(7u64, "rust level");
    seedfall::minimize(7u64, "rust level");
    std::thread::sleep(ms);
    seedfall::maximize!(5.0, "rust level");
    seedfall::minimize!(5.0, "rust level");
    seedfall::maximize!(6, "both levels");
    for x in [2i64, 8, 4] {
        match x {
            2 => seedfall::reachable!("rust x is 2"),
            8 => seedfall::reachable!("rust x is 8"),
            _ => {}
        }
        seedfall::always_less_than!(x, 10, "rust x below 10", { "x" => x });
        seedfall::always_greater_than_or_equal_to!(x, 0, "rust x not negative");
        seedfall::sometimes_greater_than!(x, 100, "rust x above 100");
        seedfall::sometimes_less_than_or_equal_to!(x, 1, "rust x at most 1");
        std::thread::sleep(ms);
    }
    println!("guided");
}
