//! The snapshot runner: a single-threaded process that holds the program
//! and forks.
//!
//! ```text
//! runner (root)            reads requests on stdin, replies on stdout
//!  └ prefix of take N      runs the base schedule from the start; at each
//!     │                    moment it forks, then runs on to the next one
//!     └ snapshot (N, i)    stopped at moment i; forks a leaf per child
//!        └ leaf            continues as the child's schedule, sends the
//!                          outcome to its snapshot, exits
//! ```
//!
//! Each snapshot has a pipe pair to the root: orders in, replies out (its
//! leaves' outcomes are relayed whole, one frame at a time, so frames never
//! interleave). Memory is shared copy-on-write: a leaf holds only the pages
//! it writes. Fork needs a process with one thread, which is why this is
//! its own process and not the user's (whose workers are threads).
//!
//! The root is the subreaper of everything below it and leads its own
//! process group: when its stdin closes (the user's process ended, however
//! it ended) it kills the group.
use super::os::{self, Forked, OneThread, Pid, Watch};
use super::wire::{self, Moment, Order, Reply, Request, SnapId};
use seedfall_sim::snapshot::{divergence, Pause};
use seedfall_sim::World;
use seedfall_sim::{Program, RunOptions, Schedule};
use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, Write};
use std::os::fd::{AsRawFd, RawFd};
use std::time::Instant;

/// Bound on snapshots the runner holds at once (each is a process).
pub const SNAPSHOTS_HELD_MAX: usize = 256;
/// Bound on leaves one snapshot runs at once.
pub const LEAVES_MAX: usize = 256;

/// Serves requests on stdin until it closes; never returns.
pub fn serve(mut program: Program) -> ! {
    os::become_tree_root();
    let mut stdin = os::dup(io::stdin().as_raw_fd());
    let mut stdout = os::dup(io::stdout().as_raw_fd());
    // A fork keeps only the calling thread: with another one (holding who
    // knows which lock) the children could hang. Say so and serve nothing;
    // the user's process then runs everything from the start.
    let code = match os::one_thread() {
        Err(threads) => {
            eprintln!("seedfall snapshot runner: {threads} threads after loading the program; forking needs one");
            1
        }
        Ok(alone) => match root(&mut program, alone, &mut stdin, &mut stdout) {
            Ok(()) => 0,
            Err(e) => {
                eprintln!("seedfall snapshot runner: {e}");
                1
            }
        },
    };
    // Everything below goes with it.
    os::end_group(code)
}

/// Why a leaf's process ended without its outcome.
fn wait_status(pid: Pid) -> String {
    match os::wait(pid) {
        None => "its process could not be waited for".into(),
        Some(os::Ended::Signal(sig)) => format!("its process was killed by signal {sig}"),
        Some(os::Ended::Exit(code)) => format!("its process exited with code {code} before sending the outcome"),
    }
}

/// A snapshot as the root sees it.
struct Held {
    orders: File,
    outbox: Vec<u8>,
    replies: File,
    /// Children sent to it with no answer yet.
    pending: Vec<u64>,
    taken: bool,
}

