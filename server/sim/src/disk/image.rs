//! A file's durable image, kept as its difference from the cache.
//!
//! Most sectors of a file read the same in the cache and on the durable
//! image, and keeping both whole doubled a disk's host memory. So the image
//! is the cache's bytes cut (or zero-extended) to `len`, except for the
//! sectors `shadow` holds: there the image keeps its own bytes, because the
//! cache has moved on since the last write-out, or a failed fsync, a lost or
//! a misdirected write left the two apart.
//!
//! Invariant: a sector of the image that is not shadowed reads exactly as
//! the cache's bytes at the same place (zeros past the cache's end). Every
//! change of the cache's bytes must call [`Image::preserve`] first; a
//! change that leaves every byte reading the same need not (growing with
//! zeros, or cutting off bytes that were zeros: `FileState::zeros_from`).
use std::collections::BTreeMap;
#[cfg(test)]
use std::collections::BTreeSet;

/// Bytes a shadow sector costs beyond its data (the map node, the box).
const SHADOW_OVERHEAD_BYTES: u64 = 64;

#[derive(Debug, Clone, Default)]
pub struct Image {
    len: u64,
    shadow: BTreeMap<u64, Box<[u8]>>,
    shadow_bytes: u64,
}

/// The cache's bytes `[start, start + n)`, zeros past its end.
fn cache_bytes(data: &[u8], start: u64, n: u64) -> Vec<u8> {
    let mut out = vec![0u8; n as usize];
    let s = (start as usize).min(data.len());
    let e = ((start + n) as usize).min(data.len());
    out[..e - s].copy_from_slice(&data[s..e]);
    out
}

/// Whether the cache's bytes `[start, start + bytes.len())` (zeros past its
/// end) equal `bytes`.
fn cache_equals(data: &[u8], start: u64, bytes: &[u8]) -> bool {
    let s = (start as usize).min(data.len());
    let e = (start as usize + bytes.len()).min(data.len());
    let inside = e - s;
    data[s..e] == bytes[..inside] && bytes[inside..].iter().all(|&b| b == 0)
}

impl Image {
    /// An image equal to the cache's first `len` bytes.
    pub fn matching(len: u64) -> Image {
        Image { len, ..Image::default() }
    }

    pub fn len(&self) -> u64 {
        self.len
    }

    /// Host memory the image holds beyond the cache.
    pub fn held_bytes(&self) -> u64 {
        self.shadow_bytes + self.shadow.len() as u64 * SHADOW_OVERHEAD_BYTES
    }

    pub fn shadowed(&self) -> usize {
        self.shadow.len()
    }

    /// Length of sector `s` in the image (0 past its end).
    fn sector_len(&self, s: u64, sector: u64) -> u64 {
        self.len.saturating_sub(s * sector).min(sector)
    }

    /// The image's bytes of sector `s`.
    fn sector_bytes(&self, data: &[u8], s: u64, sector: u64) -> Vec<u8> {
        match self.shadow.get(&s) {
            Some(b) => b.to_vec(),
            None => cache_bytes(data, s * sector, self.sector_len(s, sector)),
        }
    }

    fn set_shadow(&mut self, s: u64, bytes: Option<Vec<u8>>) {
        if let Some(old) = self.shadow.remove(&s) {
            self.shadow_bytes -= old.len() as u64;
        }
        if let Some(b) = bytes {
            self.shadow_bytes += b.len() as u64;
            self.shadow.insert(s, b.into_boxed_slice());
        }
    }

    /// Sets the image's sector `s` to `bytes` (its full length in the image),
    /// shadowed only where the cache reads differently.
    fn set_sector(&mut self, data: &[u8], s: u64, sector: u64, bytes: Vec<u8>) {
        debug_assert_eq!(bytes.len() as u64, self.sector_len(s, sector));
        let same = cache_equals(data, s * sector, &bytes);
        self.set_shadow(s, (!same).then_some(bytes));
    }

