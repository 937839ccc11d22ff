//! Sockets: preview1's sock_accept/recv/send/shutdown and the WasmEdge
//! sockets extension (sock_open, bind, listen, connect, getaddrinfo, ...),
//! the de-facto ABI of github.com/dispatchrun/net and the Rust crate
//! `wasmedge_wasi_socket`, implemented on the simulated network.
//!
//! A socket is a descriptor (`Fd::Socket`). Non-blocking sockets answer
//! EAGAIN / EINPROGRESS and report readiness through poll_oneoff; blocking
//! ones (the default, which the Rust crate uses) suspend the node inside the
//! call until the network lets it go on.
use super::errno::{self, Errno};
use super::fdtable::{Fd, SocketFd};
use super::layout::FDFLAGS_NONBLOCK;
use super::{host, mem, Cx};
use crate::traps::crashed;
use crate::net::{Addr, Effects, SockId, AF_INET};
use crate::node::NodeCtx;
use crate::vtime::VTime;
use wasmtime::Caller;

fn ok(r: Result<(), Errno>) -> Errno {
    r.err().unwrap_or(errno::SUCCESS)
}

/// Runs a network operation with the world's clock and streams, then
/// carries out its effects.
fn with_net<R>(cx: &mut Cx<'_>, op: impl FnOnce(&mut crate::net::Net, VTime, &mut crate::streams::Streams, &mut Effects) -> R) -> R {
    let mut fx = Effects::default();
    let now = cx.world.now;
    let w = &mut *cx.world;
    let r = op(&mut w.net, now, &mut w.streams, &mut fx);
    w.net_effects(fx);
    r
}

/// What a send on `id` takes from the guest's iovecs: no more than the
/// window has room for, so a blocked large write is not copied again on
/// every wake-up. An empty iovec array is a zero-length write, which succeeds.
fn socket_payload(cx: &mut Cx<'_>, id: SockId, iovs: u32, iovs_len: u32) -> Result<Vec<u8>, Errno> {
    mem::check_iovecs(cx.mem, iovs, iovs_len)?;
    let total = mem::capacity(cx.mem, iovs, iovs_len)?;
    cx.charge("sock_send", super::work::bytes(total as u64));
    if total == 0 {
        return Ok(Vec::new());
    }
    match cx.world.net.send_room(id)? {
        0 => Err(errno::AGAIN),
        room => mem::gather_upto(cx.mem, iovs, iovs_len, room.min(total)),
    }
}

fn send_now(cx: &mut Cx<'_>, id: SockId, data: &[u8]) -> Result<usize, Errno> {
    with_net(cx, |net, now, streams, fx| net.send(id, data, now, streams, fx))
}

fn recv_now(cx: &mut Cx<'_>, id: SockId, max: usize, peek: bool) -> Result<Vec<u8>, Errno> {
    with_net(cx, |net, _, _, fx| net.recv(id, max, peek, fx))
}

pub fn close(cx: &mut Cx<'_>, id: SockId) {
    with_net(cx, |net, now, streams, fx| net.close(id, now, streams, fx))
}

/// The address a guest passes: `{ buf: u32, len: u32 }` pointing at the raw
/// IP bytes (4 for IPv4, 16 for IPv6; an IPv6 address must be `::`, `::1`
/// or IPv4-mapped: the simulated network is IPv4 inside).
fn read_addr(cx: &Cx<'_>, ptr: u32, port: u32) -> Result<Addr, Errno> {
    let buf = mem::read_u32(cx.mem, ptr)?;
    let len = mem::read_u32(cx.mem, mem::at(ptr, 4)?)?;
    let port = u16::try_from(port).map_err(|_| errno::INVAL)?;
    let ip = match len {
        4 => mem::bytes(cx.mem, buf, 4)?.try_into().unwrap(),
        16 => {
            let b: [u8; 16] = mem::bytes(cx.mem, buf, 16)?.try_into().unwrap();
            let v6 = std::net::Ipv6Addr::from(b);
            if v6.is_unspecified() {
                crate::net::ANY_IP
            } else if v6.is_loopback() {
                crate::net::LOOPBACK_IP
            } else {
                v6.to_ipv4_mapped().ok_or(errno::ADDRNOTAVAIL)?.octets()
            }
        }
        _ => return Err(errno::INVAL),
    };
    Ok(Addr { ip, port })
}

