//! The user's side of the snapshot runner: which snapshots exist, which one
//! serves a child, and the fall-back to running from scratch.
use super::wire::{self, Moment, Reply, Request, SnapId};
use seedfall_sim::config::Limits;
use seedfall_sim::snapshot::divergence;
use seedfall_sim::{Outcome, Program, RunOptions, Schedule};
use serde::Serialize;
use std::collections::BTreeMap;
use std::io::{BufReader, BufWriter};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Arc, Condvar, Mutex};

/// Bound on snapshots kept at once; past it the least recently used that
/// no child is using goes.
pub const SNAPSHOTS_KEPT_MAX: usize = 64;
/// A snapshot at `T0` serves a child diverging at `T` when `T0 >= T *
/// NEAR_ENOUGH / 4`: most of the prefix is saved; else a new one is taken.
const NEAR_ENOUGH: u64 = 3;
/// Distinct reasons for running from scratch kept for the report.
const REASONS_MAX: usize = 16;

#[derive(Debug)]
enum State {
    Taking,
    Ready { at_ns: u64 },
    Missed(String),
}

#[derive(Debug)]
struct Snap {
    base: String,
    state: State,
    users: usize,
    used: u64,
    bytes: u64,
}

enum Answer {
    Done(Box<Outcome>, u64),
    Lost(String),
}

/// What snapshots did for a command, for its summary.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Report {
    /// Snapshots taken, and their forks' total host time.
    pub taken: u64,
    pub take_fork_ns: u64,
    /// Runs continued from a snapshot, and their forks' total host time.
    pub children: u64,
    pub child_fork_ns: u64,
    /// Runs made from scratch instead, by reason.
    pub from_scratch: BTreeMap<String, u64>,
    /// The most memory the snapshots' worlds held at once (guest memory and
    /// disks; a child shares these pages and copies those it writes).
    pub held_bytes_max: u64,
}

impl Report {
    pub fn scratch_runs(&self) -> u64 {
        self.from_scratch.values().sum()
    }
}

struct Books {
    next: u64,
    tick: u64,
    snaps: BTreeMap<SnapId, Snap>,
    /// Per base schedule (as JSON), its snapshots by the moment's time;
    /// `AfterSetup` ones once their time is known.
    by_base: BTreeMap<String, BTreeMap<u64, SnapId>>,
    setup: BTreeMap<String, SnapId>,
    /// Per base: moments asked for ahead (`prepare`) and not taken yet.
    planned: BTreeMap<String, Vec<u64>>,
    /// Per base: the most memory one of its snapshots held, to size how
    /// many to take in one run.
    est_bytes: BTreeMap<String, u64>,
    answers: BTreeMap<u64, Answer>,
    dead: Option<String>,
    held_bytes: u64,
    report: Report,
}

/// A running snapshot runner.
pub struct Snapshots {
    books: Arc<(Mutex<Books>, Condvar)>,
    to: Mutex<Option<BufWriter<ChildStdin>>>,
    process: Mutex<Child>,
    /// Memory the snapshots' worlds may hold together.
    allowance: u64,
}

