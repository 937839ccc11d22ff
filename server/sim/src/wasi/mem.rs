//! Bounds-checked access to guest memory. A bad pointer is the guest's bug:
//! it gets EFAULT, never a host panic or a trap.
use super::errno::{self, Errno};

/// Bound on scatter/gather vectors per call (POSIX IOV_MAX).
pub const IOVS_MAX: u32 = 1024;

pub fn range(mem_len: usize, ptr: u32, len: u32) -> Result<std::ops::Range<usize>, Errno> {
    let start = ptr as usize;
    let end = start.checked_add(len as usize).ok_or(errno::FAULT)?;
    if end > mem_len {
        return Err(errno::FAULT);
    }
    Ok(start..end)
}

pub fn bytes(mem: &[u8], ptr: u32, len: u32) -> Result<&[u8], Errno> {
    Ok(&mem[range(mem.len(), ptr, len)?])
}

pub fn bytes_mut(mem: &mut [u8], ptr: u32, len: u32) -> Result<&mut [u8], Errno> {
    let r = range(mem.len(), ptr, len)?;
    Ok(&mut mem[r])
}

pub fn read_u16(mem: &[u8], ptr: u32) -> Result<u16, Errno> {
    Ok(u16::from_le_bytes(bytes(mem, ptr, 2)?.try_into().unwrap()))
}
pub fn read_u32(mem: &[u8], ptr: u32) -> Result<u32, Errno> {
    Ok(u32::from_le_bytes(bytes(mem, ptr, 4)?.try_into().unwrap()))
}
pub fn read_u64(mem: &[u8], ptr: u32) -> Result<u64, Errno> {
    Ok(u64::from_le_bytes(bytes(mem, ptr, 8)?.try_into().unwrap()))
}
pub fn write_u8(mem: &mut [u8], ptr: u32, v: u8) -> Result<(), Errno> {
    bytes_mut(mem, ptr, 1)?[0] = v;
    Ok(())
}
pub fn write_u16(mem: &mut [u8], ptr: u32, v: u16) -> Result<(), Errno> {
    bytes_mut(mem, ptr, 2)?.copy_from_slice(&v.to_le_bytes());
    Ok(())
}
pub fn write_u32(mem: &mut [u8], ptr: u32, v: u32) -> Result<(), Errno> {
    bytes_mut(mem, ptr, 4)?.copy_from_slice(&v.to_le_bytes());
    Ok(())
}
pub fn write_u64(mem: &mut [u8], ptr: u32, v: u64) -> Result<(), Errno> {
    bytes_mut(mem, ptr, 8)?.copy_from_slice(&v.to_le_bytes());
    Ok(())
}

pub fn string(mem: &[u8], ptr: u32, len: u32) -> Result<String, Errno> {
    let raw = bytes(mem, ptr, len)?;
    std::str::from_utf8(raw).map(str::to_string).map_err(|_| errno::ILSEQ)
}

/// The (pointer, length) pairs of an iovec array, every entry checked
/// readable before the first is given (a call that fails on its third
/// buffer must not have acted on the first two). Not collected: every
/// socket and file call reads its iovecs, several times.
pub fn iovecs(mem: &[u8], ptr: u32, count: u32) -> Result<impl Iterator<Item = (u32, u32)> + '_, Errno> {
    if count > IOVS_MAX {
        return Err(errno::INVAL);
    }
    let entry = move |i: u32| -> Result<(u32, u32), Errno> {
        let e = ptr.checked_add(i * 8).ok_or(errno::FAULT)?;
        Ok((read_u32(mem, e)?, read_u32(mem, at(e, 4)?)?))
    };
    for i in 0..count {
        entry(i)?;
    }
    Ok((0..count).map(move |i| entry(i).expect("checked above")))
}

/// Gathers the bytes an iovec array points at (for writes).
pub fn gather(mem: &[u8], ptr: u32, count: u32) -> Result<Vec<u8>, Errno> {
    let mut out = Vec::new();
    for (p, l) in iovecs(mem, ptr, count)? {
        out.extend_from_slice(bytes(mem, p, l)?);
    }
    Ok(out)
}

/// The first `max` bytes an iovec array holds (a send that can take only
/// part of a large write copies only that part).
pub fn gather_upto(mem: &[u8], ptr: u32, count: u32, max: usize) -> Result<Vec<u8>, Errno> {
    let mut out = Vec::new();
    for (p, l) in iovecs(mem, ptr, count)? {
        let n = (l as usize).min(max - out.len());
        out.extend_from_slice(bytes(mem, p, n as u32)?);
        if out.len() == max {
            break;
        }
    }
    Ok(out)
}

/// Checks that every buffer of an iovec array lies in memory, before a
/// read takes data it could not then place.
pub fn check_iovecs(mem: &[u8], ptr: u32, count: u32) -> Result<(), Errno> {
    for (p, l) in iovecs(mem, ptr, count)? {
        range(mem.len(), p, l)?;
    }
    Ok(())
}

/// Scatters `data` over an iovec array (for reads); returns bytes placed.
pub fn scatter(mem: &mut [u8], ptr: u32, count: u32, data: &[u8]) -> Result<usize, Errno> {
    // All entries are read before the first byte is placed: a buffer may
    // overlap the iovec array itself. A few fit on the stack.
    let mut few = [(0u32, 0u32); 8];
    let many: Vec<(u32, u32)>;
    let list: &[(u32, u32)] = if count as usize <= few.len() {
        for (slot, e) in few.iter_mut().zip(iovecs(mem, ptr, count)?) {
            *slot = e;
        }
        &few[..count as usize]
    } else {
        many = iovecs(mem, ptr, count)?.collect();
        &many
    };
    let mut placed = 0;
    for &(p, l) in list {
        if placed == data.len() {
            break;
        }
        let n = (l as usize).min(data.len() - placed);
        bytes_mut(mem, p, n as u32)?.copy_from_slice(&data[placed..placed + n]);
        placed += n;
    }
    Ok(placed)
}

/// Bound on the bytes one read moves: one read cannot ask the host for
/// gigabytes at once.
pub const READ_BYTES_MAX: usize = 16 << 20;

/// Total capacity of an iovec array, bounded by [`READ_BYTES_MAX`].
pub fn capacity(mem: &[u8], ptr: u32, count: u32) -> Result<usize, Errno> {
    let total: usize = iovecs(mem, ptr, count)?.map(|(_, l)| l as usize).sum();
    Ok(total.min(READ_BYTES_MAX))
}

/// `base + offset` as a guest address, or EFAULT: a guest pointer near the
/// end of the address space must not overflow the host's arithmetic.
pub fn at(base: u32, offset: u32) -> Result<u32, Errno> {
    base.checked_add(offset).ok_or(errno::FAULT)
}
