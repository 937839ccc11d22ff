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
    assert!((1..=JOBS_MAX).contains(&jobs), "jobs out of range: {jobs}");
    let window = WINDOW_PER_JOB * jobs as u64;
    let cursor = Mutex::new(Cursor { next: 0, emitted: 0 });
    let moved = Condvar::new();
    let (tx, rx) = mpsc::channel::<(u64, R)>();
    let mut emitted = 0u64;
    std::thread::scope(|scope| {
        for _ in 0..jobs.min(count.max(1) as usize) {
            let tx = tx.clone();
            let (cursor, moved, work) = (&cursor, &moved, &work);
            scope.spawn(move || loop {
                let i = {
                    let mut c = cursor.lock().unwrap();
                    while c.next < count && c.next >= c.emitted + window && !stop.load(Ordering::Relaxed) {
                        c = moved.wait(c).unwrap();
                    }
                    if c.next >= count || stop.load(Ordering::Relaxed) {
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
                if stop.load(Ordering::Relaxed) {
                    pending.clear();
                    break;
                }
                emit(emitted, r);
                emitted += 1;
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
}