impl Snapshots {
    /// Starts `exe args...` (a `seedfall snapshot-runner` that loads the same
    /// program) and gives it the limits this process's runs have.
    pub fn start(exe: &Path, args: &[String], limits: &Limits, allowance: u64) -> Result<Snapshots, String> {
        let mut child = Command::new(exe)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| format!("cannot start the snapshot runner {}: {e}", exe.display()))?;
        let mut to = BufWriter::new(child.stdin.take().expect("piped"));
        let mut from = BufReader::new(child.stdout.take().expect("piped"));
        wire::write(&mut to, &Request::Init { limits: limits.clone() }).map_err(|e| format!("the snapshot runner did not start: {e}"))?;
        match wire::read::<Reply>(&mut from) {
            Ok(Some(Reply::Hello { .. })) => {}
            other => {
                let _ = child.kill();
                let status = child.wait().map(|s| s.to_string()).unwrap_or_default();
                let said = match other {
                    Ok(None) => format!("it ended ({status}) before it was ready; its message, if any, is above"),
                    Ok(Some(r)) => format!("it answered {r:?}"),
                    Err(e) => format!("its answer does not parse: {e}"),
                };
                return Err(format!("the snapshot runner did not start: {said}"));
            }
        }
        let books = Arc::new((
            Mutex::new(Books { next: 1, tick: 0, snaps: BTreeMap::new(), by_base: BTreeMap::new(), setup: BTreeMap::new(), planned: BTreeMap::new(), est_bytes: BTreeMap::new(), answers: BTreeMap::new(), dead: None, held_bytes: 0, report: Report::default() }),
            Condvar::new(),
        ));
        let reader = books.clone();
        std::thread::Builder::new()
            .name("snapshot-replies".into())
            .spawn(move || read_replies(&mut from, &reader))
            .map_err(|e| format!("cannot start a thread: {e}"))?;
        Ok(Snapshots { books, to: Mutex::new(Some(to)), process: Mutex::new(child), allowance })
    }

    fn send(&self, req: &Request) -> Result<(), String> {
        let mut to = self.to.lock().unwrap();
        let w = to.as_mut().ok_or("the snapshot runner is closed")?;
        wire::write(w, req).map_err(|e| format!("the snapshot runner stopped listening: {e}"))
    }

    /// What snapshots did so far.
    pub fn report(&self) -> Report {
        self.books.0.lock().unwrap().report.clone()
    }

    /// Children of `base` will branch at `times` (cause's moments): when
    /// one needs a snapshot, those from its time on are taken in the same
    /// run of `base`, as many as the memory allowance holds.
    pub fn prepare(&self, base: &Schedule, times: &[u64]) {
        let key = key(base);
        let mut b = self.books.0.lock().unwrap();
        let have = b.by_base.get(&key).cloned().unwrap_or_default();
        let planned = b.planned.entry(key).or_default();
        planned.extend(times.iter().copied().filter(|t| *t > 0 && !have.contains_key(t)));
        planned.sort_unstable();
        planned.dedup();
    }

    /// A snapshot of `base` just after its workload reported setup
    /// complete; returns the time a child's branch must have (the first
    /// nanosecond after setup), or why there is none.
    pub fn after_setup(&self, base: &Schedule) -> Result<u64, String> {
        let key = key(base);
        let id = {
            let mut b = self.books.0.lock().unwrap();
            if let Some(why) = &b.dead {
                return Err(why.clone());
            }
            let take = b.next;
            b.next += 1;
            let id = SnapId { take, index: 0 };
            b.snaps.insert(id, Snap { base: key.clone(), state: State::Taking, users: 0, used: 0, bytes: 0 });
            b.setup.insert(key.clone(), id);
            id
        };
        self.send(&Request::Take { take: id.take, schedule: base.clone(), moments: vec![Moment::AfterSetup] })?;
        let (lock, cv) = &*self.books;
        let mut b = lock.lock().unwrap();
        loop {
            if let Some(why) = &b.dead {
                return Err(why.clone());
            }
            match b.snaps.get(&id).map(|s| &s.state) {
                Some(State::Ready { at_ns }) => return Ok(*at_ns),
                Some(State::Missed(why)) => return Err(why.clone()),
                None => return Err("the snapshot's process ended".into()),
                Some(State::Taking) => b = cv.wait(b).unwrap(),
            }
        }
    }

    /// Runs `child` from a snapshot of `base` when one serves (the two
    /// agree up to a moment), else from scratch in this process; either way
    /// the outcome is the same. Without `failing_trace` no trace is kept,
    /// and a passing run's never is.
    pub fn run(&self, program: &Program, base: &Schedule, child: &Schedule, failing_trace: bool) -> Outcome {
        let Some(t) = divergence(base, child).filter(|&t| t > 0) else {
            let why = if divergence(base, child).is_none() && base != child { "its faults differ from its parent's" } else { "it branches at the start" };
            return self.scratch(program, child, failing_trace, why);
        };
        let snap = match self.serving(base, t) {
            Ok(s) => s,
            Err(why) => return self.scratch(program, child, failing_trace, &why),
        };
        let id = {
            let mut b = self.books.0.lock().unwrap();
            let id = b.next;
            b.next += 1;
            id
        };
        let sent = self.send(&Request::Child { id, snap, schedule: child.clone(), failing_trace });
        let answer = match sent {
            Ok(()) => self.answer(id),
            Err(why) => {
                self.died(why.clone());
                Answer::Lost(why)
            }
        };
        {
            let mut b = self.books.0.lock().unwrap();
            if let Some(s) = b.snaps.get_mut(&snap) {
                s.users -= 1;
            }
        }
        self.evict();
        match answer {
            Answer::Done(outcome, fork_ns) => {
                let mut b = self.books.0.lock().unwrap();
                b.report.children += 1;
                b.report.child_fork_ns += fork_ns;
                *outcome
            }
            Answer::Lost(why) => self.scratch(program, child, failing_trace, &format!("a snapshot child was lost: {why}")),
        }
    }

    /// A ready snapshot of `base` that serves a child diverging at `t`
    /// (taking one when none is near enough), with a use counted.
    fn serving(&self, base: &Schedule, t: u64) -> Result<SnapId, String> {
        // Room first: what no child uses any more goes before a new take
        // is sized.
        self.evict();
        let key = key(base);
        let (lock, cv) = &*self.books;
        let mut b = lock.lock().unwrap();
        let mut asked = false;
        loop {
            if let Some(why) = &b.dead {
                return Err(why.clone());
            }
            // A moment planned ahead gets its own snapshot (taken with the
            // others in one run); any other child takes the nearest.
            let planned = b.planned.get(&key).is_some_and(|p| p.contains(&t));
            let near = b.by_base.get(&key).and_then(|m| m.range(..=t).next_back()).map(|(&t0, &id)| (t0, id)).filter(|&(t0, _)| if planned { t0 == t } else { t0 >= t / 4 * NEAR_ENOUGH });
            match near.map(|(_, id)| (id, b.snaps.get(&id).map(|s| &s.state))) {
                Some((id, Some(State::Ready { .. }))) => {
                    b.tick += 1;
                    let tick = b.tick;
                    let s = b.snaps.get_mut(&id).unwrap();
                    s.users += 1;
                    s.used = tick;
                    return Ok(id);
                }
                Some((_, Some(State::Taking))) => b = cv.wait(b).unwrap(),
                // The run ended before a moment no later than t: so it
                // does before t.
                Some((_, Some(State::Missed(why)))) => return Err(why.clone()),
                _ if asked => return Err("the snapshot's process ended".into()),
                _ => {
                    // None near enough: take one at `t` from a fresh run of
                    // base, with the moments planned after it that fit.
                    let take = b.next;
                    b.next += 1;
                    let times = b.chunk(&key, t, self.allowance);
                    for (i, &at) in times.iter().enumerate() {
                        b.register(SnapId { take, index: i as u32 }, &key, at);
                    }
                    drop(b);
                    let moments = times.iter().map(|&at| Moment::At(at)).collect();
                    if let Err(why) = self.send(&Request::Take { take, schedule: base.clone(), moments }) {
                        self.died(why.clone());
                        return Err(why);
                    }
                    asked = true;
                    b = lock.lock().unwrap();
                }
            }
        }
    }

    fn answer(&self, id: u64) -> Answer {
        let (lock, cv) = &*self.books;
        let mut b = lock.lock().unwrap();
        loop {
            if let Some(a) = b.answers.remove(&id) {
                return a;
            }
            if let Some(why) = &b.dead {
                return Answer::Lost(why.clone());
            }
            b = cv.wait(b).unwrap();
        }
    }

    fn scratch(&self, program: &Program, child: &Schedule, failing_trace: bool, why: &str) -> Outcome {
        {
            let mut b = self.books.0.lock().unwrap();
            let reasons = &mut b.report.from_scratch;
            if reasons.len() < REASONS_MAX || reasons.contains_key(why) {
                *reasons.entry(why.to_string()).or_default() += 1;
            } else {
                *reasons.entry("other reasons".into()).or_default() += 1;
            }
        }
        let mut o = seedfall_sim::run(program, child, &RunOptions::default());
        crate::target::trim_trace(&mut o, failing_trace);
        o
    }

    fn died(&self, why: String) {
        let (lock, cv) = &*self.books;
        lock.lock().unwrap().dead.get_or_insert(why);
        cv.notify_all();
    }

    /// Releases snapshots past the bounds, least recently used first, among
    /// those no child is using.
    fn evict(&self) {
        let releases: Vec<SnapId> = {
            let mut b = self.books.0.lock().unwrap();
            let mut out = Vec::new();
            loop {
                let over = b.snaps.len() > SNAPSHOTS_KEPT_MAX || b.held_bytes > self.allowance;
                if !over {
                    break;
                }
                let idle = b.snaps.iter().filter(|(_, s)| s.users == 0 && !matches!(s.state, State::Taking)).min_by_key(|(_, s)| s.used).map(|(id, _)| *id);
                let Some(id) = idle else { break };
                b.forget(id);
                out.push(id);
            }
            out
        };
        for snap in releases {
            let _ = self.send(&Request::Release { snap });
        }
    }
}