    /// The cache's bytes `[lo, hi)` are about to change (a write, or a
    /// truncate cutting them off): sectors of the image there that read from
    /// the cache keep their bytes in the shadow.
    pub fn preserve(&mut self, data: &[u8], lo: u64, hi: u64, sector: u64) {
        let hi = hi.min(self.len);
        if hi <= lo {
            return;
        }
        for s in lo / sector..hi.div_ceil(sector) {
            if !self.shadow.contains_key(&s) {
                let bytes = cache_bytes(data, s * sector, self.sector_len(s, sector));
                self.set_shadow(s, Some(bytes));
            }
        }
    }

    /// Cuts or zero-extends the image to `len`. Sectors `skip` names are
    /// about to be written whole and are not checked. The cache reads zeros
    /// from `zeros_from` on (`FileState::zeros_from`): new sectors there
    /// read as the image's new zeros, so growing past it checks nothing.
    pub fn resize(&mut self, data: &[u8], len: u64, sector: u64, zeros_from: u64, skip: impl Fn(u64) -> bool) {
        let old = self.len;
        if len <= old {
            self.len = len;
            self.drop_shadows(len.div_ceil(sector), u64::MAX);
            // The sector the cut falls in keeps its first bytes.
            if len % sector != 0 {
                let s = len / sector;
                if let Some(b) = self.shadow.get(&s) {
                    let kept = b[..(len % sector) as usize].to_vec();
                    self.set_sector(data, s, sector, kept);
                }
            }
            return;
        }
        // Growing: the new bytes are zeros in the image. The sector holding
        // the old end keeps its old bytes before them.
        let first = old / sector;
        let old_tail = (old % sector != 0).then(|| self.sector_bytes(data, first, sector));
        self.len = len;
        // Past `first` no sector had a shadow (none lies past the old end),
        // and from the cache's zeros on, the cache reads as the new zeros.
        let checked_to = zeros_from.div_ceil(sector).max(first + old_tail.is_some() as u64);
        for s in first..len.div_ceil(sector).min(checked_to) {
            if skip(s) {
                continue;
            }
            let mut bytes = vec![0u8; self.sector_len(s, sector) as usize];
            if s == first {
                if let Some(t) = &old_tail {
                    bytes[..t.len()].copy_from_slice(t);
                }
            }
            self.set_sector(data, s, sector, bytes);
        }
    }

    /// Writes the cache's bytes `[start, end)` (at most one sector) to the
    /// image at byte `dest` (a sector start: a misdirected write lands
    /// elsewhere), extending the image if needed.
    pub fn write(&mut self, data: &[u8], start: u64, end: u64, dest: u64, sector: u64) {
        debug_assert!(end > start && end - start <= sector && dest % sector == 0);
        let s = dest / sector;
        let new = &data[start as usize..end as usize];
        if self.len < dest + (end - start) {
            // The write ends the image: it is the whole of its sector.
            self.resize(data, dest + (end - start), sector, u64::MAX, |t| t == s);
            debug_assert_eq!(self.sector_len(s, sector), end - start);
            self.set_sector(data, s, sector, new.to_vec());
            return;
        }
        let len = self.sector_len(s, sector) as usize;
        let bytes = if new.len() == len {
            // Written whole (a sector skipped by a growing `resize` may
            // still hold a shadow from when it was shorter).
            new.to_vec()
        } else {
            let mut b = self.sector_bytes(data, s, sector);
            debug_assert_eq!(b.len(), len, "a shadow sector has its sector's length");
            b[..new.len()].copy_from_slice(new);
            b
        };
        self.set_sector(data, s, sector, bytes);
    }

    /// Whether writing `bytes` at `dest` (inside one sector) would change
    /// what the image holds there.
    pub fn differs(&self, data: &[u8], dest: u64, bytes: &[u8], sector: u64) -> bool {
        let at = (dest % sector) as usize;
        let have = self.sector_bytes(data, dest / sector, sector);
        have.get(at..at + bytes.len()) != Some(bytes)
    }