fn root(program: &mut Program, alone: OneThread, stdin: &mut File, stdout: &mut File) -> io::Result<()> {
    match wire::read::<Request>(stdin)? {
        Some(Request::Init { limits }) => program.config.limits = limits,
        other => return Err(io::Error::new(io::ErrorKind::InvalidData, format!("expected Init first, found {other:?}"))),
    }
    wire::write(stdout, &Reply::Hello { pid: std::process::id() })?;
    let mut held: BTreeMap<SnapId, Held> = BTreeMap::new();
    loop {
        os::reap();
        let ids: Vec<SnapId> = held.keys().copied().collect();
        let mut fds = vec![Watch::read(stdin.as_raw_fd())];
        for id in &ids {
            let h = &held[id];
            fds.push(Watch::read(h.replies.as_raw_fd()));
            fds.push(Watch::write(h.orders.as_raw_fd(), !h.outbox.is_empty()));
        }
        // A timeout so orphans are reaped even when all is quiet.
        os::poll(&mut fds, 1000);
        if fds[0].ready() {
            match wire::read::<Request>(stdin)? {
                None => return Ok(()),
                Some(req) => request(program, alone, req, &mut held, stdout, stdin.as_raw_fd())?,
            }
        }
        for (k, id) in ids.iter().enumerate() {
            let (r, o) = (fds[1 + 2 * k].ready(), fds[2 + 2 * k].writable());
            if o {
                let h = held.get_mut(id).unwrap();
                match h.orders.write(&h.outbox) {
                    Ok(n) => {
                        h.outbox.drain(..n);
                    }
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                    // The snapshot is gone: its replies pipe says so next.
                    Err(_) => h.outbox.clear(),
                }
            }
            if r {
                relay(*id, &mut held, stdout)?;
            }
        }
    }
}

fn request(program: &Program, alone: OneThread, req: Request, held: &mut BTreeMap<SnapId, Held>, stdout: &mut File, stdin: RawFd) -> io::Result<()> {
    match req {
        Request::Init { .. } => Err(io::Error::new(io::ErrorKind::InvalidData, "Init twice")),
        Request::Take { take, schedule, moments } => {
            assert!(!moments.is_empty() && moments.windows(2).all(|w| w[0] < w[1]), "moments in order");
            if held.len() + moments.len() > SNAPSHOTS_HELD_MAX {
                for index in 0..moments.len() as u32 {
                    let why = format!("the runner holds {} snapshots already (at most {SNAPSHOTS_HELD_MAX})", held.len());
                    wire::write(stdout, &Reply::Missed { snap: SnapId { take, index }, why })?;
                }
                return Ok(());
            }
            let channels: Vec<(SnapId, Moment, File, File)> = moments
                .iter()
                .enumerate()
                .map(|(i, m)| {
                    let (orders_r, orders_w) = os::pipe();
                    let (replies_r, replies_w) = os::pipe();
                    let id = SnapId { take, index: i as u32 };
                    os::set_nonblocking(&orders_w);
                    held.insert(id, Held { orders: orders_w, outbox: Vec::new(), replies: replies_r, pending: Vec::new(), taken: false });
                    (id, *m, orders_r, replies_w)
                })
                .collect();
            if os::fork(alone) == Forked::Child {
                // The prefix: nothing of the root's but its own channels
                // (the root's request and reply pipes close here).
                held.clear();
                os::point_at_null(&[stdin, stdout.as_raw_fd()]);
                detach_stdio();
                prefix(program, alone, schedule, channels);
            }
            Ok(())
        }
        Request::Child { id, snap, schedule, failing_trace } => match held.get_mut(&snap) {
            Some(h) => {
                h.pending.push(id);
                h.outbox.extend(wire::encode(&Order::Child { id, schedule, failing_trace }));
                Ok(())
            }
            None => wire::write(stdout, &Reply::Lost { id, why: format!("snapshot {snap:?} is not held") }),
        },
        Request::Release { snap } => {
            if let Some(h) = held.get_mut(&snap) {
                h.outbox.extend(wire::encode(&Order::Exit));
            }
            Ok(())
        }
    }
}

/// Passes one reply of snapshot `id` on, and notices when it ends.
fn relay(id: SnapId, held: &mut BTreeMap<SnapId, Held>, stdout: &mut File) -> io::Result<()> {
    let h = held.get_mut(&id).unwrap();
    let frame = wire::read_raw(&mut h.replies).ok().flatten();
    let Some(frame) = frame else {
        // Ended: every child it had is lost, and a moment never reached missed.
        let h = held.remove(&id).unwrap();
        for child in h.pending {
            wire::write(stdout, &Reply::Lost { id: child, why: "its snapshot's process ended".into() })?;
        }
        if !h.taken {
            wire::write(stdout, &Reply::Missed { snap: id, why: "the prefix run's process ended before the moment".into() })?;
        }
        return wire::write(stdout, &Reply::Gone { snap: id });
    };
    match wire::decode::<Head>(&frame) {
        Ok(Head::Taken {} | Head::Missed {}) => h.taken = true,
        Ok(Head::Done { id: child } | Head::Lost { id: child }) => h.pending.retain(|&c| c != child),
        _ => {}
    }
    stdout.write_all(&frame)?;
    stdout.flush()
}

