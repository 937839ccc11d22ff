//! Addresses and names: every node instance's IPv4 address, the socket
//! address, the host names a node resolves (`/etc/hosts`) and how the trace
//! shows an address.
use super::Net;

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

/// A node instance name as a DNS-safe host name (`client#1` → `client-1`).
pub fn host_alias(name: &str) -> String {
    name.replace('#', "-")
}

impl Net {
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
    pub(super) fn node_at(&self, ip: [u8; 4]) -> Option<usize> {
        (0..self.names.len()).find(|&i| node_ip(i) == ip)
    }

    /// The host `ip` means to `from`: itself for loopback and any-address.
    pub(super) fn host_of(&self, from: usize, ip: [u8; 4]) -> Option<usize> {
        if ip == LOOPBACK_IP || ip == ANY_IP {
            return Some(from);
        }
        self.node_at(ip)
    }

    /// An address as the trace shows it: the host's instance name (or
    /// `localhost`) and the port, so a timeline reads `server:7000`.
    pub(super) fn show(&self, a: Option<Addr>) -> String {
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
