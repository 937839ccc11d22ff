//! Worker threads with an ordered merge.
//!
//! `run_ordered` computes `work(i)` for i in 0..count on `jobs` threads and
//! hands results to `emit` strictly in index order, so the caller's output
//! never depends on `-j` or on thread timing. Workers run at most `WINDOW`
//! items ahead of the merge: the reorder buffer is bounded.
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Condvar, Mutex};

pub const JOBS_MAX: usize = 256;
/// How far ahead of the ordered merge workers may run, per worker.
pub const WINDOW_PER_JOB: u64 = 8;

struct Cursor {
    next: u64,
    emitted: u64,
}

/// Returns how many items were emitted (fewer than `count` when `stop` was set).
pub fn run_ordered<R: Send>(
    count: u64,
    jobs: usize,
    stop: &AtomicBool,
    work: impl Fn(u64) -> R + Sync,
    mut emit: impl FnMut(u64, R),
) -> u64 {
    run_ordered_while(count, jobs, stop, work, |i, r| {
        emit(i, r);
        true
    })
}

/// `run_ordered`, ending after the first item whose `emit` returns false:
/// nothing after it in index order is emitted, and no new item starts, so
/// where it ends depends on the results alone, never on `-j` or timing
/// (items already running finish and are dropped).
pub fn run_ordered_while<R: Send>(
    count: u64,
    jobs: usize,
    stop: &AtomicBool,
    work: impl Fn(u64) -> R + Sync,
    mut emit: impl FnMut(u64, R) -> bool,
) -> u64 {
    assert!((1..=JOBS_MAX).contains(&jobs), "jobs out of range: {jobs}");
    let halted = AtomicBool::new(false);
    let ended = || stop.load(Ordering::Relaxed) || halted.load(Ordering::Relaxed);
    let window = WINDOW_PER_JOB * jobs as u64;
    let cursor = Mutex::new(Cursor { next: 0, emitted: 0 });
    let moved = Condvar::new();
    let (tx, rx) = mpsc::channel::<(u64, R)>();
    let mut emitted = 0u64;
    std::thread::scope(|scope| {
        for _ in 0..jobs.min(count.max(1) as usize) {
            let tx = tx.clone();
            let (cursor, moved, work, ended) = (&cursor, &moved, &work, &ended);
            scope.spawn(move || loop {
                let i = {
                    let mut c = cursor.lock().unwrap();
                    while c.next < count && c.next >= c.emitted + window && !ended() {
                        c = moved.wait(c).unwrap();
                    }
                    if c.next >= count || ended() {
                        return;
                    }
                    c.next += 1;
                    c.next - 1
                };
                if tx.send((i, work(i))).is_err() {
                    return;
                }
            });
        }
        drop(tx);
        let mut pending: BTreeMap<u64, R> = BTreeMap::new();
        for (i, r) in rx.iter() {
            pending.insert(i, r);
            while let Some(r) = pending.remove(&emitted) {
                if ended() {
                    pending.clear();
                    break;
                }
                let more = emit(emitted, r);
                emitted += 1;
                if !more {
                    // Under the lock, so no worker waiting on the window
                    // misses the wake-up.
                    let _c = cursor.lock().unwrap();
                    halted.store(true, Ordering::Relaxed);
                }
                cursor.lock().unwrap().emitted = emitted;
                moved.notify_all();
            }
            assert!(pending.len() as u64 <= window + jobs as u64, "reorder buffer exceeded its bound");
        }
        moved.notify_all();
    });
    emitted
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_come_in_order_at_any_jobs() {
        for jobs in [1, 2, 7] {
            let stop = AtomicBool::new(false);
            let mut seen = Vec::new();
            let n = run_ordered(100, jobs, &stop, |i| {
                // Uneven work so threads finish out of order.
                std::thread::sleep(std::time::Duration::from_micros((i * 37 % 11) * 50));
                i * 2
            }, |i, r| seen.push((i, r)));
            assert_eq!(n, 100);
            assert_eq!(seen, (0..100).map(|i| (i, i * 2)).collect::<Vec<_>>());
        }
    }

    #[test]
    fn stop_ends_early_in_order() {
        let stop = AtomicBool::new(false);
        let mut seen = Vec::new();
        run_ordered(1000, 2, &stop, |i| i, |i, _| {
            seen.push(i);
            if i == 9 {
                stop.store(true, Ordering::Relaxed);
            }
        });
        assert_eq!(seen, (0..10).collect::<Vec<_>>());
    }

    #[test]
    fn an_emit_that_says_no_ends_after_its_item_at_any_jobs() {
        for jobs in [1, 2, 7] {
            let stop = AtomicBool::new(false);
            let mut seen = Vec::new();
            let n = run_ordered_while(1000, jobs, &stop, |i| {
                std::thread::sleep(std::time::Duration::from_micros((i * 37 % 11) * 20));
                i
            }, |i, _| {
                seen.push(i);
                i != 17
            });
            assert_eq!(n, 18);
            assert_eq!(seen, (0..18).collect::<Vec<_>>());
            assert!(!stop.load(Ordering::Relaxed), "the caller's stop flag is its own");
        }
    }
}
