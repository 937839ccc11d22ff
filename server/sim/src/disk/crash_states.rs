//! Every tree a crash could leave: a crash's choices, enumerated.
//!
//! A crash makes its choices through `pick(n)` (`Disk::crash`): which name
//! changes and sizes survive (posix), which dirty sectors were written (torn
//! writes). Later choices can depend on earlier ones (a file's size decides
//! which of its sectors can show), so the choices form a tree; here the disk
//! is cloned and crashed once per leaf of that tree, walked in order, and
//! each distinct resulting tree of files is kept: the set of states the file-system
//! model allows at this moment. `seedfall crash-states` collects it at every
//! moment of a run; the conformance check of docs/disk.md compares it with
//! what a real file system left.
use super::{tree_key, Disk, TreeEntry};
use crate::vtime::VTime;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A moment with at most this many choices is enumerated whole (2^n crashes).
pub const CHOICES_EXHAUSTIVE_MAX: u32 = 16;
/// Crashes tried at a moment with more choices: all 0, all last, and the
/// rest drawn (a fixed sequence).
pub const SAMPLED_CRASHES_MAX: usize = 1 << CHOICES_EXHAUSTIVE_MAX;
/// Bound on the distinct trees kept per disk.
pub const TREES_MAX: usize = 100_000;

/// One tree a crash could leave, with the first moment it could.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CrashTree {
    pub entries: Vec<TreeEntry>,
    /// The disk's operation count and the virtual time at that moment.
    pub first_op: u64,
    pub first_ns: u64,
}

/// What a disk could have been left as, over the moments looked at.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CrashStates {
    /// Moments looked at (the start, after every host call that touched the
    /// disk, before each fsync takes effect, the end).
    pub moments: u64,
    /// Moments with more choices than `CHOICES_EXHAUSTIVE_MAX`: sampled.
    pub sampled_moments: u64,
    /// Most choices any one moment had.
    pub choices_max: u32,
    /// Distinct trees past `TREES_MAX`, not kept.
    pub trees_dropped: u64,
    /// By `tree_key`.
    pub trees: BTreeMap<String, CrashTree>,
}

/// xorshift64*, for the sampled choices: the same every run.
fn next(x: &mut u64) -> u64 {
    *x ^= *x >> 12;
    *x ^= *x << 25;
    *x ^= *x >> 27;
    x.wrapping_mul(0x2545_f491_4f6c_dd1d)
}

impl Disk {
    /// Adds every tree a crash at `now` could leave to `out`.
    pub fn crash_states(&self, now: VTime, out: &mut CrashStates) {
        let mut at = self.clone();
        at.tick(now);
        out.moments += 1;
        // The first leaf (every choice 0) says how many choices there are
        // at most along one path.
        let mut path: Vec<(usize, usize)> = Vec::new();
        let first = at.crash_along(&[], &mut path);
        out.choices_max = out.choices_max.max(path.len() as u32);
        let leaves: u128 = path.iter().map(|&(_, n)| n as u128).product();
        self.keep_tree(first, now, out);
        if path.len() as u32 <= CHOICES_EXHAUSTIVE_MAX && leaves <= 1 << CHOICES_EXHAUSTIVE_MAX {
            // Depth first over the choice tree: the next leaf raises the
            // last choice that has a next value and resets what follows.
            let mut tried = 1usize;
            while let Some(i) = path.iter().rposition(|&(c, n)| c + 1 < n) {
                let mut prefix: Vec<usize> = path[..i].iter().map(|&(c, _)| c).collect();
                prefix.push(path[i].0 + 1);
                path.clear();
                let tree = at.crash_along(&prefix, &mut path);
                self.keep_tree(tree, now, out);
                tried += 1;
                if tried >= SAMPLED_CRASHES_MAX {
                    out.sampled_moments += 1;
                    return;
                }
            }
            return;
        }
        out.sampled_moments += 1;
        let mut x = 0x9e37_79b9_7f4a_7c15 ^ self.ops;
        for k in 1..SAMPLED_CRASHES_MAX {
            // Every choice "reached the disk", every choice not, then drawn.
            let mut d = at.clone();
            d.crash(true, |n| match k {
                1 => n - 1,
                _ => (next(&mut x) % n as u64) as usize,
            });
            self.keep_tree(d.tree(), now, out);
        }
    }

    /// Crashes a copy taking the choices in `prefix`, then 0 for the rest;
    /// records each choice made and its count in `path`.
    fn crash_along(&self, prefix: &[usize], path: &mut Vec<(usize, usize)>) -> Vec<TreeEntry> {
        let mut d = self.clone();
        d.crash(true, |n| {
            let c = prefix.get(path.len()).copied().unwrap_or(0);
            debug_assert!(c < n, "a choice keeps its count along one path");
            path.push((c, n));
            c
        });
        d.tree()
    }

    fn keep_tree(&self, entries: Vec<TreeEntry>, now: VTime, out: &mut CrashStates) {
        let key = tree_key(&entries);
        if out.trees.contains_key(&key) {
            return;
        }
        if out.trees.len() >= TREES_MAX {
            out.trees_dropped += 1;
            return;
        }
        out.trees.insert(key, CrashTree { entries, first_op: self.ops, first_ns: now.nanos() });
    }
}
