//! Segment pipes: what a connected socket sends, split into segments
//! stamped with their arrival time, delivered in order to the peer (or
//! stalled at a cut link), and read from the peer's receive buffer.
use super::socket::{InFlight, Segment, State};
use super::{Effects, Net, NetEvent, SockId};
use crate::errno::{self, Errno};
use crate::streams::Streams;
use crate::vtime::VTime;
use std::collections::VecDeque;

/// Bytes one segment carries: a large write is split into several segments,
/// each with its own latency draw.
pub const SEGMENT_BYTES: usize = 1460;
/// Bytes a connection holds unread or in flight per direction before the
/// sender sees EAGAIN (or blocks): the receive window (Linux autotunes its
/// buffers to a few MiB; a program that writes more than twice this without
/// reading deadlocks here as it would there).
pub const WINDOW_BYTES: usize = 1 << 20;

impl Net {
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

    pub(super) fn unread(&self, id: SockId) -> usize {
        match self.socks.get(&id).map(|s| &s.state) {
            Some(State::Connected { rx, .. }) => rx.len(),
            _ => 0,
        }
    }

    pub(super) fn push_segment(&mut self, from: SockId, seg: Segment, now: VTime, streams: &mut Streams, fx: &mut Effects) {
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

    pub(super) fn deliver(&mut self, from: SockId, now: VTime, fx: &mut Effects) {
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
    pub(super) fn arrive(&mut self, to: SockId, from: SockId, seg: Segment, fx: &mut Effects) {
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

    pub(super) fn reset_sender(&mut self, from: SockId, fx: &mut Effects) {
        if let Some(s) = self.socks.get_mut(&from) {
            if matches!(s.state, State::Connected { .. }) {
                s.fail(errno::CONNRESET);
                fx.wake.insert(s.owner);
            }
        }
    }
}

/// The first `n` bytes of `rx`, removed unless `peek`. Copied slice by
/// slice: collecting a drain goes byte by byte, and was a fifth of an echo
/// run's time (scripts/bench).
pub(super) fn front_bytes(rx: &mut VecDeque<u8>, n: usize, peek: bool) -> Vec<u8> {
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
