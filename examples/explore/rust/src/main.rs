//! The vault of examples/explore, in Rust: six dials, each turn lucky with
//! odds 1 in 10 (from seedfall's `random` stream); an unlucky turn ends the
//! attempt. Opening the vault takes six lucky turns in a row.
use std::time::Duration;

const LEVELS: u32 = 6;

fn main() {
    let mut level = 0;
    while level < LEVELS {
        // Turning a dial takes a little time: branching points sit between draws.
        std::thread::sleep(Duration::from_millis(1 + seedfall::random_below(5)));
        if seedfall::random_below(10) != 0 {
            println!("alarm at level {level}: the vault stays shut");
            return;
        }
        level += 1;
        println!("lucky draw: level {level}");
        // A progress marker for explore, not a requirement (see the README).
        seedfall::sometimes_dynamic(true, &format!("level {level} reached"));
    }
    seedfall::assert_unreachable!("the vault opened after 6 consecutive lucky draws", { "levels" => level });
}