/// Writes an address back. With `type_ptr` (the `wasmedge_wasi_socket`
/// form) the raw IP goes at `buf` and the address type (4 = IPv4, as
/// WasmEdge writes it) to `type_ptr`; without it (dispatchrun/net's form)
/// `buf` gets the family as a little-endian u16 and then the IP.
fn write_addr(cx: &mut Cx<'_>, ptr: u32, type_ptr: Option<u32>, port_ptr: u32, a: Addr) -> Result<(), Errno> {
    let buf = mem::read_u32(cx.mem, ptr)?;
    let len = mem::read_u32(cx.mem, mem::at(ptr, 4)?)?;
    match type_ptr {
        Some(t) => {
            if len < 4 {
                return Err(errno::INVAL);
            }
            mem::bytes_mut(cx.mem, buf, 4)?.copy_from_slice(&a.ip);
            mem::write_u32(cx.mem, t, 4)?;
        }
        None => {
            if len < 6 {
                return Err(errno::INVAL);
            }
            mem::write_u16(cx.mem, buf, AF_INET)?;
            mem::bytes_mut(cx.mem, mem::at(buf, 2)?, 4)?.copy_from_slice(&a.ip);
        }
    }
    mem::write_u32(cx.mem, port_ptr, u32::from(a.port))
}

fn socket(cx: &Cx<'_>, fd: u32) -> Result<SocketFd, Errno> {
    cx.node.fds.socket(fd)
}

pub fn sock_open(cx: &mut Cx<'_>, af: i32, socktype: i32, out: u32) -> Errno {
    ok((|| {
        mem::range(cx.mem.len(), out, 4)?;
        let owner = cx.node.idx;
        let id = match cx.world.net.open(owner, af, socktype) {
            Ok(id) => id,
            Err(e) => {
                if e == errno::PROTONOSUPPORT {
                    cx.world.unsupported(owner, "wasi_snapshot_preview1::sock_open (datagram sockets)");
                }
                return Err(e);
            }
        };
        match cx.node.fds.insert(Fd::Socket(SocketFd::new(id, 0))) {
            Ok(fd) => mem::write_u32(cx.mem, out, fd),
            Err(e) => {
                close(cx, id);
                Err(e)
            }
        }
    })())
}

pub fn sock_bind(cx: &mut Cx<'_>, fd: u32, addr: u32, port: u32) -> Errno {
    ok((|| {
        let s = socket(cx, fd)?;
        let a = read_addr(cx, addr, port)?;
        cx.world.net.bind(s.id, a)
    })())
}

pub fn sock_listen(cx: &mut Cx<'_>, fd: u32, backlog: i32) -> Errno {
    ok((|| {
        let s = socket(cx, fd)?;
        cx.world.net.listen(s.id, backlog)
    })())
}

fn accept_now(cx: &mut Cx<'_>, fd: u32, flags: u16, out: u32) -> Errno {
    ok((|| {
        let s = socket(cx, fd)?;
        mem::range(cx.mem.len(), out, 4)?;
        // Checked first: a connection taken off the queue must get a descriptor.
        if cx.node.fds.full() {
            return Err(errno::MFILE);
        }
        let id = cx.world.net.accept(s.id)?;
        let new_fd = cx.node.fds.insert(Fd::Socket(SocketFd::new(id, flags & FDFLAGS_NONBLOCK)))?;
        mem::write_u32(cx.mem, out, new_fd)
    })())
}

fn connect_start(cx: &mut Cx<'_>, fd: u32, addr: u32, port: u32) -> Errno {
    ok((|| {
        let s = socket(cx, fd)?;
        let a = read_addr(cx, addr, port)?;
        with_net(cx, |net, now, streams, fx| net.connect(s.id, a, now, streams, fx))?;
        Err(errno::INPROGRESS)
    })())
}

fn connect_wait(cx: &mut Cx<'_>, fd: u32) -> Errno {
    ok((|| {
        let s = socket(cx, fd)?;
        cx.world.net.connect_result(s.id)
    })())
}

