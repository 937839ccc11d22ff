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
    /// As `write` of `n` zero bytes, in O(log n): a zero byte leaves the
    /// xor alone, so `n` of them multiply by PRIME^n (a preallocated file's
    /// zero tail is hashed without being read).
    pub fn write_zeros(&mut self, mut n: u64) {
        let (mut factor, mut base) = (1u64, Self::PRIME);
        while n > 0 {
            if n & 1 == 1 {
                factor = factor.wrapping_mul(base);
            }
            base = base.wrapping_mul(base);
            n >>= 1;
        }
        self.0 = self.0.wrapping_mul(factor);
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

#[cfg(test)]
mod tests {
    use super::Fnv1a;

    #[test]
    fn zeros_hash_as_written_zeros() {
        for n in [0u64, 1, 2, 3, 7, 64, 511, 4096, 100_003] {
            let (mut a, mut b) = (Fnv1a::new(), Fnv1a::new());
            a.write(b"head");
            b.write(b"head");
            a.write(&vec![0u8; n as usize]);
            b.write_zeros(n);
            assert_eq!(a.value(), b.value(), "{n} zeros");
        }
    }
}
