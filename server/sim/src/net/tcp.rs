//! The TCP state machine: how a socket's state (`socket::State`) moves
//! through the handshake (SYN, its retries and answer, the connect
//! timeout), shutdown, close and reset, and a node going down; and what a
//! socket reports (readiness, SO_ERROR, addresses).
use super::addr::{node_ip, Addr, ANY_IP, LOOPBACK_IP};
use super::socket::{Segment, Sock, State, SOCKETS_MAX};
use super::{Effects, Net, NetEvent, Ready, SockId};
use crate::errno::{self, Errno};
use crate::streams::Streams;
use crate::vtime::VTime;
use std::collections::VecDeque;

/// SYN retransmission: the first retry after this, doubling each time.
pub const SYN_RETRY_FIRST_NS: u64 = 200_000_000;

impl Net {
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
    pub(super) fn abort(&mut self, id: SockId, now: VTime, streams: &mut Streams, fx: &mut Effects) {
        self.end(id, Segment::Rst, now, streams, fx);
    }

    /// Ends a socket: a connection sends `last` (FIN or RST) behind the data
    /// still in flight, and the socket lingers until its pipe drains.
    pub(super) fn end(&mut self, id: SockId, last: Segment, now: VTime, streams: &mut Streams, fx: &mut Effects) {
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
    pub(super) fn collect(&mut self, id: SockId) {
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

    pub(super) fn on_syn(&mut self, client: SockId, attempt: u32, now: VTime, streams: &mut Streams, host_up: &dyn Fn(usize) -> bool, fx: &mut Effects) {
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

    pub(super) fn on_syn_ack(&mut self, client: SockId, server: Option<SockId>, fx: &mut Effects) {
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
    pub(super) fn orphaned(&mut self, id: SockId, fx: &mut Effects) {
        let Some(s) = self.socks.get_mut(&id) else { return };
        if matches!(s.state, State::Closed) {
            s.drop_pipe();
            self.collect(id);
        } else {
            s.fail(errno::CONNRESET);
            fx.wake.insert(s.owner);
        }
    }

    /// The connect of `client` gives up unless it finished: ETIMEDOUT.
    pub(super) fn connect_timed_out(&mut self, client: SockId, fx: &mut Effects) {
        let Some(s) = self.socks.get(&client).filter(|s| matches!(s.state, State::Connecting { .. })) else { return };
        let note = (s.owner, format!("connect to {} timed out", self.show(s.remote)));
        let s = self.socks.get_mut(&client).expect("present");
        s.state = State::Error(errno::TIMEDOUT);
        fx.wake.insert(s.owner);
        fx.notes.push(note);
    }
}
