//! Wasm encoding, shared by both probe kinds and the rewrite: LEB128 (and
//! its reading, to grow a section's entry count), memory arguments, and the
//! order sections must come in.

pub(super) fn leb(mut v: u64, out: &mut Vec<u8>) {
    loop {
        let b = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out.push(b);
            return;
        }
        out.push(b | 0x80);
    }
}

pub(super) fn read_leb(bytes: &[u8]) -> Result<(u64, usize), String> {
    let mut v = 0u64;
    for (i, &b) in bytes.iter().enumerate().take(10) {
        v |= u64::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            return Ok((v, i + 1));
        }
    }
    Err("bad LEB128".into())
}

/// Signed LEB128 of a non-negative i32 (what `i32.const` takes).
pub(super) fn sleb(v: u32, out: &mut Vec<u8>) {
    let mut v = i64::from(v);
    loop {
        let b = (v & 0x7f) as u8;
        v >>= 7;
        if (v == 0 && b & 0x40 == 0) || (v == -1 && b & 0x40 != 0) {
            out.push(b);
            return;
        }
        out.push(b | 0x80);
    }
}

/// Memory argument: alignment (log2), the memory index, the offset.
pub(super) fn memarg(align: u8, memory: u32, offset: u32, out: &mut Vec<u8>) {
    out.push(align | 0x40);
    leb(u64::from(memory), out);
    leb(u64::from(offset), out);
}

/// A vector section's payload with one more entry appended.
pub(super) fn append_entry(payload: &[u8], entry: &[u8]) -> Result<Vec<u8>, String> {
    let (count, n) = read_leb(payload)?;
    let mut out = Vec::with_capacity(payload.len() + entry.len() + 2);
    leb(count + 1, &mut out);
    out.extend_from_slice(&payload[n..]);
    out.extend_from_slice(entry);
    Ok(out)
}

/// Position of a section id in the order the binary format requires.
pub(super) fn rank(id: u8) -> usize {
    pub(super) const ORDER: [u8; 13] = [1, 2, 3, 4, 5, 13, 6, 7, 8, 9, 12, 10, 11];
    ORDER.iter().position(|&x| x == id).unwrap_or(0)
}
