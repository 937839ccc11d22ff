//! The `seedfall` import module: properties, set-up, randomness, buggify.
//! The contract is docs/abi.md; the SDKs in sdk/ wrap it.
//!
//! A property evaluation that fails the run stops the node at once (the host
//! call returns an error that ends its `_start`), so nothing the guest does
//! after a broken invariant can blur the failure.
use crate::node::NodeCtx;
use crate::props::{Comparison, Evaluation, PropertyKind};
use crate::wasi::{host, mem, Cx};
use wasmtime::{Caller, Linker};

pub const MODULE: &str = "seedfall";

fn text(cx: &Cx<'_>, ptr: u32, len: u32, max: usize) -> Option<String> {
    if len as usize > max {
        return None;
    }
    let bytes = mem::bytes(cx.mem, ptr, len).ok()?;
    Some(String::from_utf8_lossy(bytes).into_owned())
}

/// Every function `link` defines, as `module::name`: imports by these names
/// are not stubbed as unsupported (`wasi::link::stub_unknown_imports`).
pub const FUNCTIONS: &[&str] = &[
    "seedfall::assert",
    "seedfall::setup_complete",
    "seedfall::random_u64",
    "seedfall::buggify",
    "seedfall::guide",
    "seedfall::oracle_put",
    "seedfall::oracle_get",
    "seedfall::mmap",
    "seedfall::munmap",
    "seedfall::msync",
    "seedfall::flock",
    "seedfall::statfs",
];

