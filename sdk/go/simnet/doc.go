// doc.go owns the package documentation.

// Package simnet gives a seedfall guest real TCP networking between the
// simulated nodes. Go's standard library on GOOS=wasip1 has only an
// in-memory network inside the one process, so net.Dial and net.Listen
// cannot reach another node; simnet opens its sockets through the host's
// WasmEdge-style socket calls (sock_open, sock_connect, ...) in
// wasi_snapshot_preview1 instead, and then hands them to the standard
// library (net.FileConn, net.FileListener) so that reads, writes, accepts
// and deadlines park goroutines in the runtime's poller like any other I/O.
//
// Use [Listen] and [Dial] (or a [Dialer] with a timeout) where a program
// would call net.Listen and net.Dial, and call [Install] once at start so
// that net/http clients (http.Get, http.DefaultClient) dial through simnet;
// [Transport] gives a separate *http.Transport for clients of your own. An
// http.Server needs nothing more than a listener from [Listen]:
//
//	ln, err := simnet.Listen("tcp", ":8080")
//	...
//	go http.Serve(ln, mux)
//
//	simnet.Install()
//	resp, err := http.Get("http://server:8080/status")
//
// Supported:
//
//   - the networks "tcp", "tcp4" and "tcp6"; any other network is an error
//     (built natively too, so a program that works natively works under
//     seedfall);
//   - addresses as IP literals, node instance names ("server", "client-1",
//     "client#1"), "localhost" and an empty host ("" is the loopback
//     address when dialling, every address when listening). Names are looked
//     up in the node's /etc/hosts through net.DefaultResolver first and,
//     when that fails, through the host's sock_getaddrinfo; a name with '#'
//     can only be found the second way, since '#' starts a comment in
//     /etc/hosts;
//   - a wildcard listen address (":8080", "0.0.0.0:8080", "[::]:8080")
//     listens on 0.0.0.0 unless the network is "tcp6";
//   - read and write deadlines, CloseRead and CloseWrite (sock_shutdown),
//     and the real local and remote addresses of every connection;
//   - dial timeouts and cancellation through the context or Dialer.Timeout.
//
// Not supported: UDP and Unix sockets, a chosen local address for Dial,
// Control functions, keep-alive, no-delay, linger and buffer-size options
// (the *net.TCPConn setters return "protocol not available"), and
// TCPConn.File. When a name has several addresses they are tried one after
// another within the one deadline, without Happy Eyeballs.
//
// The connections returned by [Dial] and by a listener's Accept are not
// *net.TCPConn: they embed one (so every method of it is there, including
// CloseWrite, SetDeadline and SyscallConn) and report the addresses the
// host gives, which the standard library cannot ask for on wasip1. Assert
// to an interface such as interface{ CloseWrite() error } rather than to
// *net.TCPConn.
//
// Built for any other target (for example in `go test`), every function
// falls back to the standard net package, with the same network check.
package simnet
