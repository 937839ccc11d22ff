//! pingpong: two std threads that take turns, through an `mpsc` channel
//! one way and a `Mutex` + `Condvar` mailbox the other: the pinger sends
//! n, the ponger answers n + 1 and waits for the next. Every answer must be
//! the one for the ping just sent, whatever the schedule: "pong answers
//! each ping" holds in every run (it is checked on the pinger's thread, the
//! mailbox's emptiness on the ponger's). The argument is the number of
//! rounds (default 200).
use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex};

/// Rounds when no argument gives them.
const ROUNDS_DEFAULT: u64 = 200;

/// The ponger's answer, and the condition the pinger waits on.
struct Mailbox {
    answer: Mutex<Option<u64>>,
    ready: Condvar,
}

fn main() {
    let rounds: u64 = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(ROUNDS_DEFAULT);
    let (pings, inbox) = mpsc::channel::<u64>();
    let mailbox = Arc::new(Mailbox { answer: Mutex::new(None), ready: Condvar::new() });
    let ponger = {
        let mailbox = Arc::clone(&mailbox);
        std::thread::spawn(move || {
            let mut answered = 0u64;
            // Ends when the pinger drops its sender.
            for n in inbox {
                let mut answer = mailbox.answer.lock().unwrap();
                seedfall::always!(answer.is_none(), "pingpong: the pinger took the last answer before sending", { "n" => n });
                *answer = Some(n + 1);
                mailbox.ready.notify_one();
                answered += 1;
            }
            answered
        })
    };
    let pinger = {
        let mailbox = Arc::clone(&mailbox);
        std::thread::spawn(move || {
            for n in 0..rounds {
                pings.send(n).expect("the ponger hung up");
                let mut answer = mailbox.answer.lock().unwrap();
                while answer.is_none() {
                    answer = mailbox.ready.wait(answer).unwrap();
                }
                let got = answer.take();
                seedfall::always!(got == Some(n + 1), "pingpong: pong answers each ping", { "n" => n, "got" => got.unwrap_or(0) });
            }
        })
    };
    pinger.join().expect("the pinger panicked");
    let answered = ponger.join().expect("the ponger panicked");
    println!("{answered} of {rounds} pings answered");
    seedfall::always!(answered == rounds, "pingpong: every ping was answered", { "answered" => answered, "rounds" => rounds });
}
