//! Tests of the simulated network: streams, windows, cuts, crashes,
//! restarts and loopback, over a tiny event loop of its own.
use super::*;
use super::pipe::front_bytes;
use crate::config::{LatencyDistribution, NetConfig, Span};
use std::collections::VecDeque;

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