/// Just enough of a reply to keep the books (the rest is skipped).
#[derive(serde::Deserialize)]
enum Head {
    Taken {},
    Missed {},
    Done { id: u64 },
    Lost { id: u64 },
    Hello {},
    Gone {},
}

/// Below the root nothing may write on stdout (the root's replies) or read
/// stdin; stderr stays, for a panic's message.
fn detach_stdio() {
    os::point_at_null(&[0, 1]);
}

/// A moment's pipes, as the prefix and its snapshot hold them.
struct Channel {
    snap: SnapId,
    moment: Moment,
    orders: File,
    replies: File,
}

enum Role {
    Prefix,
    Leaf { out: File, id: u64, failing_trace: bool, fork_ns: u64 },
}

struct Forker<'a> {
    program: &'a Program,
    alone: OneThread,
    base: Schedule,
    channels: Vec<Option<Channel>>,
    next: usize,
    role: Role,
}

fn prefix(program: &Program, alone: OneThread, schedule: Schedule, channels: Vec<(SnapId, Moment, File, File)>) -> ! {
    let channels = channels.into_iter().map(|(snap, moment, orders, replies)| Some(Channel { snap, moment, orders, replies })).collect();
    let mut forker = Forker { program, alone, base: schedule.clone(), channels, next: 0, role: Role::Prefix };
    let mut outcome = seedfall_sim::run_paused(program, &schedule, &RunOptions::default(), Some(&mut forker));
    match forker.role {
        Role::Prefix => {
            for c in forker.channels.iter_mut().filter_map(Option::take) {
                let why = missed(c.moment, &outcome);
                let _ = wire::write(&mut { c.replies }, &Reply::Missed { snap: c.snap, why });
            }
        }
        Role::Leaf { mut out, id, failing_trace, fork_ns } => {
            crate::target::trim_trace(&mut outcome, failing_trace);
            let _ = wire::write(&mut out, &Reply::Done { id, fork_ns, outcome: Box::new(outcome) });
        }
    }
    // At once: no destructor of a world that is also the snapshot's may run.
    os::exit_now(0)
}

/// Why a snapshot at `m` was never taken in the run that ended as
/// `outcome`. A moment is the first scheduler step at or after its time, so
/// a run whose clock jumped from before it straight to its end (a timer past
/// the duration, a failure) ends later than the moment without reaching it.
pub fn missed(m: Moment, outcome: &seedfall_sim::Outcome) -> String {
    match m {
        Moment::At(ns) => format!("the run never reached {}: its last scheduler step came before, and it ended at {} ({:?})", seedfall_sim::VTime(ns), outcome.end_time, outcome.end),
        Moment::AfterSetup => format!("the run never reached setup completed: it ended at {} ({:?})", outcome.end_time, outcome.end),
    }
}

pub fn describe(m: Moment) -> String {
    match m {
        Moment::At(ns) => format!("{}", seedfall_sim::VTime(ns)),
        Moment::AfterSetup => "setup completed".into(),
    }
}

