//! Host-side readers of the coverage memory, for both probe kinds: the
//! function log read at every host call and what each node instance
//! reached over its run ([`Reached`]), and the edge map's hit counts put in
//! AFL buckets ([`EdgesReached`]). Both keep, per index, the first time
//! (virtual time, step) each new thing was seen, across restarts.
use super::edges::MAP_BYTES;
use super::Layout;

/// Per index, a byte of the things seen there (a bit each: a function has
/// one, an edge one per bucket): what both readers keep across a node's
/// incarnations, so that a thing seen again keeps its first time.
#[derive(Clone, Debug, Default)]
struct Seen(Vec<u8>);

impl Seen {
    /// Room for `n` indices (the new ones have seen nothing).
    fn cover(&mut self, n: usize) {
        if self.0.len() < n {
            self.0.resize(n, 0);
        }
    }

    /// Marks `bit` of `index` seen; whether it was not before (an index
    /// past the end is never new).
    fn first_time(&mut self, index: usize, bit: u8) -> bool {
        let Some(b) = self.0.get_mut(index) else { return false };
        let new = *b & (1 << bit) == 0;
        *b |= 1 << bit;
        new
    }
}

/// A function first entered in a run: when (virtual time, scheduler step).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub struct FirstEntry {
    pub index: u32,
    pub at_ns: u64,
    pub step: u64,
}

/// What one node instance reached over its whole run, across restarts:
/// a byte per function index, and each first entry in order.
#[derive(Clone, Debug, Default)]
pub struct Reached {
    seen: Seen,
    pub first: Vec<FirstEntry>,
}

impl Reached {
    /// Notes functions an incarnation entered for the first time; one
    /// entered by an earlier incarnation keeps its first time.
    pub fn note(&mut self, layout: Layout, indices: &[u32], at_ns: u64, step: u64) {
        self.seen.cover(layout.functions as usize);
        for &index in indices {
            if self.seen.first_time(index as usize, 0) {
                self.first.push(FirstEntry { index, at_ns, step });
            }
        }
    }
}

/// The log entries at and after `from` (function indices in first-entry
/// order) in a coverage memory laid out as `layout`; the count is clamped to
/// the log's size, so a damaged memory cannot make the host read past it.
pub fn log_since(mem: &[u8], layout: Layout, from: u32) -> impl Iterator<Item = u32> + '_ {
    let count = log_count(mem, layout);
    (from.min(count)..count).map(move |i| word(mem, Layout::LOG_AT + 4 * i))
}

/// The log's entry count (clamped like `log_since`).
pub fn log_count(mem: &[u8], layout: Layout) -> u32 {
    word(mem, Layout::COUNT_AT).min(layout.functions)
}

/// The edge hit-count map in a coverage memory laid out as `layout` (None
/// without edge probes, or when the memory is too short to hold it).
pub fn edge_map(mem: &[u8], layout: Layout) -> Option<&[u8]> {
    let at = layout.edges_at() as usize;
    if layout.edges { mem.get(at..at + MAP_BYTES as usize) } else { None }
}

/// The little-endian u32 at `at` in the coverage memory (0 past its end).
fn word(mem: &[u8], at: u32) -> u32 {
    let at = at as usize;
    mem.get(at..at + 4).map_or(0, |b| u32::from_le_bytes(b.try_into().unwrap()))
}

/// The AFL bucket of a hit count (None for 0: the edge was not taken):
/// AFL's count classes, ids 0..=7 for counts 1, 2, 3, 4-7, 8-15, 16-31,
/// 32-127, 128+.
pub fn bucket(count: u8) -> Option<u8> {
    Some(match count {
        0 => return None,
        1 => 0,
        2 => 1,
        3 => 2,
        4..=7 => 3,
        8..=15 => 4,
        16..=31 => 5,
        32..=127 => 6,
        128..=255 => 7,
    })
}

/// An (edge index, bucket) pair first reached in a run: when (virtual time,
/// scheduler step), to the nearest suspension or exit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
pub struct EdgeEntry {
    pub index: u32,
    pub bucket: u8,
    pub at_ns: u64,
    pub step: u64,
}

/// What one node instance reached over its whole run, across restarts: per
/// edge index a byte of buckets seen (bit b for bucket b), and each new
/// (index, bucket) in the order found. At most `MAP_BYTES * 8` (buckets) entries
/// by construction.
#[derive(Clone, Debug, Default)]
pub struct EdgesReached {
    seen: Seen,
    /// The map as last noted (of whichever incarnation): a count equal to
    /// its last value has a bucket already in `seen`, so only the 8-byte
    /// words that changed are looked at.
    last: Vec<u64>,
    pub first: Vec<EdgeEntry>,
}

impl EdgesReached {
    /// Notes the (index, bucket) pairs of an incarnation's map not reached
    /// before; returns how many were new.
    pub fn note(&mut self, map: &[u8], at_ns: u64, step: u64) -> usize {
        const WORDS: usize = MAP_BYTES as usize / 8;
        if self.last.is_empty() {
            self.seen.cover(MAP_BYTES as usize);
            self.last = vec![0; WORDS];
        }
        let before = self.first.len();
        for (k, (chunk, last)) in map.chunks_exact(8).zip(self.last.iter_mut()).enumerate() {
            let word = u64::from_le_bytes(chunk.try_into().expect("8 bytes"));
            if word == *last {
                continue;
            }
            *last = word;
            for (j, &count) in chunk.iter().enumerate() {
                let Some(b) = bucket(count) else { continue };
                let index = k * 8 + j;
                if self.seen.first_time(index, b) {
                    self.first.push(EdgeEntry { index: index as u32, bucket: b, at_ns, step });
                }
            }
        }
        self.first.len() - before
    }
}