/// Snapshots taken in one run of a base before the memory one holds is
/// known: one, so that the allowance holds from the first.
const CHUNK_UNSIZED: usize = 1;

impl Books {
    /// The moments to take in one run for a child at `t`: `t`, then the
    /// planned ones after it, as many as the allowance has room for.
    fn chunk(&mut self, key: &str, t: u64, allowance: u64) -> Vec<u64> {
        let fit = match self.est_bytes.get(key) {
            Some(&est) if est > 0 => {
                // Snapshots still being taken will hold about as much.
                let taking = self.snaps.values().filter(|s| matches!(s.state, State::Taking)).count() as u64;
                let room = allowance.saturating_sub(self.held_bytes + taking * est);
                (room / est).max(1) as usize
            }
            _ => CHUNK_UNSIZED,
        };
        let planned = self.planned.entry(key.to_string()).or_default();
        planned.retain(|&p| p != t);
        let later: Vec<u64> = planned.iter().copied().filter(|&p| p > t).take(fit.saturating_sub(1)).collect();
        planned.retain(|p| !later.contains(p));
        let mut times = vec![t];
        times.extend(later);
        times
    }

    fn register(&mut self, id: SnapId, key: &str, t: u64) {
        self.snaps.insert(id, Snap { base: key.to_string(), state: State::Taking, users: 0, used: 0, bytes: 0 });
        self.by_base.entry(key.to_string()).or_default().insert(t, id);
    }

