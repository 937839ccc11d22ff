//! race: a planted race between std threads. Two tellers withdraw 60 from
//! one account of 100 through a check-then-act that lets go of the
//! account's `Mutex` between the check ("is there enough?") and the act
//! ("take it"). Run one after the other, in either order, the first teller
//! pays and the second sees 40 and refuses: the account never goes below
//! zero. Only an interleaving where both check before either acts
//! overdraws it, so "the account is never overdrawn" (checked by each
//! teller, on its own thread, after its act) fails only under an unlucky
//! schedule.
//!
//! The argument picks what sits in the window between check and act:
//! - `yield` (the default): `std::thread::yield_now`, a host call
//!   (`sched_yield`) where the scheduler may switch threads;
//! - `sleep`: a 100 µs `std::thread::sleep` (`poll_oneoff`);
//! - `print`: a line on stdout (`fd_write`);
//! - `compute`: `WINDOW_WORK` rounds of arithmetic and no host call, so
//!   only preemption inside the window (fuel) can interleave the tellers;
//! - `none`: nothing: a window of a few instructions, which preemption
//!   reaches rarely.
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The account's opening balance.
const OPENING: i64 = 100;
/// What each teller withdraws: one withdrawal fits, two do not.
const AMOUNT: i64 = 60;
const TELLERS: usize = 2;
/// Rounds of arithmetic in the `compute` window (a few thousand instructions).
const WINDOW_WORK: u64 = 500;

fn main() {
    let window = std::env::args().nth(1).unwrap_or_else(|| "yield".into());
    if !["yield", "sleep", "print", "compute", "none"].contains(&window.as_str()) {
        eprintln!("race: unknown window {window:?} (yield, sleep, print, compute or none)");
        std::process::exit(2);
    }
    let account = Arc::new(Mutex::new(OPENING));
    let tellers: Vec<_> = (0..TELLERS)
        .map(|teller| {
            let (account, window) = (Arc::clone(&account), window.clone());
            std::thread::spawn(move || withdraw(teller, &account, &window))
        })
        .collect();
    let paid = tellers.into_iter().map(|t| t.join().expect("a teller panicked")).filter(|p| *p).count();
    let balance = *account.lock().unwrap();
    println!("balance {balance}, {paid} of {TELLERS} tellers paid");
    seedfall::reachable!("race: every teller finished");
    seedfall::sometimes!(paid == 1, "race: one teller paid and the other refused", { "balance" => balance });
}

/// One teller's withdrawal: whether it paid.
fn withdraw(teller: usize, account: &Mutex<i64>, window: &str) -> bool {
    // The check, under the lock; the guard is dropped at the end of the statement.
    let covered = *account.lock().unwrap() >= AMOUNT;
    if !covered {
        return false;
    }
    match window {
        "yield" => std::thread::yield_now(),
        "sleep" => std::thread::sleep(Duration::from_micros(100)),
        "print" => println!("teller {teller}: {AMOUNT} is covered, paying"),
        "compute" => {
            // black_box keeps the loop from being folded away.
            let fee = (0..WINDOW_WORK).fold(teller as u64, |acc, i| std::hint::black_box(acc.wrapping_mul(31).wrapping_add(i)));
            std::hint::black_box(fee);
        }
        _ => {}
    }
    // The act, under the lock again, trusting a check that may be stale.
    let after = {
        let mut balance = account.lock().unwrap();
        *balance -= AMOUNT;
        *balance
    };
    seedfall::always!(after >= 0, "race: the account is never overdrawn", { "teller" => teller, "balance" => after });
    true
}
