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
//!
//! The network is split by concept: [`addr`] (addresses and host names),
//! [`links`] (latency, partitions and heals), [`ports`] (opening, binding
//! and listening: the port table), [`socket`] (a socket's record: state,
//! addresses, pipe), [`tcp`] (its connection state machine: handshake,
//! shutdown, close, crash) and [`pipe`] (the segments a socket sends, their
//! delivery and reading), [`view`] (what a moment's report shows of it).
//! This file holds the `Net` every part works on and
//! the events and effects it trades with the world.
use crate::config::NetConfig;
use crate::errno::{self, Errno};
use crate::streams::Streams;
use crate::vtime::VTime;
use std::collections::{BTreeMap, BTreeSet};

mod addr;
mod links;
mod pipe;
mod ports;
mod socket;
mod tcp;
#[cfg(test)]
mod tests;
mod view;

pub use addr::{host_alias, node_ip, Addr, AF_INET, AF_INET6, ANY_IP, LOOPBACK_IP, SOCK_DGRAM, SOCK_STREAM};
pub use links::LOOPBACK_NS;
pub use pipe::{SEGMENT_BYTES, WINDOW_BYTES};
pub use ports::{BACKLOG_MAX, EPHEMERAL_FIRST};
pub use socket::SOCKETS_MAX;
pub use tcp::SYN_RETRY_FIRST_NS;
pub use view::SocketView;
use socket::Sock;

pub type SockId = u64;

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

    fn sock(&self, id: SockId) -> Result<&Sock, Errno> {
        self.socks.get(&id).ok_or(errno::BADF)
    }

    fn sock_mut(&mut self, id: SockId) -> Result<&mut Sock, Errno> {
        self.socks.get_mut(&id).ok_or(errno::BADF)
    }

    /// Applies a network event; returns what it causes.
    /// `host_up(node)`: false while the node is crashed (power off: nothing
    /// answers); a node whose process exited still answers, with a refusal.
    pub fn on_event(&mut self, ev: NetEvent, now: VTime, streams: &mut Streams, host_up: &dyn Fn(usize) -> bool, fx: &mut Effects) {
        match ev {
            NetEvent::Deliver { from } => self.deliver(from, now, fx),
            NetEvent::Syn { client, attempt } => self.on_syn(client, attempt, now, streams, host_up, fx),
            NetEvent::SynAck { client, server } => self.on_syn_ack(client, server, fx),
            NetEvent::ConnectTimeout { client } => self.connect_timed_out(client, fx),
            NetEvent::Heal { id } => self.heal(id, now, streams, fx),
        }
    }
}