/// Reads flags: RECV_PEEK = 1 (RECV_WAITALL = 2 is treated as a plain read).
/// `oflags` 0: the caller (fd_read) has no place for output flags.
pub fn recv_into(cx: &mut Cx<'_>, fd: u32, iovs: u32, iovs_len: u32, flags: u16, nread: u32, oflags: u32) -> Errno {
    ok((|| {
        let s = socket(cx, fd)?;
        mem::check_iovecs(cx.mem, iovs, iovs_len)?;
        mem::range(cx.mem.len(), nread, 4)?;
        let max = mem::capacity(cx.mem, iovs, iovs_len)?;
        let data = recv_now(cx, s.id, max, flags & 1 != 0)?;
        cx.charge("sock_recv", super::work::bytes(data.len() as u64));
        let n = mem::scatter(cx.mem, iovs, iovs_len, &data)?;
        mem::write_u32(cx.mem, nread, n as u32)?;
        if oflags != 0 {
            mem::write_u16(cx.mem, oflags, 0)?;
        }
        Ok(())
    })())
}

pub fn send_from(cx: &mut Cx<'_>, fd: u32, iovs: u32, iovs_len: u32, nwritten: u32) -> Errno {
    ok((|| {
        let s = socket(cx, fd)?;
        mem::range(cx.mem.len(), nwritten, 4)?;
        let data = socket_payload(cx, s.id, iovs, iovs_len)?;
        let n = send_now(cx, s.id, &data)?;
        mem::write_u32(cx.mem, nwritten, n as u32)
    })())
}

pub fn sock_shutdown(cx: &mut Cx<'_>, fd: u32, how: i32) -> Errno {
    ok((|| {
        let s = socket(cx, fd)?;
        if !(1..=3).contains(&how) {
            return Err(errno::INVAL);
        }
        with_net(cx, |net, now, streams, fx| net.shutdown(s.id, how, now, streams, fx))
    })())
}

const SOL_SOCKET: u32 = 0;
const SO_REUSEADDR: u32 = 0;
const SO_TYPE: u32 = 1;
const SO_ERROR: u32 = 2;
const SO_RCVTIMEO: u32 = 11;
const SO_SNDTIMEO: u32 = 12;
/// wasi-libc's `struct timeval`: seconds and microseconds, 64 bits each.
const TIMEVAL_SIZE: u32 = 16;

/// SO_ERROR reports a finished non-blocking connect, SO_TYPE says stream,
/// SO_RCVTIMEO/SO_SNDTIMEO give the timeouts back; other options read 0.
pub fn sock_getsockopt(cx: &mut Cx<'_>, fd: u32, level: u32, name: u32, value: u32) -> Errno {
    ok((|| {
        let s = socket(cx, fd)?;
        let timeout = match (level, name) {
            (SOL_SOCKET, SO_RCVTIMEO) => Some(s.recv_timeout_ns),
            (SOL_SOCKET, SO_SNDTIMEO) => Some(s.send_timeout_ns),
            _ => None,
        };
        if let Some(t) = timeout {
            let ns = t.unwrap_or(0);
            mem::range(cx.mem.len(), value, TIMEVAL_SIZE)?;
            mem::write_u64(cx.mem, value, ns / 1_000_000_000)?;
            return mem::write_u64(cx.mem, mem::at(value, 8)?, ns % 1_000_000_000 / 1_000);
        }
        let v: u32 = match (level, name) {
            (SOL_SOCKET, SO_ERROR) => u32::from(cx.world.net.so_error(s.id)?),
            (SOL_SOCKET, SO_TYPE) => crate::net::SOCK_STREAM as u32,
            (SOL_SOCKET, SO_REUSEADDR) => 1,
            _ => 0,
        };
        mem::write_u32(cx.mem, value, v)
    })())
}