impl Pause for Forker<'_> {
    fn due(&mut self, w: &World) -> bool {
        let Some(Some(c)) = self.channels.get(self.next) else { return false };
        match c.moment {
            Moment::At(t) => w.now.nanos() >= t,
            Moment::AfterSetup => w.setup_complete_ns.is_some_and(|s| w.now.nanos() > s),
        }
    }

    fn reached(&mut self, w: &mut World) {
        let i = self.next;
        let started = Instant::now();
        if os::fork(self.alone) != Forked::Child {
            // The prefix goes on to the next moment, or ends.
            self.channels[i] = None;
            self.next += 1;
            if self.next == self.channels.len() {
                // As in `prefix`.
                os::exit_now(0)
            }
            return;
        }
        let fork_ns = started.elapsed().as_nanos() as u64;
        let mut mine = self.channels[i].take().expect("a moment's channel is used once");
        self.channels.clear();
        self.next = usize::MAX;
        let taken = Reply::Taken { snap: mine.snap, now_ns: w.now.nanos(), step: w.step, setup_ns: w.setup_complete_ns, bytes: w.meter.held(), fork_ns };
        if wire::write(&mut mine.replies, &taken).is_err() {
            os::exit_now(0)
        }
        let floor = match mine.moment {
            Moment::At(t) => t,
            Moment::AfterSetup => w.setup_complete_ns.map_or(0, |s| s + 1),
        };
        let leaf = serve_snapshot(&mut mine, self.alone);
        // A leaf: continue as the child's schedule.
        let (out, id, failing_trace, fork_ns, schedule) = leaf;
        if divergence(&self.base, &schedule).is_none_or(|t| t < floor) {
            let why = format!("the child's schedule leaves the snapshot's before its moment ({floor} ns)");
            let _ = wire::write(&mut { out }, &Reply::Lost { id, why });
            os::exit_now(0)
        }
        w.retarget(&self.program.config, &schedule);
        self.role = Role::Leaf { out, id, failing_trace, fork_ns };
    }
}

struct Leaf {
    from: File,
    pid: Pid,
    id: u64,
    answered: bool,
}

/// A snapshot's life: fork a leaf per order. Returns only in a leaf: its
/// output pipe, the order, and its schedule.
fn serve_snapshot(c: &mut Channel, alone: OneThread) -> (File, u64, bool, u64, Schedule) {
    let mut leaves: Vec<Leaf> = Vec::new();
    loop {
        let mut fds = vec![Watch::read(c.orders.as_raw_fd())];
        fds.extend(leaves.iter().map(|l| Watch::read(l.from.as_raw_fd())));
        os::poll(&mut fds, -1);
        let ready: Vec<bool> = fds.iter().map(Watch::ready).collect();
        let mut k = 0;
        leaves.retain_mut(|l| {
            k += 1;
            if !ready[k] {
                return true;
            }
            match wire::read_raw(&mut l.from) {
                Ok(Some(frame)) => {
                    l.answered = true;
                    if c.replies.write_all(&frame).is_err() {
                        os::exit_now(0)
                    }
                    true
                }
                _ => {
                    let why = wait_status(l.pid);
                    if !l.answered && wire::write(&mut c.replies, &Reply::Lost { id: l.id, why }).is_err() {
                        os::exit_now(0)
                    }
                    false
                }
            }
        });
        if !ready[0] {
            continue;
        }
        match wire::read::<Order>(&mut c.orders) {
            Ok(Some(Order::Child { id, schedule, failing_trace })) if leaves.len() < LEAVES_MAX => {
                let (from, out) = os::pipe();
                let started = Instant::now();
                let Forked::Parent(pid) = os::fork(alone) else {
                    drop(from);
                    drop(leaves);
                    let fork_ns = started.elapsed().as_nanos() as u64;
                    return (out, id, failing_trace, fork_ns, schedule);
                };
                drop(out);
                leaves.push(Leaf { from, pid, id, answered: false });
            }
            Ok(Some(Order::Child { id, .. })) => {
                let why = format!("the snapshot runs {LEAVES_MAX} children already");
                if wire::write(&mut c.replies, &Reply::Lost { id, why }).is_err() {
                    os::exit_now(0)
                }
            }
            _ => {
                // Released, or the root is gone: so are the leaves.
                for l in &leaves {
                    os::kill(l.pid);
                }
                os::exit_now(0)
            }
        }
    }
}
