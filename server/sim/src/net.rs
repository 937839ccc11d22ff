//! The simulated network: hosts, TCP-like connections, partitions.
//!
//! Every node instance is a host with one IPv4 address (`10.0.0.<idx+1>`);
//! `127.0.0.1` is the node itself. A connection is a pair of sockets, each
//! with an outgoing pipe of segments stamped with the virtual time they
//! arrive (latency from the `net` stream, never earlier than the segment
//! before, so a stream stays ordered). Segments are delivered by world events.
//!
//! A partition cuts directed links between hosts. A segment that reaches a
//! cut link stalls in its pipe until the link heals; a SYN that reaches a cut
//! link is lost and retried, so a connect across a cut ends in ETIMEDOUT
//! unless the cut heals first. A crashed node's connections reset at their
//! peers (after the usual latency) and its listeners vanish.
//!
//! This module is pure world state: no guest memory, no wasmtime. The host
//! calls in `wasi::sock` translate guest calls into these operations, and the
//! world turns the `Effects` they return into events and wake-ups.
use crate::config::{LatencyDistribution, NetConfig};
use crate::streams::{Stream, Streams};
use crate::vtime::VTime;
use crate::errno::{self, Errno};
use std::collections::{BTreeMap, BTreeSet, VecDeque};

pub type SockId = u64;

/// Bytes one segment carries: a large write is split into several segments,
/// each with its own latency draw.
pub const SEGMENT_BYTES: usize = 1460;
/// Bytes a connection holds unread or in flight per direction before the
/// sender sees EAGAIN (or blocks): the receive window (Linux autotunes its
/// buffers to a few MiB; a program that writes more than twice this without
/// reading deadlocks here as it would there).
pub const WINDOW_BYTES: usize = 1 << 20;
/// Bound on sockets alive per run (every node together).
pub const SOCKETS_MAX: usize = 65_536;
/// Bound on a listener's backlog, whatever the guest asks for.
pub const BACKLOG_MAX: usize = 4096;
/// First port handed out to connecting sockets and `bind(port 0)`.
pub const EPHEMERAL_FIRST: u16 = 49_152;
/// Loopback inside a node takes this long, and draws nothing.
pub const LOOPBACK_NS: u64 = 5_000;
/// SYN retransmission: the first retry after this, doubling each time.
pub const SYN_RETRY_FIRST_NS: u64 = 200_000_000;

pub const AF_INET: u16 = 1;
pub const AF_INET6: u16 = 2;
pub const SOCK_DGRAM: i32 = 1;
pub const SOCK_STREAM: i32 = 2;

/// The address of node instance `idx`.
pub fn node_ip(idx: usize) -> [u8; 4] {
    let n = (idx as u32) + 1;
    [10, 0, (n >> 8) as u8, n as u8]
}

