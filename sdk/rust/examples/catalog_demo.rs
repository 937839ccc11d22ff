//! catalog_demo: a small guest that uses every kind of property macro, some
//! of them in code that never runs, so a wasm32-wasip1 build can be checked
//! for one `seedfall_catalog` record per call site
//! (`python3 scripts/read_catalog.py target/wasm32-wasip1/debug/examples/catalog_demo.wasm`).

fn main() {
    let balance: i64 = seedfall::random_below(200) as i64 - 100;
    let who = "alice";
    seedfall::always!(balance >= -100, "balance stays above the overdraft limit", { "balance" => balance, "who" => who });
    seedfall::sometimes!(balance < 0, "an account goes into overdraft");
    seedfall::always_less_than!(balance, 100, "balance stays under the cap");
    seedfall::sometimes_greater_than_or_equal_to!(balance, 50, "a rich account exists", { "who" => who });
    if seedfall::buggify!("slow-commit") {
        println!("buggify fired");
    }
    seedfall::setup_complete();
    println!("balance {balance} random {:016x}", seedfall::random_u64());
    seedfall::maximize!(balance, "balance");
    check_len(&[1u8, 2, 3]);
    check_len(&["x"]);
}

/// A generic function: its properties are one call site each, whatever the
/// number of instantiations.
fn check_len<T: std::fmt::Debug>(items: &[T]) {
    seedfall::always_or_unreachable!(!items.is_empty(), "batches are never empty", { "items" => items });
    seedfall::reachable!("a batch is checked");
}

/// Never called: its properties are in the catalog all the same, which is
/// how seedfall can report that they never ran.
#[allow(dead_code)]
fn recover() {
    seedfall::reachable!("recovery runs");
    seedfall::assert_unreachable!("a committed entry is lost", { "entry" => 42 });
}
