//! The function probe: logs a function's first entry, in order, at a cost
//! on later entries equal to the earlier bitmap probe's (module docs).
use super::encode::{memarg, sleb};
use super::Layout;

/// Fuel a probe burns beyond the usual 3 the first time its function is
/// entered (every instruction of the cold path below costs 1).
pub const FIRST_ENTRY_FUEL: u64 = 15;

/// The probe at the start of function `f`'s body:
///
/// ```wat
/// block
///   i32.const 0  i32.load8_u cov bitmap+f  br_if 0      ;; seen: 3 fuel
///   i32.const 0  i32.const 1  i32.store8 cov bitmap+f    ;; first entry:
///   i32.const 0  i32.load cov 0  i32.const 2  i32.shl     ;;   log[count] = f
///   i32.const f  i32.store cov 4
///   i32.const 0  i32.const 0  i32.load cov 0  i32.const 1  i32.add
///   i32.store cov 0                                       ;;   count += 1
/// end
/// ```
pub fn probe(layout: Layout, memory: u32, f: u32) -> Vec<u8> {
    let at = layout.bitmap_at() + f;
    let mut p = vec![0x02, 0x40, 0x41, 0x00, 0x2d];
    memarg(0, memory, at, &mut p);
    p.extend_from_slice(&[0x0d, 0x00]);
    p.extend_from_slice(&[0x41, 0x00, 0x41, 0x01, 0x3a]);
    memarg(0, memory, at, &mut p);
    p.extend_from_slice(&[0x41, 0x00, 0x28]);
    memarg(2, memory, Layout::COUNT_AT, &mut p);
    p.extend_from_slice(&[0x41, 0x02, 0x74, 0x41]);
    sleb(f, &mut p);
    p.push(0x36);
    memarg(2, memory, Layout::LOG_AT, &mut p);
    p.extend_from_slice(&[0x41, 0x00, 0x41, 0x00, 0x28]);
    memarg(2, memory, Layout::COUNT_AT, &mut p);
    p.extend_from_slice(&[0x41, 0x01, 0x6a, 0x36]);
    memarg(2, memory, Layout::COUNT_AT, &mut p);
    p.push(0x0b);
    p
}