pub const LOOPBACK_IP: [u8; 4] = [127, 0, 0, 1];
pub const ANY_IP: [u8; 4] = [0, 0, 0, 0];

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Addr {
    pub ip: [u8; 4],
    pub port: u16,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum NetEvent {
    /// Segments of `from`'s pipe may be due.
    Deliver { from: SockId },
    /// A SYN from `client` (attempt number `attempt`) reaches the server host.
    Syn { client: SockId, attempt: u32 },
    /// The server's answer reaches the client: accepted by `server`, or refused.
    SynAck { client: SockId, server: Option<SockId> },
    /// The connect of `client` gives up unless it finished.
    ConnectTimeout { client: SockId },
    /// Partition number `id` ends.
    Heal { id: u64 },
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Segment {
    Data(Vec<u8>),
    Fin,
    Rst,
}

#[derive(Clone, Debug)]
struct InFlight {
    at: VTime,
    seg: Segment,
}

#[derive(Debug)]
enum State {
    Fresh,
    Listening { backlog: usize, queue: VecDeque<SockId> },
    /// SYN attempt `attempt` in flight to the socket's `remote`.
    Connecting { attempt: u32 },
    Connected {
        peer: SockId,
        /// Bytes arrived and not yet read.
        rx: VecDeque<u8>,
        /// The peer's FIN arrived: reads end once `rx` is drained.
        rx_eof: bool,
        /// This side shut down writing (FIN sent).
        tx_closed: bool,
        /// This side shut down reading: arriving data is discarded.
        rx_closed: bool,
    },
    /// A pending error (refused, timed out, reset) that the next call reports.
    Error(Errno),
    /// The guest closed it (or its node died); kept while its pipe drains.
    Closed,
}

#[derive(Debug)]
struct Sock {
    owner: usize,
    state: State,
    local: Option<Addr>,
    remote: Option<Addr>,
    /// Segments sent and not yet delivered, earliest first.
    pipe: VecDeque<InFlight>,
    pipe_bytes: usize,
    /// The pipe's head reached a cut link; redelivered on heal.
    stalled: bool,
    /// After close: the peer the last segments in the pipe still go to.
    drain_peer: Option<SockId>,
    /// No segment of this socket arrives before this: an accepted socket's
    /// data must not overtake the handshake answer that tells its client.
    floor: VTime,
}

impl Sock {
    fn new(owner: usize, state: State, local: Option<Addr>, remote: Option<Addr>) -> Sock {
        Sock { owner, state, local, remote, pipe: VecDeque::new(), pipe_bytes: 0, stalled: false, drain_peer: None, floor: VTime::ZERO }
    }

    /// The connection is broken: report `e` from now on and drop what was
    /// still to send (a reset connection sends nothing more).
    fn fail(&mut self, e: Errno) {
        self.state = State::Error(e);
        self.drop_pipe();
    }

    fn drop_pipe(&mut self) {
        self.pipe.clear();
        self.pipe_bytes = 0;
        self.stalled = false;
    }
}

/// What a network operation asks the world to do.
#[derive(Default, Debug)]
pub struct Effects {
    pub events: Vec<(VTime, NetEvent)>,
    /// Nodes whose sockets changed readiness.
    pub wake: BTreeSet<usize>,
    /// Lines for the trace: (node, text).
    pub notes: Vec<(usize, String)>,
}

/// Readiness of a socket for poll_oneoff.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ready {
    pub read: bool,
    pub write: bool,
    /// Bytes readable now (the event's nbytes).
    pub bytes: u64,
}

pub struct Net {
    config: NetConfig,
    socks: BTreeMap<SockId, Sock>,
    next_id: SockId,
    listeners: BTreeMap<(usize, u16), SockId>,
    /// Next ephemeral port, per node (grown on demand).
    ephemeral: Vec<u16>,
    /// Directed links (from, to) cut, with how many partitions cut each.
    cuts: BTreeMap<(usize, usize), u32>,
    /// Active partitions: their links.
    partitions: BTreeMap<u64, Vec<(usize, usize)>>,
    next_partition: u64,
    names: Vec<String>,
}

impl Net {
    pub fn new(config: NetConfig, names: Vec<String>) -> Net {
        Net {
            config,
            socks: BTreeMap::new(),
            next_id: 1,
            listeners: BTreeMap::new(),
            ephemeral: vec![EPHEMERAL_FIRST; names.len()],
            cuts: BTreeMap::new(),
            partitions: BTreeMap::new(),
            next_partition: 1,
            names,
        }
    }

    /// The address a host name means: an instance name (or its `-` alias),
    /// `localhost`, or an IPv4 literal. Every node sees the same table.
    pub fn resolve_name(&self, name: &str) -> Option<[u8; 4]> {
        let name = name.trim_end_matches('.');
        if name == "localhost" {
            return Some(LOOPBACK_IP);
        }
        if let Ok(ip) = name.parse::<std::net::Ipv4Addr>() {
            return Some(ip.octets());
        }
        self.names.iter().position(|n| n == name || host_alias(n) == name).map(node_ip)
    }

    /// `/etc/hosts` as every node sees it.
    pub fn hosts_file(&self) -> String {
        let mut s = String::from("127.0.0.1 localhost\n");
        for (i, n) in self.names.iter().enumerate() {
            let [a, b, c, d] = node_ip(i);
            let alias = host_alias(n);
            // '#' starts a comment in a hosts file: only the alias fits.
            if alias == *n {
                s.push_str(&format!("{a}.{b}.{c}.{d} {n}\n"));
            } else {
                s.push_str(&format!("{a}.{b}.{c}.{d} {alias}\n"));
            }
        }
        s
    }

    /// The node instance at `ip` (a `10.0.x.y` address).
    fn node_at(&self, ip: [u8; 4]) -> Option<usize> {
        (0..self.names.len()).find(|&i| node_ip(i) == ip)
    }

    /// The host `ip` means to `from`: itself for loopback and any-address.
    fn host_of(&self, from: usize, ip: [u8; 4]) -> Option<usize> {
        if ip == LOOPBACK_IP || ip == ANY_IP {
            return Some(from);
        }
        self.node_at(ip)
    }

    /// The one-way latency of a segment from `from` to `to`, from the `net`
    /// stream (loopback draws nothing). Integer arithmetic only, so every
    /// machine draws the same.
    fn latency(&self, streams: &mut Streams, from: usize, to: usize) -> u64 {
        if from == to {
            return LOOPBACK_NS;
        }
        let range = self.config.latency;
        if self.config.distribution == LatencyDistribution::LongTail && streams.below(Stream::Net, 16) == 0 {
            let max = range.max_ns.max(1);
            return max + streams.below(Stream::Net, 9 * max + 1);
        }
        range.draw(streams, Stream::Net)
    }

    fn link_cut(&self, from: usize, to: usize) -> bool {
        from != to && self.cuts.get(&(from, to)).is_some_and(|n| *n > 0)
    }

    fn sock(&self, id: SockId) -> Result<&Sock, Errno> {
        self.socks.get(&id).ok_or(errno::BADF)
    }

    fn sock_mut(&mut self, id: SockId) -> Result<&mut Sock, Errno> {
        self.socks.get_mut(&id).ok_or(errno::BADF)
    }

    pub fn open(&mut self, owner: usize, af: i32, socktype: i32) -> Result<SockId, Errno> {
        if af != i32::from(AF_INET) && af != i32::from(AF_INET6) {
            return Err(errno::AFNOSUPPORT);
        }
        if socktype == SOCK_DGRAM {
            return Err(errno::PROTONOSUPPORT);
        }
        if socktype != SOCK_STREAM && socktype != 0 {
            return Err(errno::PROTOTYPE);
        }
        if self.socks.len() >= SOCKETS_MAX {
            return Err(errno::NFILE);
        }
        let id = self.next_id;
        self.next_id += 1;
        self.socks.insert(id, Sock::new(owner, State::Fresh, None, None));
        Ok(id)
    }

    /// Whether `port` on `owner` is taken: by a listener, or by a socket
    /// bound to it and not yet listening. Closed sockets still draining and
    /// accepted connections (which share their listener's port) do not
    /// count, as with SO_REUSEADDR, which Go and Rust set: a restarted
    /// server listens on its port again at once.
    fn port_taken(&self, owner: usize, port: u16) -> bool {
        self.listeners.contains_key(&(owner, port))
            || self.socks.values().any(|s| s.owner == owner && matches!(s.state, State::Fresh) && s.local.is_some_and(|a| a.port == port))
    }

    /// A port for a connecting socket or `bind(port 0)`: not a listener's,
    /// not one an open outgoing connection of the node uses.
    fn ephemeral_port(&mut self, owner: usize) -> Result<u16, Errno> {
        for _ in 0..(u16::MAX - EPHEMERAL_FIRST) {
            let p = self.ephemeral[owner];
            self.ephemeral[owner] = if p == u16::MAX { EPHEMERAL_FIRST } else { p + 1 };
            // Taken by a listener, or by any socket of the node still open
            // (which includes those port_taken counts).
            let used = self.listeners.contains_key(&(owner, p))
                || self.socks.values().any(|s| s.owner == owner && !matches!(s.state, State::Closed) && s.local.is_some_and(|a| a.port == p));
            if !used {
                return Ok(p);
            }
        }
        Err(errno::ADDRINUSE)
    }

    pub fn bind(&mut self, id: SockId, addr: Addr) -> Result<(), Errno> {
        let owner = self.sock(id)?.owner;
        if addr.ip != ANY_IP && addr.ip != LOOPBACK_IP && addr.ip != node_ip(owner) {
            return Err(errno::ADDRNOTAVAIL);
        }
        let s = self.sock(id)?;
        if s.local.is_some() || !matches!(s.state, State::Fresh) {
            return Err(errno::INVAL);
        }
        let port = if addr.port == 0 { self.ephemeral_port(owner)? } else { addr.port };
        if self.port_taken(owner, port) {
            return Err(errno::ADDRINUSE);
        }
        self.sock_mut(id)?.local = Some(Addr { ip: addr.ip, port });
        Ok(())
    }

    pub fn listen(&mut self, id: SockId, backlog: i32) -> Result<(), Errno> {
        let owner = self.sock(id)?.owner;
        if !matches!(self.sock(id)?.state, State::Fresh) {
            return Err(errno::INVAL);
        }
        if self.sock(id)?.local.is_none() {
            let port = self.ephemeral_port(owner)?;
            self.sock_mut(id)?.local = Some(Addr { ip: ANY_IP, port });
        }
        let port = self.sock(id)?.local.expect("bound above").port;
        let backlog = (backlog.max(1) as usize).min(BACKLOG_MAX);
        self.sock_mut(id)?.state = State::Listening { backlog, queue: VecDeque::new() };
        self.listeners.insert((owner, port), id);
        Ok(())
    }

    /// Takes the next established connection; EAGAIN when there is none.
    pub fn accept(&mut self, id: SockId) -> Result<SockId, Errno> {
        match &mut self.sock_mut(id)?.state {
            State::Listening { queue, .. } => queue.pop_front().ok_or(errno::AGAIN),
            _ => Err(errno::INVAL),
        }
    }

    /// Starts a connect. Always in progress at first: the SYN takes time.
    pub fn connect(&mut self, id: SockId, remote: Addr, now: VTime, streams: &mut Streams, fx: &mut Effects) -> Result<(), Errno> {
        let owner = self.sock(id)?.owner;
        match self.sock(id)?.state {
            State::Fresh => {}
            State::Connecting { .. } => return Err(errno::ALREADY),
            State::Connected { .. } => return Err(errno::ISCONN),
            // A socket whose connect failed is not reused (Go and Rust open
            // a new one for every attempt).
            State::Error(e) => return Err(e),
            _ => return Err(errno::INVAL),
        }
        if remote.port == 0 {
            return Err(errno::INVAL);
        }
        if self.sock(id)?.local.is_none() {
            let port = self.ephemeral_port(owner)?;
            let ip = if remote.ip == LOOPBACK_IP { LOOPBACK_IP } else { node_ip(owner) };
            self.sock_mut(id)?.local = Some(Addr { ip, port });
        }
        let s = self.sock_mut(id)?;
        s.remote = Some(remote);
        s.state = State::Connecting { attempt: 0 };
        // To no such host, nobody answers: the connect times out.
        if let Some(to) = self.host_of(owner, remote.ip) {
            let at = now + self.latency(streams, owner, to);
            fx.events.push((at, NetEvent::Syn { client: id, attempt: 0 }));
        }
        fx.events.push((now + self.config.connect_timeout_ns, NetEvent::ConnectTimeout { client: id }));
        Ok(())
    }

    /// For a blocking connect: Ok once connected, EAGAIN while in progress.
    pub fn connect_result(&mut self, id: SockId) -> Result<(), Errno> {
        let s = self.sock_mut(id)?;
        match s.state {
            State::Connecting { .. } => Err(errno::AGAIN),
            State::Connected { .. } => Ok(()),
            State::Error(e) => Err(e),
            _ => Err(errno::INVAL),
        }
    }

    /// Sends what fits in the window; EAGAIN when nothing does.
    pub fn send(&mut self, id: SockId, data: &[u8], now: VTime, streams: &mut Streams, fx: &mut Effects) -> Result<usize, Errno> {
        let room = self.send_room(id)?;
        if data.is_empty() {
            return Ok(0);
        }
        if room == 0 {
            return Err(errno::AGAIN);
        }
        let n = room.min(data.len());
        for chunk in data[..n].chunks(SEGMENT_BYTES) {
            self.push_segment(id, Segment::Data(chunk.to_vec()), now, streams, fx);
        }
        Ok(n)
    }

    /// Bytes a send could take now (0: the window is full), or the error it
    /// would report (EAGAIN while still connecting).
    pub fn send_room(&self, id: SockId) -> Result<usize, Errno> {
        let s = self.sock(id)?;
        match &s.state {
            State::Connected { tx_closed: true, .. } => Err(errno::PIPE),
            State::Connected { peer, .. } => Ok(WINDOW_BYTES.saturating_sub(s.pipe_bytes + self.unread(*peer))),
            State::Error(e) => Err(*e),
            State::Connecting { .. } => Err(errno::AGAIN),
            _ => Err(errno::NOTCONN),
        }
    }

    fn unread(&self, id: SockId) -> usize {
        match self.socks.get(&id).map(|s| &s.state) {
            Some(State::Connected { rx, .. }) => rx.len(),
            _ => 0,
        }
    }

    fn push_segment(&mut self, from: SockId, seg: Segment, now: VTime, streams: &mut Streams, fx: &mut Effects) {
        let (owner, peer) = {
            let s = &self.socks[&from];
            (s.owner, s.peer_link())
        };
        let to = peer.and_then(|p| self.socks.get(&p)).map(|p| p.owner).unwrap_or(owner);
        let latency = self.latency(streams, owner, to);
        let s = self.socks.get_mut(&from).expect("checked by the caller");
        let earliest = s.pipe.back().map(|f| f.at).unwrap_or(VTime::ZERO);
        let at = (now + latency).max(earliest).max(s.floor);
        if let Segment::Data(d) = &seg {
            s.pipe_bytes += d.len();
        }
        let was_empty = s.pipe.is_empty();
        s.pipe.push_back(InFlight { at, seg });
        if was_empty && !s.stalled {
            fx.events.push((at, NetEvent::Deliver { from }));
        }
    }

    /// Reads up to `max` bytes. Ok(empty) is end of stream.
    pub fn recv(&mut self, id: SockId, max: usize, peek: bool, fx: &mut Effects) -> Result<Vec<u8>, Errno> {
        let s = self.sock_mut(id)?;
        if max == 0 && matches!(s.state, State::Connected { .. }) {
            return Ok(Vec::new());
        }
        let (out, peer) = match &mut s.state {
            State::Connected { rx_closed: true, .. } => return Ok(Vec::new()),
            State::Connected { rx, rx_eof, peer, .. } => {
                if rx.is_empty() {
                    return if *rx_eof { Ok(Vec::new()) } else { Err(errno::AGAIN) };
                }
                let n = max.min(rx.len());
                let out = front_bytes(rx, n, peek);
                (out, *peer)
            }
            State::Error(e) => return Err(*e),
            State::Connecting { .. } => return Err(errno::AGAIN),
            _ => return Err(errno::NOTCONN),
        };
        // Room in the window: the peer may write again.
        if !peek {
            if let Some(p) = self.socks.get(&peer) {
                fx.wake.insert(p.owner);
            }
        }
        Ok(out)
    }

    pub fn shutdown(&mut self, id: SockId, how: i32, now: VTime, streams: &mut Streams, fx: &mut Effects) -> Result<(), Errno> {
        let s = self.sock_mut(id)?;
        let State::Connected { tx_closed, rx_closed, .. } = &mut s.state else {
            return Err(errno::NOTCONN);
        };
        if how & 1 != 0 {
            *rx_closed = true;
        }
        let send_fin = how & 2 != 0 && !*tx_closed;
        if how & 2 != 0 {
            *tx_closed = true;
        }
        if send_fin {
            self.push_segment(id, Segment::Fin, now, streams, fx);
        }
        Ok(())
    }

    /// The guest closed the socket: a FIN for a connection, the listener
    /// goes away (its queued connections reset).
    pub fn close(&mut self, id: SockId, now: VTime, streams: &mut Streams, fx: &mut Effects) {
        self.end(id, Segment::Fin, now, streams, fx);
    }

    /// Resets a connection from this side: RST to the peer, the socket gone.
    fn abort(&mut self, id: SockId, now: VTime, streams: &mut Streams, fx: &mut Effects) {
        self.end(id, Segment::Rst, now, streams, fx);
    }

    /// Ends a socket: a connection sends `last` (FIN or RST) behind the data
    /// still in flight, and the socket lingers until its pipe drains.
    fn end(&mut self, id: SockId, last: Segment, now: VTime, streams: &mut Streams, fx: &mut Effects) {
        let Some(s) = self.socks.get_mut(&id) else { return };
        match std::mem::replace(&mut s.state, State::Closed) {
            State::Listening { queue, .. } => {
                let owner = s.owner;
                if let Some(port) = s.local.map(|a| a.port) {
                    self.listeners.remove(&(owner, port));
                }
                for q in queue {
                    self.abort(q, now, streams, fx);
                }
            }
            State::Connected { peer, tx_closed, .. } => {
                s.drain_peer = Some(peer);
                if !tx_closed || last == Segment::Rst {
                    self.push_segment(id, last, now, streams, fx);
                }
            }
            _ => {}
        }
        self.collect(id);
    }

    /// Drops a closed socket once nothing of it is in flight.
    fn collect(&mut self, id: SockId) {
        if let Some(s) = self.socks.get(&id) {
            if matches!(s.state, State::Closed) && s.pipe.is_empty() {
                self.socks.remove(&id);
            }
        }
    }

    /// A node instance ended: crashed (`reset`: peers see ECONNRESET) or
    /// exited (its descriptors close: peers see end of stream).
    pub fn node_down(&mut self, node: usize, reset: bool, now: VTime, streams: &mut Streams, fx: &mut Effects) {
        let mine: Vec<SockId> = self.socks.iter().filter(|(_, s)| s.owner == node && !matches!(s.state, State::Closed)).map(|(id, _)| *id).collect();
        self.listeners.retain(|(n, _), _| *n != node);
        for id in mine {
            if reset {
                self.abort(id, now, streams, fx);
            } else {
                self.close(id, now, streams, fx);
            }
        }
    }

    pub fn readiness(&self, id: SockId) -> Ready {
        let Some(s) = self.socks.get(&id) else { return Ready { read: true, write: true, bytes: 0 } };
        match &s.state {
            State::Listening { queue, .. } => Ready { read: !queue.is_empty(), write: false, bytes: queue.len() as u64 },
            State::Connecting { .. } | State::Fresh => Ready { read: false, write: false, bytes: 0 },
            State::Connected { rx, rx_eof, rx_closed, .. } => {
                // Writable when a send would not say EAGAIN (room, or EPIPE).
                let write = self.send_room(id) != Ok(0);
                Ready { read: !rx.is_empty() || *rx_eof || *rx_closed, write, bytes: rx.len() as u64 }
            }
            State::Error(_) | State::Closed => Ready { read: true, write: true, bytes: 0 },
        }
    }

    /// SO_ERROR: the socket's pending error (a failed connect, a reset),
    /// else 0, also while a connect is in progress, as on Linux (callers
    /// then ask for the peer). The error stays: reads and writes report it.
    pub fn so_error(&self, id: SockId) -> Result<Errno, Errno> {
        match self.sock(id)?.state {
            State::Error(e) => Ok(e),
            _ => Ok(errno::SUCCESS),
        }
    }

    pub fn local_addr(&self, id: SockId) -> Result<Addr, Errno> {
        self.sock(id)?.local.ok_or(errno::INVAL)
    }

    pub fn peer_addr(&self, id: SockId) -> Result<Addr, Errno> {
        let s = self.sock(id)?;
        match s.state {
            State::Connected { .. } => s.remote.ok_or(errno::NOTCONN),
            _ => Err(errno::NOTCONN),
        }
    }

    /// Applies a network event; returns what it causes.
    /// `host_up(node)`: false while the node is crashed (power off: nothing
    /// answers); a node whose process exited still answers, with a refusal.
    pub fn on_event(&mut self, ev: NetEvent, now: VTime, streams: &mut Streams, host_up: &dyn Fn(usize) -> bool, fx: &mut Effects) {
        match ev {
            NetEvent::Deliver { from } => self.deliver(from, now, fx),
            NetEvent::Syn { client, attempt } => self.on_syn(client, attempt, now, streams, host_up, fx),
            NetEvent::SynAck { client, server } => self.on_syn_ack(client, server, fx),
            NetEvent::ConnectTimeout { client } => {
                let Some(s) = self.socks.get(&client).filter(|s| matches!(s.state, State::Connecting { .. })) else { return };
                let note = (s.owner, format!("connect to {} timed out", self.show(s.remote)));
                let s = self.socks.get_mut(&client).expect("present");
                s.state = State::Error(errno::TIMEDOUT);
                fx.wake.insert(s.owner);
                fx.notes.push(note);
            }
            NetEvent::Heal { id } => self.heal(id, now, streams, fx),
        }
    }

    fn on_syn(&mut self, client: SockId, attempt: u32, now: VTime, streams: &mut Streams, host_up: &dyn Fn(usize) -> bool, fx: &mut Effects) {
        let Some(c) = self.socks.get(&client) else { return };
        let (State::Connecting { attempt: current }, Some(remote)) = (&c.state, c.remote) else { return };
        if *current != attempt {
            return;
        }
        let from = c.owner;
        let Some(to) = self.host_of(from, remote.ip) else { return };
        // A handshake needs both directions: across a cut (either way) or to
        // a host without power the SYN is lost, and retried after 200ms,
        // 400ms, ... until the connect timeout ends it.
        if self.link_cut(from, to) || self.link_cut(to, from) || !host_up(to) {
            let next = attempt + 1;
            let back = SYN_RETRY_FIRST_NS.saturating_mul(1 << attempt.min(20));
            if let Some(State::Connecting { attempt, .. }) = self.socks.get_mut(&client).map(|s| &mut s.state) {
                *attempt = next;
            }
            let lat = self.latency(streams, from, to);
            fx.events.push((now + back + lat, NetEvent::Syn { client, attempt: next }));
            return;
        }
        let listener = self.listeners.get(&(to, remote.port)).copied().filter(|l| {
            let s = &self.socks[l];
            let ip = s.local.map(|a| a.ip).unwrap_or(ANY_IP);
            ip == ANY_IP || ip == remote.ip
        });
        let server = match listener {
            Some(l) => {
                let full = matches!(&self.socks[&l].state, State::Listening { backlog, queue } if queue.len() >= *backlog);
                if full || self.socks.len() >= SOCKETS_MAX {
                    None
                } else {
                    let id = self.next_id;
                    self.next_id += 1;
                    let local = Addr { ip: if remote.ip == LOOPBACK_IP { LOOPBACK_IP } else { node_ip(to) }, port: remote.port };
                    let state = State::Connected { peer: client, rx: VecDeque::new(), rx_eof: false, tx_closed: false, rx_closed: false };
                    self.socks.insert(id, Sock::new(to, state, Some(local), c.local));
                    if let State::Listening { queue, .. } = &mut self.socks.get_mut(&l).expect("listener").state {
                        queue.push_back(id);
                    }
                    fx.wake.insert(to);
                    Some(id)
                }
            }
            None => None,
        };
        let lat = self.latency(streams, to, from);
        let answer_at = now + lat;
        if let Some(s) = server.and_then(|id| self.socks.get_mut(&id)) {
            s.floor = answer_at;
        }
        fx.events.push((answer_at, NetEvent::SynAck { client, server }));
    }

    fn on_syn_ack(&mut self, client: SockId, server: Option<SockId>, fx: &mut Effects) {
        let Some(c) = self.socks.get_mut(&client) else {
            if let Some(s) = server {
                self.orphaned(s, fx);
            }
            return;
        };
        if !matches!(c.state, State::Connecting { .. }) {
            if let Some(s) = server {
                self.orphaned(s, fx);
            }
            return;
        }
        fx.wake.insert(c.owner);
        let (owner, remote) = (c.owner, c.remote);
        match server {
            Some(peer) => {
                c.state = State::Connected { peer, rx: VecDeque::new(), rx_eof: false, tx_closed: false, rx_closed: false };
                fx.notes.push((owner, format!("connected to {}", self.show(remote))));
            }
            None => {
                c.state = State::Error(errno::CONNREFUSED);
                fx.notes.push((owner, format!("connect to {} refused", self.show(remote))));
            }
        }
    }

    /// The client of an accepted (or queued) connection gave up before the
    /// handshake finished: the server side reads ECONNRESET, as on Linux.
    fn orphaned(&mut self, id: SockId, fx: &mut Effects) {
        let Some(s) = self.socks.get_mut(&id) else { return };
        if matches!(s.state, State::Closed) {
            s.drop_pipe();
            self.collect(id);
        } else {
            s.fail(errno::CONNRESET);
            fx.wake.insert(s.owner);
        }
    }

    fn deliver(&mut self, from: SockId, now: VTime, fx: &mut Effects) {
        let Some(s) = self.socks.get_mut(&from) else { return };
        let owner = s.owner;
        let Some(peer) = s.peer_link() else {
            // Nobody to deliver to any more (the socket failed): drop it.
            s.drop_pipe();
            self.collect(from);
            return;
        };
        // Links do not change while one event is applied: look once.
        let cut = self.socks.get(&peer).is_some_and(|p| self.link_cut(owner, p.owner));
        // Bounded by the pipe: each turn delivers its head or stops.
        loop {
            let s = self.socks.get_mut(&from).expect("present");
            let Some(head) = s.pipe.front() else { break };
            if head.at > now {
                fx.events.push((head.at, NetEvent::Deliver { from }));
                break;
            }
            if cut {
                s.stalled = true;
                break;
            }
            let seg = s.pipe.pop_front().expect("head").seg;
            if let Segment::Data(d) = &seg {
                s.pipe_bytes -= d.len();
            }
            self.arrive(peer, from, seg, fx);
        }
        // Moving bytes from the pipe to the peer leaves the window as it
        // was: the sender is woken when the peer reads (or drops) them.
        self.collect(from);
    }

    /// A segment from `from` reaches socket `to`.
    fn arrive(&mut self, to: SockId, from: SockId, seg: Segment, fx: &mut Effects) {
        let target = self.socks.get_mut(&to).filter(|t| matches!(t.state, State::Connected { peer, .. } if peer == from));
        let Some(t) = target else {
            // Nobody home (closed, failed, gone): data answers with a reset.
            if matches!(seg, Segment::Data(_)) {
                self.reset_sender(from, fx);
            }
            return;
        };
        fx.wake.insert(t.owner);
        match (&mut t.state, seg) {
            (State::Connected { rx_closed: true, .. }, Segment::Data(_)) => {
                // Discarded: the window has room again.
                if let Some(f) = self.socks.get(&from) {
                    fx.wake.insert(f.owner);
                }
            }
            (State::Connected { rx, .. }, Segment::Data(d)) => rx.extend(d),
            (State::Connected { rx_eof, .. }, Segment::Fin) => *rx_eof = true,
            (State::Connected { .. }, Segment::Rst) => {
                t.fail(errno::CONNRESET);
                let (owner, remote) = (t.owner, t.remote);
                fx.notes.push((owner, format!("connection with {} reset", self.show(remote))));
            }
            _ => {}
        }
    }

    fn reset_sender(&mut self, from: SockId, fx: &mut Effects) {
        if let Some(s) = self.socks.get_mut(&from) {
            if matches!(s.state, State::Connected { .. }) {
                s.fail(errno::CONNRESET);
                fx.wake.insert(s.owner);
            }
        }
    }

    /// Cuts the links of a partition; returns its id (for the heal event).
    pub fn partition(&mut self, links: Vec<(usize, usize)>) -> u64 {
        let id = self.next_partition;
        self.next_partition += 1;
        for l in &links {
            *self.cuts.entry(*l).or_insert(0) += 1;
        }
        self.partitions.insert(id, links);
        id
    }

    fn heal(&mut self, id: u64, now: VTime, streams: &mut Streams, fx: &mut Effects) {
        let Some(links) = self.partitions.remove(&id) else { return };
        for l in &links {
            if let Some(n) = self.cuts.get_mut(l) {
                *n -= 1;
                if *n == 0 {
                    self.cuts.remove(l);
                }
            }
        }
        // Stalled pipes whose link is whole again resume after a fresh latency.
        let stalled: Vec<SockId> = self.socks.iter().filter(|(_, s)| s.stalled).map(|(id, _)| *id).collect();
        for sid in stalled {
            let s = &self.socks[&sid];
            let owner = s.owner;
            let to = s.peer_link().and_then(|p| self.socks.get(&p)).map(|p| p.owner);
            if to.is_some_and(|to| self.link_cut(owner, to)) {
                continue;
            }
            let lat = self.latency(streams, owner, to.unwrap_or(owner));
            let s = self.socks.get_mut(&sid).expect("present");
            s.stalled = false;
            let at = now + lat;
            for f in s.pipe.iter_mut() {
                f.at = f.at.max(at);
            }
            fx.events.push((at, NetEvent::Deliver { from: sid }));
        }
    }
}

impl Sock {
    /// The peer a socket's pipe delivers to: while connected, or while a
    /// closed socket's last segments drain.
    fn peer_link(&self) -> Option<SockId> {
        match self.state {
            State::Connected { peer, .. } => Some(peer),
            _ => self.drain_peer,
        }
    }
}

/// A node instance name as a DNS-safe host name (`client#1` → `client-1`).
pub fn host_alias(name: &str) -> String {
    name.replace('#', "-")
}

impl Net {
    /// An address as the trace shows it: the host's instance name (or
    /// `localhost`) and the port, so a timeline reads `server:7000`.
    fn show(&self, a: Option<Addr>) -> String {
        let Some(Addr { ip, port }) = a else { return "?".into() };
        if ip == LOOPBACK_IP {
            return format!("localhost:{port}");
        }
        match self.node_at(ip) {
            Some(i) => format!("{}:{port}", self.names[i]),
            None => format!("{}.{}.{}.{}:{port}", ip[0], ip[1], ip[2], ip[3]),
        }
    }
}

/// The first `n` bytes of `rx`, removed unless `peek`. Copied slice by
/// slice: collecting a drain goes byte by byte, and was a fifth of an echo
/// run's time (scripts/bench).
fn front_bytes(rx: &mut VecDeque<u8>, n: usize, peek: bool) -> Vec<u8> {
    assert!(n <= rx.len());
    let (a, b) = rx.as_slices();
    let head = n.min(a.len());
    let mut out = Vec::with_capacity(n);
    out.extend_from_slice(&a[..head]);
    out.extend_from_slice(&b[..n - head]);
    if !peek {
        rx.drain(..n);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{LatencyDistribution, NetConfig, Span};

    #[test]
    fn front_bytes_reads_across_the_ring_buffer_wrap() {
        let mut rx: VecDeque<u8> = VecDeque::with_capacity(8);
        rx.extend(0..6u8);
        rx.drain(..4);
        rx.extend(6..12u8); // wraps: the bytes sit in two slices
        assert!(!rx.as_slices().1.is_empty());
        assert_eq!(front_bytes(&mut rx, 5, true), vec![4, 5, 6, 7, 8]);
        assert_eq!(rx.len(), 8);
        assert_eq!(front_bytes(&mut rx, 5, false), vec![4, 5, 6, 7, 8]);
        assert_eq!(rx.iter().copied().collect::<Vec<_>>(), vec![9, 10, 11]);
        assert_eq!(front_bytes(&mut rx, 3, false), vec![9, 10, 11]);
        assert!(rx.is_empty());
    }

    /// A network of `n` hosts and a tiny event loop over its events.
    struct Harness {
        net: Net,
        streams: Streams,
        now: VTime,
        queue: Vec<(VTime, u64, NetEvent)>,
        seq: u64,
        alive: Vec<bool>,
    }

    impl Harness {
        fn new(n: usize) -> Harness {
            let config = NetConfig { latency: Span { min_ns: 1_000, max_ns: 900_000 }, distribution: LatencyDistribution::Uniform, connect_timeout_ns: 3_000_000_000 };
            let names = (0..n).map(|i| format!("n{i}")).collect();
            Harness { net: Net::new(config, names), streams: Streams::new(7), now: VTime::ZERO, queue: Vec::new(), seq: 0, alive: vec![true; n] }
        }

        fn absorb(&mut self, fx: Effects) {
            for (at, ev) in fx.events {
                self.queue.push((at, self.seq, ev));
                self.seq += 1;
            }
        }

        /// Applies every event due up to `until`, in time order.
        fn run_until(&mut self, until: VTime) {
            for _ in 0..1_000_000 {
                self.queue.sort();
                match self.queue.first() {
                    Some((t, _, _)) if *t <= until => {
                        let (t, _, ev) = self.queue.remove(0);
                        self.now = self.now.max(t);
                        let mut fx = Effects::default();
                        let alive = self.alive.clone();
                        self.net.on_event(ev, self.now, &mut self.streams, &|i| alive[i], &mut fx);
                        self.absorb(fx);
                    }
                    _ => break,
                }
            }
            self.now = self.now.max(until);
        }

        fn with<R>(&mut self, op: impl FnOnce(&mut Net, VTime, &mut Streams, &mut Effects) -> R) -> R {
            let mut fx = Effects::default();
            let r = op(&mut self.net, self.now, &mut self.streams, &mut fx);
            self.absorb(fx);
            r
        }

        /// A listener of `node` on `ip:port`.
        fn listener(&mut self, node: usize, ip: [u8; 4], port: u16) -> SockId {
            let l = self.net.open(node, 1, SOCK_STREAM).unwrap();
            self.net.bind(l, Addr { ip, port }).unwrap();
            self.net.listen(l, 16).unwrap();
            l
        }

        /// A socket of `node` connecting to `ip:port`.
        fn connecting(&mut self, node: usize, ip: [u8; 4], port: u16) -> SockId {
            let c = self.net.open(node, 1, SOCK_STREAM).unwrap();
            self.with(|n, now, s, fx| n.connect(c, Addr { ip, port }, now, s, fx)).unwrap();
            c
        }

        /// A listener on host 0 port 80 and a connection to it from host 1.
        fn connected(&mut self) -> (SockId, SockId, SockId) {
            let l = self.listener(0, ANY_IP, 80);
            let c = self.connecting(1, node_ip(0), 80);
            self.run_until(self.now + 10_000_000);
            assert_eq!(self.net.connect_result(c), Ok(()));
            let a = self.net.accept(l).unwrap();
            (l, c, a)
        }
    }

    fn recv_all(h: &mut Harness, id: SockId) -> Vec<u8> {
        h.with(|n, _, _, fx| n.recv(id, usize::MAX, false, fx)).unwrap_or_default()
    }

    #[test]
    fn a_stream_arrives_whole_and_in_order_whatever_the_latency_draws() {
        let mut h = Harness::new(2);
        let (_, c, a) = h.connected();
        let mut sent = Vec::new();
        for i in 0..200u32 {
            let chunk: Vec<u8> = (0..(i % 7 + 1) * 300).map(|j| (i * 13 + j) as u8).collect();
            assert_eq!(h.with(|n, now, s, fx| n.send(c, &chunk, now, s, fx)), Ok(chunk.len()));
            sent.extend(chunk);
            h.run_until(h.now + 50_000);
        }
        h.run_until(h.now + 10_000_000);
        assert_eq!(recv_all(&mut h, a), sent);
    }

    #[test]
    fn nobody_listening_is_refused_and_a_full_window_says_eagain() {
        let mut h = Harness::new(2);
        let c = h.connecting(1, node_ip(0), 81);
        assert_eq!(h.net.connect_result(c), Err(errno::AGAIN));
        h.run_until(VTime(10_000_000));
        assert_eq!(h.net.connect_result(c), Err(errno::CONNREFUSED));

        let (_, c, a) = h.connected();
        let big = vec![7u8; WINDOW_BYTES + 10];
        assert_eq!(h.with(|n, now, s, fx| n.send(c, &big, now, s, fx)), Ok(WINDOW_BYTES));
        assert_eq!(h.with(|n, now, s, fx| n.send(c, b"x", now, s, fx)), Err(errno::AGAIN));
        assert!(!h.net.readiness(c).write);
        h.run_until(h.now + 10_000_000);
        assert_eq!(recv_all(&mut h, a).len(), WINDOW_BYTES);
        assert!(h.net.readiness(c).write, "reading opens the window");
    }

    #[test]
    fn a_cut_link_stalls_the_stream_until_the_heal() {
        let mut h = Harness::new(2);
        let (_, c, a) = h.connected();
        let id = h.net.partition(vec![(1, 0)]);
        h.with(|n, now, s, fx| n.send(c, b"held", now, s, fx)).unwrap();
        // The reverse direction still works.
        h.with(|n, now, s, fx| n.send(a, b"back", now, s, fx)).unwrap();
        h.run_until(h.now + 100_000_000);
        assert_eq!(recv_all(&mut h, a), b"");
        assert_eq!(recv_all(&mut h, c), b"back");
        h.with(|n, now, s, fx| n.on_event(NetEvent::Heal { id }, now, s, &|_| true, fx));
        h.run_until(h.now + 10_000_000);
        assert_eq!(recv_all(&mut h, a), b"held");
    }

    #[test]
    fn a_crash_resets_the_peer_and_removes_the_listener_an_exit_closes_cleanly() {
        let mut h = Harness::new(2);
        let (_, c, _) = h.connected();
        h.alive[0] = false;
        h.with(|n, now, s, fx| n.node_down(0, true, now, s, fx));
        h.run_until(h.now + 10_000_000);
        assert_eq!(h.with(|n, _, _, fx| n.recv(c, 10, false, fx)), Err(errno::CONNRESET));
        assert!(h.net.listeners.is_empty());

        let mut h = Harness::new(2);
        let (_, c, a) = h.connected();
        h.with(|n, now, s, fx| n.send(a, b"last words", now, s, fx)).unwrap();
        h.with(|n, now, s, fx| n.node_down(0, false, now, s, fx));
        h.run_until(h.now + 10_000_000);
        assert_eq!(recv_all(&mut h, c), b"last words");
        assert_eq!(h.with(|n, _, _, fx| n.recv(c, 10, false, fx)), Ok(Vec::new()), "end of stream");
    }

    #[test]
    fn a_greeting_sent_on_accept_never_overtakes_the_handshake() {
        // Whatever the latency draws, the client is connected before the
        // server's first bytes arrive: none are lost.
        for seed in 0..50 {
            let mut h = Harness::new(2);
            h.streams = Streams::new(seed);
            let l = h.listener(0, ANY_IP, 80);
            let c = h.connecting(1, node_ip(0), 80);
            // Step until the server side exists, then greet at once.
            let mut a = None;
            for _ in 0..100 {
                h.run_until(h.now + 10_000);
                if let Ok(id) = h.net.accept(l) {
                    a = Some(id);
                    break;
                }
            }
            let a = a.expect("the SYN arrived");
            h.with(|n, now, s, fx| n.send(a, b"hello", now, s, fx)).unwrap();
            h.with(|n, now, s, fx| n.close(a, now, s, fx));
            h.run_until(h.now + 10_000_000);
            assert_eq!(recv_all(&mut h, c), b"hello", "seed {seed}");
        }
    }

    #[test]
    fn a_restarted_server_listens_on_its_port_while_old_connections_drain() {
        let mut h = Harness::new(2);
        let (_, c, a) = h.connected();
        // Node 0 crashes with data in flight behind a cut: its sockets linger.
        h.net.partition(vec![(0, 1)]);
        h.with(|n, now, s, fx| n.send(a, b"stuck", now, s, fx)).unwrap();
        h.run_until(h.now + 5_000_000);
        h.alive[0] = false;
        h.with(|n, now, s, fx| n.node_down(0, true, now, s, fx));
        h.alive[0] = true;
        let l = h.net.open(0, 1, SOCK_STREAM).unwrap();
        assert_eq!(h.net.bind(l, Addr { ip: ANY_IP, port: 80 }), Ok(()));
        h.net.listen(l, 16).unwrap();
        assert!(!h.net.readiness(c).read, "the reset waits behind the cut");
    }

    #[test]
    fn loopback_reaches_the_node_itself_and_no_partition_cuts_it() {
        let mut h = Harness::new(2);
        let l = h.listener(0, LOOPBACK_IP, 9);
        let cut = h.net.partition(vec![(0, 1), (1, 0)]);
        let c = h.connecting(0, LOOPBACK_IP, 9);
        h.run_until(VTime(LOOPBACK_NS * 2));
        assert_eq!(h.net.connect_result(c), Ok(()));
        let a = h.net.accept(l).unwrap();
        h.with(|n, now, s, fx| n.send(c, b"self", now, s, fx)).unwrap();
        h.run_until(h.now + LOOPBACK_NS);
        assert_eq!(recv_all(&mut h, a), b"self");
        // Once the cut heals, another host still cannot reach a listener
        // bound to loopback.
        h.with(|n, now, s, fx| n.on_event(NetEvent::Heal { id: cut }, now, s, &|_| true, fx));
        let other = h.connecting(1, node_ip(0), 9);
        h.run_until(h.now + 10_000_000);
        assert_eq!(h.net.connect_result(other), Err(errno::CONNREFUSED));
    }

    #[test]
    fn a_connect_across_a_cut_times_out_unless_it_heals_in_time() {
        let mut h = Harness::new(2);
        let _listener = h.listener(0, ANY_IP, 80);
        h.net.partition(vec![(1, 0)]);
        let c = h.connecting(1, node_ip(0), 80);
        h.run_until(VTime(2_000_000_000));
        assert_eq!(h.net.connect_result(c), Err(errno::AGAIN), "SYNs are retried until the timeout");
        h.run_until(VTime(3_100_000_000));
        assert_eq!(h.net.connect_result(c), Err(errno::TIMEDOUT));
    }
}