    fn forget(&mut self, id: SnapId) {
        let Some(s) = self.snaps.remove(&id) else { return };
        self.held_bytes -= s.bytes;
        if let Some(m) = self.by_base.get_mut(&s.base) {
            m.retain(|_, v| *v != id);
        }
        self.setup.retain(|_, v| *v != id);
    }
}

impl Drop for Snapshots {
    fn drop(&mut self) {
        // Closing its stdin ends the runner and everything below it.
        self.to.lock().unwrap().take();
        let mut p = self.process.lock().unwrap();
        let _ = p.wait();
    }
}

fn key(s: &Schedule) -> String {
    serde_json::to_string(s).expect("a schedule serializes")
}

fn read_replies(from: &mut BufReader<std::process::ChildStdout>, books: &Arc<(Mutex<Books>, Condvar)>) {
    let (lock, cv) = &**books;
    loop {
        let reply = wire::read::<Reply>(from);
        let mut b = lock.lock().unwrap();
        match reply {
            Ok(Some(Reply::Taken { snap, now_ns, setup_ns, bytes, fork_ns, .. })) => {
                b.report.taken += 1;
                b.report.take_fork_ns += fork_ns;
                let setup_key = b.setup.iter().find(|(_, v)| **v == snap).map(|(k, _)| k.clone());
                if let Some(base) = b.snaps.get(&snap).map(|s| s.base.clone()) {
                    let est = b.est_bytes.entry(base).or_default();
                    *est = (*est).max(bytes);
                }
                if let Some(s) = b.snaps.get_mut(&snap) {
                    s.bytes = bytes;
                    // An after-setup snapshot serves children branching
                    // from the nanosecond after setup on.
                    let at_ns = match (&setup_key, setup_ns) {
                        (Some(_), Some(s)) => s + 1,
                        _ => now_ns,
                    };
                    s.state = State::Ready { at_ns };
                    b.held_bytes += bytes;
                    b.report.held_bytes_max = b.report.held_bytes_max.max(b.held_bytes);
                    if let Some(k) = setup_key {
                        b.by_base.entry(k).or_default().insert(at_ns, snap);
                    }
                }
            }
            Ok(Some(Reply::Missed { snap, why })) => {
                if let Some(s) = b.snaps.get_mut(&snap) {
                    s.state = State::Missed(why);
                }
            }
            Ok(Some(Reply::Done { id, fork_ns, outcome })) => {
                b.answers.insert(id, Answer::Done(outcome, fork_ns));
            }
            Ok(Some(Reply::Lost { id, why })) => {
                b.answers.insert(id, Answer::Lost(why));
            }
            // A missed moment stays known (its reason serves later asks).
            Ok(Some(Reply::Gone { snap })) if !matches!(b.snaps.get(&snap).map(|s| &s.state), Some(State::Missed(_))) => b.forget(snap),
            Ok(Some(Reply::Gone { .. })) => {}
            Ok(Some(Reply::Hello { .. })) => {}
            Ok(None) => {
                b.dead.get_or_insert_with(|| "the snapshot runner ended".into());
            }
            Err(e) => {
                b.dead.get_or_insert_with(|| format!("the snapshot runner's replies do not parse: {e}"));
            }
        }
        let dead = b.dead.is_some();
        drop(b);
        cv.notify_all();
        if dead {
            return;
        }
    }
}