    /// Sets the image's bytes at `dest` (a sector start) to `bytes`, inside
    /// its length, keeping the rest of that sector: a torn write kept.
    pub fn overwrite(&mut self, data: &[u8], dest: u64, bytes: &[u8], sector: u64) {
        assert!(dest % sector == 0 && bytes.len() as u64 <= sector && dest + bytes.len() as u64 <= self.len, "an overwrite stays inside one sector of the image");
        let s = dest / sector;
        let mut b = self.sector_bytes(data, s, sector);
        b[..bytes.len()].copy_from_slice(bytes);
        self.set_sector(data, s, sector, b);
    }

    /// The sectors `[lo, hi)` read as the cache does: the cache's own bytes
    /// were written in place over them whole (a write-out).
    pub fn written_through(&mut self, lo: u64, hi: u64) {
        self.drop_shadows(lo, hi);
    }

    /// The sectors `[lo, hi)` keep no bytes of their own any more.
    fn drop_shadows(&mut self, lo: u64, hi: u64) {
        if hi <= lo {
            return;
        }
        let gone: Vec<u64> = self.shadow.range(lo..hi).map(|(&s, _)| s).collect();
        for s in gone {
            self.set_shadow(s, None);
        }
    }

    /// Where the file `materialize` makes reads only zeros to its end, for
    /// a cache that does from `cache_zeros_from` on: its shadows may hold
    /// bytes past that.
    pub fn zeros_from(&self, cache_zeros_from: u64, sector: u64) -> u64 {
        let shadowed_to = self.shadow.last_key_value().map_or(0, |(&s, b)| s * sector + b.len() as u64);
        cache_zeros_from.min(self.len).max(shadowed_to)
    }

    /// The image as a whole file: what the cache becomes after a crash.
    pub fn materialize(&mut self, mut data: Vec<u8>, sector: u64) -> Vec<u8> {
        data.resize(self.len as usize, 0);
        for (s, b) in std::mem::take(&mut self.shadow) {
            let at = (s * sector) as usize;
            data[at..at + b.len()].copy_from_slice(&b);
        }
        self.shadow_bytes = 0;
        data
    }