pub fn link(l: &mut Linker<NodeCtx>) -> wasmtime::Result<()> {
    l.func_wrap(
        MODULE,
        "assert",
        |mut caller: Caller<'_, NodeCtx>, kind: i32, cond: i32, mp: i32, ml: i32, dp: i32, dl: i32, lp: i32, ll: i32| -> wasmtime::Result<()> {
            let failed = host(&mut caller, |cx| {
                let comparison = Comparison::from_abi(kind as u32);
                let kind = PropertyKind::from_abi(kind as u32)?;
                let message = text(cx, mp as u32, ml as u32, PROPERTY_TEXT_BYTES_MAX)?;
                let details = text(cx, dp as u32, dl as u32, crate::props::DETAILS_BYTES_MAX).unwrap_or_default();
                let location = text(cx, lp as u32, ll as u32, PROPERTY_TEXT_BYTES_MAX).filter(|l| !l.is_empty());
                // A numeric form carries its guidance in the same call:
                // `left - right` from the details, guided toward the bound
                // (recorded first, so an evaluation that fails the run counts).
                if let Some(maximize) = comparison.and_then(|c| c.maximize(kind)) {
                    if let Some(gap) = crate::props::numeric_gap(&details) {
                        cx.world.guide(&message, maximize, gap);
                    }
                }
                let e = Evaluation { kind, cond: cond != 0, message, details, location };
                let idx = cx.node.idx;
                Some(cx.world.evaluate(idx, e))
            });
            match failed {
                Some(true) => Err(wasmtime::Error::new(crate::traps::PropertyFailed)),
                _ => Ok(()),
            }
        },
    )?;
    // Numeric guidance (`sim.Maximize`/`sim.Minimize`): one value of the
    // quantity `name`, to be climbed in the direction `maximize` says.
    l.func_wrap(MODULE, "guide", |mut caller: Caller<'_, NodeCtx>, maximize: i32, value: f64, np: i32, nl: i32| {
        host(&mut caller, |cx| {
            let Some(name) = text(cx, np as u32, nl as u32, GUIDE_NAME_BYTES_MAX) else { return };
            cx.world.guide(&name, maximize != 0, value);
        })
    })?;
    l.func_wrap(MODULE, "setup_complete", |mut caller: Caller<'_, NodeCtx>, dp: i32, dl: i32| {
        host(&mut caller, |cx| {
            let details = text(cx, dp as u32, dl as u32, crate::props::DETAILS_BYTES_MAX).unwrap_or_default();
            let idx = cx.node.idx;
            cx.world.setup_complete(idx, details);
        })
    })?;
    l.func_wrap(MODULE, "random_u64", |mut caller: Caller<'_, NodeCtx>| -> i64 {
        host(&mut caller, |cx| cx.world.streams.next_u64(crate::streams::Stream::Random) as i64)
    })?;
    l.func_wrap(MODULE, "buggify", |mut caller: Caller<'_, NodeCtx>, sp: i32, sl: i32| -> i32 {
        host(&mut caller, |cx| {
            let Some(site) = text(cx, sp as u32, sl as u32, BUGGIFY_SITE_BYTES_MAX) else { return 0 };
            let idx = cx.node.idx;
            i32::from(cx.world.buggify(idx, &site))
        })
    })?;
    l.func_wrap(MODULE, "oracle_put", |mut caller: Caller<'_, NodeCtx>, kp: i32, kl: i32, vp: i32, vl: i32| {
        host(&mut caller, |cx| {
            let Some(key) = text(cx, kp as u32, kl as u32, ORACLE_KEY_BYTES_MAX) else { return };
            if vl as u32 as usize > ORACLE_VALUE_BYTES_MAX {
                return;
            }
            let Ok(value) = mem::bytes(cx.mem, vp as u32, vl as u32) else { return };
            let value = value.to_vec();
            let oracle = &mut cx.world.oracle;
            if oracle.len() < ORACLE_KEYS_MAX || oracle.contains_key(&key) {
                oracle.insert(key, value);
            }
        })
    })?;
    l.func_wrap(MODULE, "oracle_get", |mut caller: Caller<'_, NodeCtx>, kp: i32, kl: i32, bp: i32, bl: i32| -> i32 {
        host(&mut caller, |cx| {
            let Some(key) = text(cx, kp as u32, kl as u32, ORACLE_KEY_BYTES_MAX) else { return -1 };
            let Some(value) = cx.world.oracle.get(&key).cloned() else { return -1 };
            if value.len() <= bl as u32 as usize {
                if let Ok(out) = mem::bytes_mut(cx.mem, bp as u32, value.len() as u32) {
                    out.copy_from_slice(&value);
                }
            }
            value.len() as i32
        })
    })?;
    // File mappings and locks: what the Go storage overlay's syscall.Mmap,
    // Munmap, Msync and Flock call (docs/abi.md, wasi::mmap, locks).
    // Each of these touches the disk, so a crash can land inside it: the
    // node then stops there, as after any disk call.
    l.func_wrap(MODULE, "mmap", |mut caller: Caller<'_, NodeCtx>, fd: i32, offset: i64, len: i32, ptr: i32, prot: i32, flags: i32| -> wasmtime::Result<i32> {
        let errno = host(&mut caller, |cx| {
            if offset < 0 || len <= 0 {
                return i32::from(crate::errno::INVAL);
            }
            let r = crate::wasi::mmap::mmap(cx, fd as u32, offset as u64, len as u32, ptr as u32, prot, flags);
            i32::from(r.err().unwrap_or(crate::errno::SUCCESS))
        });
        crate::traps::crashed(&caller)?;
        Ok(errno)
    })?;
    l.func_wrap(MODULE, "munmap", |mut caller: Caller<'_, NodeCtx>, ptr: i32, len: i32| -> wasmtime::Result<i32> {
        let errno = host(&mut caller, |cx| i32::from(crate::wasi::mmap::munmap(cx, ptr as u32, len as u32).err().unwrap_or(crate::errno::SUCCESS)));
        crate::traps::crashed(&caller)?;
        Ok(errno)
    })?;
    l.func_wrap_async(MODULE, "msync", |mut caller: Caller<'_, NodeCtx>, (ptr, len, flags): (i32, i32, i32)| {
        Box::new(async move {
            let back = host(&mut caller, |cx| crate::wasi::mmap::msync_back(cx, ptr as u32, len as u32));
            crate::traps::crashed(&caller)?;
            match back {
                Ok(ino) if flags & crate::wasi::mmap::MS_SYNC != 0 => crate::wasi::fd::sync_ino(&mut caller, ino).await,
                Ok(_) => Ok(0),
                Err(e) => Ok(i32::from(e)),
            }
        })
    })?;
    l.func_wrap(MODULE, "flock", |mut caller: Caller<'_, NodeCtx>, fd: i32, op: i32| -> wasmtime::Result<i32> {
        let errno = host(&mut caller, |cx| {
            let ino = match cx.node.fds.get(fd as u32) {
                Ok(crate::wasi::fdtable::Fd::File(f)) => f.ino,
                Ok(crate::wasi::fdtable::Fd::Dir(d)) => d.ino,
                Ok(_) => return i32::from(crate::errno::INVAL),
                Err(e) => return i32::from(e),
            };
            let idx = cx.node.idx;
            i32::from(cx.world.locks.flock(idx, ino, fd as u32, op).err().unwrap_or(crate::errno::SUCCESS))
        });
        crate::traps::crashed(&caller)?;
        Ok(errno)
    })?;
    // The disk's size and free space (what the Go storage overlay's
    // syscall.Statfs reports): two little-endian u64 at `out`, total then
    // free, in bytes. Free is 0 while a `disk_full` fault holds.
    l.func_wrap(MODULE, "statfs", |mut caller: Caller<'_, NodeCtx>, out: i32| -> wasmtime::Result<i32> {
        Ok(host(&mut caller, |cx| {
            let idx = cx.node.idx;
            let space = cx.world.disks[idx].space(cx.world.now);
            let r = crate::wasi::mem::write_u64(cx.mem, out as u32, space.total).and_then(|()| crate::wasi::mem::write_u64(cx.mem, (out as u32).checked_add(8).ok_or(crate::errno::FAULT)?, space.free));
            i32::from(r.err().unwrap_or(crate::errno::SUCCESS))
        }))
    })?;
    Ok(())
}

pub use crate::props::{GUIDE_NAME_BYTES_MAX, PROPERTY_TEXT_BYTES_MAX};
/// Bound on a buggify site's name.
pub const BUGGIFY_SITE_BYTES_MAX: usize = 1024;

/// Bounds of the test oracle (`Remember`/`Recall` in the SDKs).
pub const ORACLE_KEY_BYTES_MAX: usize = 1024;
pub const ORACLE_VALUE_BYTES_MAX: usize = 64 << 10;
pub const ORACLE_KEYS_MAX: usize = 10_000;
