//! A moment of a run: every node instance as it stands between two
//! scheduler steps (its status, the files and sockets it holds, its disk
//! with what is durable beside what is only cached) and the links cut.
//!
//! A run is stopped at no moment: [`MomentPause`] is a [`Pause`] that looks
//! at the world at the first loop top after the event (or the time) asked
//! for, copies what it needs, and lets the run go on. Between two loop tops
//! a step runs and due events fire; every trace event recorded there is part
//! of one indivisible change, so a moment names the span of events it comes
//! after (`events_from..events_to`), and stepping moment by moment steps by
//! those spans.
//!
//! A node's descriptors live in its instance's store, which the scheduler
//! cannot reach between steps; with `World::keep_handles` every host call
//! mirrors them into `NodeState::handles` (`wasi::host`), and a moment reads
//! that copy. Asking for a moment changes nothing the guests observe: the
//! trace hash of a run is the same with and without it.
use crate::disk::{Ino, MomentEntry};
use crate::net::{SockId, SocketView};
use crate::snapshot::Pause;
use crate::world::{Status, World};
use serde::Serialize;

/// One descriptor of a node instance, as its last host call left it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Handle {
    pub fd: u32,
    /// The file or folder (absent for a socket).
    pub ino: Option<Ino>,
    pub offset: u64,
    /// `r`, `w`, `rw`, `dir` or `socket`.
    pub mode: &'static str,
    pub socket: Option<SockId>,
}

/// Where a moment is: after trace event number `Event(i)` (counted from 0,
/// as `inspect -json` lists them), or at the first step at or after a
/// virtual time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum At {
    Event(usize),
    TimeNs(u64),
}

/// What the report shows of a run at one moment.
#[derive(Clone, Debug, Serialize)]
pub struct Moment {
    pub time_ns: u64,
    pub step: u64,
    /// The trace events this moment comes right after: `events_from` up to,
    /// not including, `events_to` (the events of one step and the events
    /// due with it). The moment before is after `events_from - 1`.
    pub events_from: usize,
    pub events_to: usize,
    /// The run ended before the moment asked for (or at it): this is the
    /// world as the run ended.
    pub end: bool,
    pub nodes: Vec<NodeMoment>,
    /// Directed links a partition cuts, as (from, to) instance names.
    pub cut_links: Vec<(String, String)>,
}

#[derive(Clone, Debug, Serialize)]
pub struct NodeMoment {
    pub node: String,
    /// `running`, `waiting`, `paused`, `crashed`, `exited` or `failed`.
    pub status: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// Crashes so far.
    pub crashes: u64,
    pub files: Vec<OpenFile>,
    pub sockets: Vec<OpenSocket>,
    /// The disk's model (`ext4`, `posix`...), and every path in it.
    pub disk_model: &'static str,
    pub disk: Vec<MomentEntry>,
    /// Entries past `disk::MOMENT_ENTRIES_MAX`, not listed.
    pub disk_more: usize,
}

#[derive(Clone, Debug, Serialize)]
pub struct OpenFile {
    pub fd: u32,
    /// In the cache's tree; `(unlinked) name` once no name reaches it.
    pub path: String,
    pub mode: &'static str,
    pub offset: u64,
}

#[derive(Clone, Debug, Serialize)]
pub struct OpenSocket {
    pub fd: u32,
    #[serde(flatten)]
    pub socket: SocketView,
}

/// Takes the moment `at` of a run (see the module docs).
#[derive(Debug)]
pub struct MomentPause {
    pub at: At,
    /// Trace events at the last loop top before the moment.
    before: usize,
    pub moment: Option<Moment>,
}

impl MomentPause {
    pub fn new(at: At) -> MomentPause {
        MomentPause { at, before: 0, moment: None }
    }
}

impl MomentPause {
    /// Whether the moment is now (else notes how many events came before).
    fn hit(&mut self, w: &World) -> bool {
        if self.moment.is_some() {
            return false;
        }
        let events = w.trace.events.len();
        let hit = match self.at {
            At::Event(i) => events > i,
            At::TimeNs(t) => w.now.nanos() >= t,
        };
        if !hit {
            self.before = events;
        }
        hit
    }
}

/// Looked at twice per loop: before due events fire (`due`) and after
/// (`looked`), so a moment after a crash or a restart event is the world
/// right after it, before any node steps again.
impl Pause for MomentPause {
    fn due(&mut self, w: &World) -> bool {
        self.hit(w)
    }

    fn reached(&mut self, w: &mut World) {
        self.moment = Some(capture(w, self.before, false));
    }

    fn looked(&mut self, w: &mut World) {
        if self.hit(w) {
            self.moment = Some(capture(w, self.before, false));
        }
    }

    fn ended(&mut self, w: &mut World) {
        if self.moment.is_none() {
            self.moment = Some(capture(w, self.before, true));
        }
    }
}

fn status(w: &World, i: usize) -> (&'static str, Option<i32>) {
    let n = &w.nodes[i];
    match n.status {
        Status::Runnable | Status::Blocked if n.paused_until.is_some_and(|u| u > w.now) => ("paused", None),
        Status::Runnable => ("running", None),
        Status::Blocked => ("waiting", None),
        Status::Crashed => ("crashed", None),
        Status::Exited(code) => ("exited", Some(code)),
        Status::Failed => ("failed", None),
    }
}

/// The world as it stands, with `before` events recorded at the loop top
/// before this one.
pub fn capture(w: &World, before: usize, end: bool) -> Moment {
    let nodes = (0..w.nodes.len())
        .map(|i| {
            let (status, exit_code) = status(w, i);
            let disk = &w.disks[i];
            // A node that is down holds nothing: its instance is gone.
            let handles: &[Handle] = if w.nodes[i].alive() { &w.nodes[i].handles } else { &[] };
            let mut files = Vec::new();
            let mut sockets = Vec::new();
            for h in handles {
                if let Some(id) = h.socket {
                    if let Some(socket) = w.net.socket_view(id) {
                        sockets.push(OpenSocket { fd: h.fd, socket });
                    }
                } else if let Some(ino) = h.ino {
                    files.push(OpenFile { fd: h.fd, path: disk.path_of(ino), mode: h.mode, offset: h.offset });
                }
            }
            let (entries, more) = disk.moment();
            NodeMoment { node: w.nodes[i].name.clone(), status, exit_code, crashes: w.nodes[i].generation, files, sockets, disk_model: disk.model.name(), disk: entries, disk_more: more }
        })
        .collect();
    let events_to = w.trace.events.len();
    assert!(before <= events_to, "a moment comes after the events before it");
    Moment { time_ns: w.now.nanos(), step: w.step, events_from: before.min(events_to), events_to, end, nodes, cut_links: w.net.cut_links() }
}
