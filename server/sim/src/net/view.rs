//! The network as a moment's report shows it: each socket a node instance
//! holds, with its state, its two ends, and the bytes waiting on either
//! side; and the links partitions cut. Read-only: nothing here changes the
//! run.
use super::socket::State;
use super::{Net, SockId};
use serde::Serialize;

/// One socket, as a person debugging a run wants to see it.
#[derive(Clone, Debug, Serialize)]
pub struct SocketView {
    pub id: SockId,
    /// `listening`, `connecting`, `connected`, `error`, `closed`, `fresh`.
    pub state: &'static str,
    /// `server:7000`, `localhost:7000` or `?` when not bound.
    pub local: String,
    /// The other end when connecting or connected, else empty.
    pub peer: String,
    /// Bytes arrived and not read yet (connected), or connections waiting
    /// to be accepted (listening).
    pub unread: u64,
    /// Bytes sent and not arrived yet.
    pub in_flight: u64,
    /// The first segment in flight waits at a cut link.
    pub stalled: bool,
    /// Set when connected: this side shut down writing, the peer's FIN came.
    pub sent_fin: bool,
    pub got_fin: bool,
    /// The pending error's name (`error` state).
    pub error: String,
}

impl Net {
    /// Socket `id` as the report shows it; `None` once it is gone.
    pub fn socket_view(&self, id: SockId) -> Option<SocketView> {
        let s = self.socks.get(&id)?;
        let mut v = SocketView {
            id,
            state: "fresh",
            local: self.show(s.local),
            peer: String::new(),
            unread: 0,
            in_flight: s.pipe_bytes as u64,
            stalled: s.stalled,
            sent_fin: false,
            got_fin: false,
            error: String::new(),
        };
        match &s.state {
            State::Fresh => {}
            State::Listening { queue, .. } => {
                v.state = "listening";
                v.unread = queue.len() as u64;
            }
            State::Connecting { .. } => {
                v.state = "connecting";
                v.peer = self.show(s.remote);
            }
            State::Connected { rx, rx_eof, tx_closed, .. } => {
                v.state = "connected";
                v.peer = self.show(s.remote);
                v.unread = rx.len() as u64;
                v.sent_fin = *tx_closed;
                v.got_fin = *rx_eof;
            }
            State::Error(e) => {
                v.state = "error";
                v.error = error_name(*e);
            }
            State::Closed => v.state = "closed",
        }
        Some(v)
    }

    /// The directed links partitions cut now, as (from, to) instance names.
    pub fn cut_links(&self) -> Vec<(String, String)> {
        self.cuts.keys().map(|&(a, b)| (self.names[a].clone(), self.names[b].clone())).collect()
    }
}

/// The name of a socket's pending error (the ones the network sets).
fn error_name(e: crate::errno::Errno) -> String {
    use crate::errno::*;
    match e {
        CONNREFUSED => "ECONNREFUSED".into(),
        CONNRESET => "ECONNRESET".into(),
        TIMEDOUT => "ETIMEDOUT".into(),
        PIPE => "EPIPE".into(),
        NOTCONN => "ENOTCONN".into(),
        other => format!("errno {other}"),
    }
}
