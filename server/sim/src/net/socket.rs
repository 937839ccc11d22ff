//! A socket's record, which every part of the network works on: its TCP
//! state, its addresses, and the pipe of segments it sent that have not
//! arrived yet; and the bound on how many a run holds.
use super::addr::Addr;
use super::SockId;
use crate::errno::Errno;
use crate::vtime::VTime;
use std::collections::VecDeque;

/// Bound on sockets alive per run (every node together).
pub const SOCKETS_MAX: usize = 65_536;

#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Segment {
    Data(Vec<u8>),
    Fin,
    Rst,
}

#[derive(Clone, Debug)]
pub(super) struct InFlight {
    pub(super) at: VTime,
    pub(super) seg: Segment,
}

#[derive(Debug)]
pub(super) enum State {
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
pub(super) struct Sock {
    pub(super) owner: usize,
    pub(super) state: State,
    pub(super) local: Option<Addr>,
    pub(super) remote: Option<Addr>,
    /// Segments sent and not yet delivered, earliest first.
    pub(super) pipe: VecDeque<InFlight>,
    pub(super) pipe_bytes: usize,
    /// The pipe's head reached a cut link; redelivered on heal.
    pub(super) stalled: bool,
    /// After close: the peer the last segments in the pipe still go to.
    pub(super) drain_peer: Option<SockId>,
    /// No segment of this socket arrives before this: an accepted socket's
    /// data must not overtake the handshake answer that tells its client.
    pub(super) floor: VTime,
}

impl Sock {
    pub(super) fn new(owner: usize, state: State, local: Option<Addr>, remote: Option<Addr>) -> Sock {
        Sock { owner, state, local, remote, pipe: VecDeque::new(), pipe_bytes: 0, stalled: false, drain_peer: None, floor: VTime::ZERO }
    }

    /// The connection is broken: report `e` from now on and drop what was
    /// still to send (a reset connection sends nothing more).
    pub(super) fn fail(&mut self, e: Errno) {
        self.state = State::Error(e);
        self.drop_pipe();
    }

    pub(super) fn drop_pipe(&mut self) {
        self.pipe.clear();
        self.pipe_bytes = 0;
        self.stalled = false;
    }

    /// The peer a socket's pipe delivers to: while connected, or while a
    /// closed socket's last segments drain.
    pub(super) fn peer_link(&self) -> Option<SockId> {
        match self.state {
            State::Connected { peer, .. } => Some(peer),
            _ => self.drain_peer,
        }
    }
}