/// SO_RCVTIMEO and SO_SNDTIMEO bound blocking calls (a zero timeval
/// clears them). Other options are accepted and change nothing: the
/// simulated network has no buffers to size and no Nagle to switch off.
pub fn sock_setsockopt(cx: &mut Cx<'_>, fd: u32, level: u32, name: u32, value: u32, len: u32) -> Errno {
    ok((|| {
        socket(cx, fd)?;
        if level != SOL_SOCKET || (name != SO_RCVTIMEO && name != SO_SNDTIMEO) {
            return Ok(());
        }
        if len < TIMEVAL_SIZE {
            return Err(errno::INVAL);
        }
        let secs = mem::read_u64(cx.mem, value)?;
        let micros = mem::read_u64(cx.mem, mem::at(value, 8)?)?;
        if secs > 1 << 40 || micros >= 1_000_000 {
            return Err(errno::DOM);
        }
        let ns = secs.saturating_mul(1_000_000_000).saturating_add(micros.saturating_mul(1_000));
        let timeout = (ns > 0).then_some(ns);
        let Fd::Socket(s) = cx.node.fds.get_mut(fd)? else { unreachable!("checked above") };
        if name == SO_RCVTIMEO {
            s.recv_timeout_ns = timeout;
        } else {
            s.send_timeout_ns = timeout;
        }
        Ok(())
    })())
}

/// sock_getlocaladdr (`peer` false) and sock_getpeeraddr, in either form.
pub fn sock_addr(cx: &mut Cx<'_>, fd: u32, peer: bool, addr: u32, type_ptr: Option<u32>, port: u32) -> Errno {
    ok((|| {
        let s = socket(cx, fd)?;
        let a = if peer { cx.world.net.peer_addr(s.id)? } else { cx.world.net.local_addr(s.id)? };
        write_addr(cx, addr, type_ptr, port, a)
    })())
}

/// Size of WasmEdge's `__wasi_addrinfo_t`.
const ADDRINFO_SIZE: u32 = 32;

/// Resolves a node instance name (or `localhost`, or an IPv4 literal) the
/// WasmEdge way: the guest hands a chain of result structs it allocated,
/// each pointing at a sockaddr whose data is `port (BE u16) ++ IPv4`.
#[allow(clippy::too_many_arguments)]
pub fn sock_getaddrinfo(cx: &mut Cx<'_>, node: u32, node_len: u32, service: u32, service_len: u32, hints: u32, res: u32, max: u32, res_len: u32) -> Errno {
    ok((|| {
        let name = c_string(cx, node, node_len)?;
        let service = c_string(cx, service, service_len)?;
        // A service name the host does not know leaves the port 0: callers
        // such as wasmedge_wasi_socket pass "http" and set the port after.
        let port: u16 = match service.as_str() {
            "http" => 80,
            "https" => 443,
            s => s.parse().unwrap_or(0),
        };
        const AI_PASSIVE: u16 = 1;
        let passive = hints != 0 && mem::read_u16(cx.mem, hints)? & AI_PASSIVE != 0;
        let ip = match cx.world.net.resolve_name(&name) {
            Some(ip) => ip,
            // No host: any address to listen on, or loopback to connect to.
            None if name.is_empty() && passive => crate::net::ANY_IP,
            None if name.is_empty() => crate::net::LOOPBACK_IP,
            None => return Err(errno::NOENT),
        };
        if max == 0 {
            return mem::write_u32(cx.mem, res_len, 0);
        }
        let first = mem::read_u32(cx.mem, res)?;
        mem::range(cx.mem.len(), first, ADDRINFO_SIZE)?;
        mem::write_u8(cx.mem, mem::at(first, 2)?, AF_INET as u8)?; // ai_family
        mem::write_u8(cx.mem, mem::at(first, 3)?, crate::net::SOCK_STREAM as u8)?; // ai_socktype
        let sockaddr = mem::read_u32(cx.mem, mem::at(first, 12)?)?;
        mem::write_u32(cx.mem, mem::at(first, 8)?, 16)?; // ai_addrlen
        mem::write_u32(cx.mem, sockaddr, u32::from(AF_INET))?; // sa_family
        let data = mem::read_u32(cx.mem, mem::at(sockaddr, 8)?)?;
        let data_len = mem::read_u32(cx.mem, mem::at(sockaddr, 4)?)?;
        if data_len < 6 {
            return Err(errno::INVAL);
        }
        mem::bytes_mut(cx.mem, data, 2)?.copy_from_slice(&port.to_be_bytes());
        mem::bytes_mut(cx.mem, mem::at(data, 2)?, 4)?.copy_from_slice(&ip);
        mem::write_u32(cx.mem, res_len, 1)
    })())
}

