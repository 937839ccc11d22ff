//! The port table: opening sockets, binding and listening, and which
//! ports of a node are taken (ephemeral ports for connects and `bind(0)`).
use super::addr::{node_ip, Addr, AF_INET, AF_INET6, ANY_IP, LOOPBACK_IP, SOCK_DGRAM, SOCK_STREAM};
use super::socket::{Sock, State, SOCKETS_MAX};
use super::{Net, SockId};
use crate::errno::{self, Errno};
use std::collections::VecDeque;

/// Bound on a listener's backlog, whatever the guest asks for.
pub const BACKLOG_MAX: usize = 4096;
/// First port handed out to connecting sockets and `bind(port 0)`.
pub const EPHEMERAL_FIRST: u16 = 49_152;

impl Net {
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
    pub(super) fn port_taken(&self, owner: usize, port: u16) -> bool {
        self.listeners.contains_key(&(owner, port))
            || self.socks.values().any(|s| s.owner == owner && matches!(s.state, State::Fresh) && s.local.is_some_and(|a| a.port == port))
    }

    /// A port for a connecting socket or `bind(port 0)`: not a listener's,
    /// not one an open outgoing connection of the node uses.
    pub(super) fn ephemeral_port(&mut self, owner: usize) -> Result<u16, Errno> {
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
}
