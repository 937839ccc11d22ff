//! The stable hash: FNV-1a, 64 bit, the same across platforms, processes
//! and Rust versions (unlike `DefaultHasher`). Traces, seeded disks, tree
//! digests and build fingerprints are compared across processes by it.

/// FNV-1a, 64 bit.
#[derive(Clone, Copy, Debug)]
pub struct Fnv1a(u64);

impl Fnv1a {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;

    pub fn new() -> Fnv1a {
        Fnv1a(Self::OFFSET)
    }
    pub fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(Self::PRIME);
        }
    }
    pub fn write_u64(&mut self, x: u64) {
        self.write(&x.to_le_bytes());
    }
    pub fn value(self) -> u64 {
        self.0
    }
}

impl Default for Fnv1a {
    fn default() -> Self {
        Self::new()
    }
}

/// A `std::hash::Hasher` over [`Fnv1a`], for hashing values whose `Hash`
/// is all we have (stable within one build of seedfall).
#[derive(Default)]
pub struct StableHasher(Fnv1a);

impl std::hash::Hasher for StableHasher {
    fn finish(&self) -> u64 {
        self.0.value()
    }
    fn write(&mut self, bytes: &[u8]) {
        self.0.write(bytes)
    }
}
