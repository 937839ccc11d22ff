//! Named random streams: every random decision in a run draws from one of
//! these, each an independent ChaCha20 stream of the seed.
//!
//! Drawing from one stream never shifts another (each has its own ChaCha
//! stream id), so adding a network draw cannot change disk behaviour. A
//! stream can be re-keyed mid-run (branches, used by explore and cause): its
//! future then depends on the new key, while the others continue unchanged.
use rand_chacha::ChaCha20Rng;
use rand_core::{RngCore, SeedableRng};

/// The streams of a run. The order is part of the replay format: never
/// reorder, only append.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Stream {
    Sched = 0,
    Net = 1,
    Disk = 2,
    DiskLatency = 3,
    Random = 4,
    Faults = 5,
}

impl Stream {
    pub const ALL: [Stream; 6] = [
        Stream::Sched,
        Stream::Net,
        Stream::Disk,
        Stream::DiskLatency,
        Stream::Random,
        Stream::Faults,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Stream::Sched => "sched",
            Stream::Net => "net",
            Stream::Disk => "disk",
            Stream::DiskLatency => "disklatency",
            Stream::Random => "random",
            Stream::Faults => "faults",
        }
    }

    pub fn from_name(name: &str) -> Option<Stream> {
        Stream::ALL.into_iter().find(|s| s.name() == name)
    }
}

pub struct Streams {
    rngs: Vec<ChaCha20Rng>,
    /// Draws from each stream (in `Stream` order): explore re-keys only a
    /// stream a run drew from, since re-keying another changes nothing.
    pub draws: [u64; Stream::ALL.len()],
}

impl Streams {
    pub fn new(seed: u64) -> Streams {
        let rngs = Stream::ALL.iter().map(|&s| keyed(seed, s)).collect();
        Streams { rngs, draws: [0; Stream::ALL.len()] }
    }

    /// Re-keys one stream: from now on it depends on `key` as well as the seed.
    pub fn rekey(&mut self, stream: Stream, seed: u64, key: u64) {
        let mixed = seed ^ key.rotate_left(17) ^ 0x9e37_79b9_7f4a_7c15;
        self.rngs[stream as usize] = keyed(mixed, stream);
    }

    pub fn next_u64(&mut self, stream: Stream) -> u64 {
        self.draws[stream as usize] += 1;
        self.rngs[stream as usize].next_u64()
    }

    pub fn fill(&mut self, stream: Stream, buf: &mut [u8]) {
        self.draws[stream as usize] += 1;
        self.rngs[stream as usize].fill_bytes(buf)
    }

    /// True with probability `odds` (0..1), from one draw of `stream`.
    pub fn chance(&mut self, stream: Stream, odds: f64) -> bool {
        (self.next_u64(stream) as f64) < odds * (u64::MAX as f64)
    }

    /// A uniform index below `n` (n > 0), without modulo bias.
    pub fn below(&mut self, stream: Stream, n: u64) -> u64 {
        assert!(n > 0, "below(0) has no answer");
        let zone = u64::MAX - (u64::MAX % n);
        loop {
            let x = self.next_u64(stream);
            if x < zone {
                return x % n;
            }
        }
    }
}

fn keyed(seed: u64, stream: Stream) -> ChaCha20Rng {
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    rng.set_stream(stream as u64 + 1);
    rng
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_independent() {
        let mut a = Streams::new(7);
        let mut b = Streams::new(7);
        for _ in 0..100 {
            b.next_u64(Stream::Net);
        }
        assert_eq!(a.next_u64(Stream::Disk), b.next_u64(Stream::Disk));
        assert_ne!(a.next_u64(Stream::Sched), a.next_u64(Stream::Net));
    }

    #[test]
    fn rekey_changes_only_that_stream() {
        let mut a = Streams::new(7);
        let mut b = Streams::new(7);
        b.rekey(Stream::Random, 7, 99);
        assert_ne!(a.next_u64(Stream::Random), b.next_u64(Stream::Random));
        assert_eq!(a.next_u64(Stream::Sched), b.next_u64(Stream::Sched));
    }

    #[test]
    fn seeds_differ() {
        assert_ne!(Streams::new(1).next_u64(Stream::Sched), Streams::new(2).next_u64(Stream::Sched));
    }
}