/// A string the guest passes, with or without a trailing NUL.
fn c_string(cx: &Cx<'_>, ptr: u32, len: u32) -> Result<String, Errno> {
    if ptr == 0 || len == 0 {
        return Ok(String::new());
    }
    let s = mem::string(cx.mem, ptr, len)?;
    Ok(s.split('\0').next().unwrap_or("").to_string())
}

/// Which of a socket's timeouts bounds a blocking wait.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Wait {
    /// recv, read, accept: SO_RCVTIMEO.
    Receive,
    /// send, write, connect: SO_SNDTIMEO.
    Send,
}

/// Whether a call that said EAGAIN on `fd` should wait, and until when
/// (`Some(None)`: no timeout). `started` is when the call first waited.
fn waits(cx: &Cx<'_>, fd: u32, e: Errno, wait: Wait, started: &mut Option<VTime>) -> Option<Option<VTime>> {
    let s = cx.node.fds.socket(fd).ok().filter(|s| e == errno::AGAIN && s.blocking())?;
    let now = cx.world.now;
    let since = *started.get_or_insert(now);
    let timeout = if wait == Wait::Receive { s.recv_timeout_ns } else { s.send_timeout_ns };
    let deadline = timeout.map(|t| since.saturating_add(t));
    if deadline.is_some_and(|d| d <= now) {
        return None; // timed out: the caller sees EAGAIN, as on Linux
    }
    Some(deadline)
}

/// Bound on wake-ups one blocking socket call waits through.
pub const BLOCKING_WAITS_MAX: u32 = 10_000_000;

/// Runs `op` until it stops saying EAGAIN, suspending the node between
/// tries when `fd` is a blocking socket (up to its timeout, if set).
pub async fn blocking(caller: &mut Caller<'_, NodeCtx>, fd: u32, wait: Wait, mut op: impl FnMut(&mut Cx<'_>) -> Errno) -> wasmtime::Result<i32> {
    let mut started = None;
    for _ in 0..BLOCKING_WAITS_MAX {
        let (e, until) = host(caller, |cx| {
            let e = op(cx);
            (e, waits(cx, fd, e, wait, &mut started))
        });
        crashed(caller)?;
        let Some(deadline) = until else {
            return Ok(i32::from(e));
        };
        super::poll::suspend(caller, deadline, true).await?;
    }
    // As a poll that wakes for nothing: a limit failure of the run, not an
    // EAGAIN that a blocking socket's caller never expects.
    host(caller, |cx| {
        cx.world
            .fault
            .get_or_insert_with(|| {
                format!("a blocking socket call woke {BLOCKING_WAITS_MAX} times without completing")
            })
            .clone()
    });
    Ok(i32::from(errno::AGAIN))
}

pub async fn sock_accept(caller: &mut Caller<'_, NodeCtx>, fd: u32, flags: u16, out: u32) -> wasmtime::Result<i32> {
    blocking(caller, fd, Wait::Receive, |cx| accept_now(cx, fd, flags, out)).await
}

pub async fn sock_recv(caller: &mut Caller<'_, NodeCtx>, fd: u32, iovs: u32, iovs_len: u32, flags: u16, nread: u32, oflags: u32) -> wasmtime::Result<i32> {
    blocking(caller, fd, Wait::Receive, |cx| recv_into(cx, fd, iovs, iovs_len, flags, nread, oflags)).await
}

pub async fn sock_send(caller: &mut Caller<'_, NodeCtx>, fd: u32, iovs: u32, iovs_len: u32, nwritten: u32) -> wasmtime::Result<i32> {
    blocking(caller, fd, Wait::Send, |cx| send_from(cx, fd, iovs, iovs_len, nwritten)).await
}

/// A blocking connect waits for the handshake; a non-blocking one says
/// EINPROGRESS and finishes in the background (poll for writability, then
/// read SO_ERROR).
pub async fn sock_connect(caller: &mut Caller<'_, NodeCtx>, fd: u32, addr: u32, port: u32) -> wasmtime::Result<i32> {
    let (e, block) = host(caller, |cx| {
        let e = connect_start(cx, fd, addr, port);
        (e, e == errno::INPROGRESS && cx.node.fds.socket(fd).is_ok_and(|s| s.blocking()))
    });
    crashed(caller)?;
    if !block {
        return Ok(i32::from(e));
    }
    blocking(caller, fd, Wait::Send, |cx| connect_wait(cx, fd)).await
}
