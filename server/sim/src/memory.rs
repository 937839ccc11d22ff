//! The run's memory meter: the host memory a run's guests make it hold.
//!
//! Every node instance's linear memories and every simulated disk (cache
//! and durable image) count against one limit, `limits.run_memory_mb`
//! (which the process's memory budget may lower, see docs/limits.md). A
//! run that would pass it fails cleanly as a `limit` failure naming the
//! node and the figures; the host never runs out of memory because of a
//! guest. Guest memory is checked before it grows (the limiter asks the
//! meter); a disk is checked after each host call that used it, so a run
//! can pass its limit by at most what one call wrote.
use std::sync::atomic::{AtomicU64, Ordering};

#[derive(Debug)]
pub struct Meter {
    limit: u64,
    /// Where the limit came from (`limits.run_memory_mb`, a budget's share).
    source: String,
    /// Bytes of linear memory of the live node instances.
    guest: AtomicU64,
    /// Bytes the disks hold, as of the last check.
    disks: AtomicU64,
}

/// A node instance's memory would pass the run's limit.
#[derive(Debug, Clone)]
pub struct MemoryLimitExceeded(pub String);

impl std::fmt::Display for MemoryLimitExceeded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for MemoryLimitExceeded {}

/// "1.5 GiB", "300.0 MiB", "12 KiB": sizes in messages.
pub fn human(bytes: u64) -> String {
    const UNITS: [(u64, &str); 3] = [(1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")];
    for (unit, name) in UNITS {
        if bytes >= unit {
            return format!("{:.1} {name}", bytes as f64 / unit as f64);
        }
    }
    format!("{bytes} B")
}

impl Meter {
    pub fn new(limit: u64, source: &str) -> Meter {
        Meter { limit, source: source.to_string(), guest: AtomicU64::new(0), disks: AtomicU64::new(0) }
    }

    pub fn limit(&self) -> u64 {
        self.limit
    }

    /// Everything the run holds now: guest memory and disks.
    pub fn held(&self) -> u64 {
        self.guest() + self.disks.load(Ordering::Relaxed)
    }

    pub fn guest(&self) -> u64 {
        self.guest.load(Ordering::Relaxed)
    }

    /// Node `name`'s memory grows by `bytes`, unless that passes the limit.
    pub fn grow_guest(&self, name: &str, bytes: u64) -> Result<(), MemoryLimitExceeded> {
        let (guest, disks) = (self.guest(), self.disks.load(Ordering::Relaxed));
        if guest + disks + bytes > self.limit {
            return Err(MemoryLimitExceeded(format!(
                "node {name}: growing its memory by {} would make the run hold {} (node memories {}, simulated disks {}); the run's memory limit is {} ({})",
                human(bytes),
                human(guest + disks + bytes),
                human(guest + bytes),
                human(disks),
                human(self.limit),
                self.source
            )));
        }
        self.guest.fetch_add(bytes, Ordering::Relaxed);
        Ok(())
    }

    pub fn release_guest(&self, bytes: u64) {
        let was = self.guest.fetch_sub(bytes, Ordering::Relaxed);
        assert!(was >= bytes, "released more guest memory than was counted");
    }

    /// The disks now hold `disks` bytes, `this` of them node `name`'s; a
    /// message when that passes the limit.
    pub fn disks_now(&self, name: &str, this: u64, disks: u64) -> Result<(), String> {
        self.disks.store(disks, Ordering::Relaxed);
        let guest = self.guest();
        if guest + disks > self.limit {
            return Err(format!(
                "node {name}: the simulated disk holds {}, and the run {} in all (node memories {}, simulated disks {}); the run's memory limit is {} ({})",
                human(this),
                human(guest + disks),
                human(guest),
                human(disks),
                human(self.limit),
                self.source
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guests_and_disks_share_one_limit() {
        let m = Meter::new(100 << 20, "limits.run_memory_mb");
        m.grow_guest("a", 60 << 20).unwrap();
        assert!(m.disks_now("a", 30 << 20, 30 << 20).is_ok());
        let e = m.grow_guest("b", 20 << 20).unwrap_err().0;
        assert_eq!(e, "node b: growing its memory by 20.0 MiB would make the run hold 110.0 MiB (node memories 80.0 MiB, simulated disks 30.0 MiB); the run's memory limit is 100.0 MiB (limits.run_memory_mb)");
        m.release_guest(60 << 20);
        m.grow_guest("b", 20 << 20).unwrap();
        let e = m.disks_now("c#2", 90 << 20, 90 << 20).unwrap_err();
        assert!(e.starts_with("node c#2: the simulated disk holds 90.0 MiB, and the run 110.0 MiB in all"), "{e}");
        assert_eq!(human(1536 << 20), "1.5 GiB");
        assert_eq!(human(12), "12 B");
    }
}