    /// The whole image, without changing anything (for tests and checks).
    pub fn to_vec(&self, data: &[u8], sector: u64) -> Vec<u8> {
        self.clone().materialize(data[..data.len().min(self.len as usize)].to_vec(), sector)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: u64 = 4;

    /// The reference model: a whole copy of the durable bytes.
    struct Model {
        data: Vec<u8>,
        durable: Vec<u8>,
        image: Image,
    }

    impl Model {
        fn new() -> Model {
            Model { data: Vec::new(), durable: Vec::new(), image: Image::default() }
        }
        fn write(&mut self, at: usize, bytes: &[u8]) {
            self.image.preserve(&self.data, at as u64, (at + bytes.len()) as u64, S);
            if self.data.len() < at + bytes.len() {
                self.data.resize(at + bytes.len(), 0);
            }
            self.data[at..at + bytes.len()].copy_from_slice(bytes);
        }
        /// As `Disk::set_size`: only the cut's written part is kept.
        fn truncate(&mut self, len: usize) {
            if len < self.data.len() {
                let hi = (self.data.len() as u64).min(self.zeros_from().max(len as u64));
                self.image.preserve(&self.data, len as u64, hi, S);
            }
            self.data.resize(len, 0);
        }
        fn out(&mut self, s: u64, dest: u64) {
            let start = s * S;
            if start >= self.data.len() as u64 {
                return;
            }
            let end = (start + S).min(self.data.len() as u64);
            let d = (dest * S) as usize;
            if self.durable.len() < d + (end - start) as usize {
                self.durable.resize(d + (end - start) as usize, 0);
            }
            self.durable[d..d + (end - start) as usize].copy_from_slice(&self.data[start as usize..end as usize]);
            self.image.write(&self.data, start, end, dest * S, S);
        }
        /// fsync's write-out: the image takes the cache's length, then the
        /// chosen sectors, each in place.
        fn write_out(&mut self, sectors: &[u64]) {
            let skip: BTreeSet<u64> = sectors.iter().copied().collect();
            self.durable.resize(self.data.len(), 0);
            self.image.resize(&self.data, self.data.len() as u64, S, self.zeros_from(), |s| skip.contains(&s));
            for &s in sectors {
                let start = s * S;
                if start >= self.data.len() as u64 {
                    continue;
                }
                let end = (start + S).min(self.data.len() as u64);
                self.durable[start as usize..end as usize].copy_from_slice(&self.data[start as usize..end as usize]);
                self.image.write(&self.data, start, end, start, S);
            }
        }
        fn resize_durable(&mut self, len: usize) {
            self.durable.resize(len, 0);
            self.image.resize(&self.data, len as u64, S, self.zeros_from(), |_| false);
        }
        /// Where the cache's last non-zero byte ends.
        fn zeros_from(&self) -> u64 {
            self.data.iter().rposition(|&b| b != 0).map_or(0, |i| i + 1) as u64
        }
        fn check(&self, what: &str) {
            assert_eq!(self.image.to_vec(&self.data, S), self.durable, "{what}");
            let after_crash = self.image.clone().materialize(self.data[..self.data.len().min(self.image.len() as usize)].to_vec(), S);
            let z = self.image.zeros_from(self.zeros_from(), S) as usize;
            assert!(after_crash[z.min(after_crash.len())..].iter().all(|&b| b == 0), "{what}: zeros from {z}");
            assert_eq!(self.image.len() as usize, self.durable.len(), "{what}");
        }
    }

    #[test]
    fn matches_a_whole_copy_through_writes_truncates_and_write_outs() {
        // A deterministic walk over every operation, checked against the copy.
        let mut m = Model::new();
        let mut next = super::super::walk(7);
        for step in 0..4000 {
            match next(7) {
                6 => {
                    let sectors: Vec<u64> = (0..next(5)).map(|_| next(14)).collect::<BTreeSet<u64>>().into_iter().collect();
                    m.write_out(&sectors);
                }
                0 | 1 => {
                    let at = next(40) as usize;
                    let len = 1 + next(9) as usize;
                    let b: Vec<u8> = (0..len).map(|i| (step + i) as u8 | 1).collect();
                    m.write(at, &b);
                }
                2 => m.truncate(next(48) as usize),
                3 => {
                    let s = next(12);
                    m.out(s, s);
                }
                4 => {
                    let s = next(12);
                    m.out(s, next(12));
                }
                _ => {
                    let len = if next(2) == 0 { m.data.len() } else { next(48) as usize };
                    m.resize_durable(len);
                }
            }
            m.check(&format!("step {step}"));
        }
        // Writing everything out leaves nothing shadowed.
        m.resize_durable(m.data.len());
        for s in 0..m.data.len().div_ceil(S as usize) as u64 {
            m.out(s, s);
        }
        m.check("after a full write-out");
        assert_eq!(m.image.shadowed(), 0);
        assert_eq!(m.image.held_bytes(), 0);
    }

    #[test]
    fn unchanged_data_is_held_once() {
        let mut m = Model::new();
        m.write(0, &[1; 4096]);
        m.resize_durable(4096);
        for s in 0..4096 / S {
            m.out(s, s);
        }
        assert_eq!(m.image.held_bytes(), 0, "a synced file costs nothing beyond its cache");
        m.write(8, &[2; 4]);
        assert_eq!(m.image.shadowed(), 1, "a rewrite keeps the one old sector");
        m.check("after a rewrite");
        let mut data = m.data.clone();
        data = m.image.materialize(data, S);
        assert_eq!(data, m.durable, "a crash shows the old bytes");
    }
}
