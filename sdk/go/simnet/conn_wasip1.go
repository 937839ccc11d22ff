// conn_wasip1.go owns the connection and listener types simnet returns under
// seedfall: the standard library's, with the addresses the host reports.
// On wasip1 net.FileConn and net.FileListener cannot ask for addresses (plain
// WASI preview 1 has no getsockname), so theirs are empty.

//go:build wasip1

package simnet

import (
	"net"
	"net/netip"
)

// conn is a *net.TCPConn that reports its real addresses. Every other
// method, CloseWrite and SetDeadline among them, is the TCPConn's.
type conn struct {
	*net.TCPConn
	laddr, raddr net.Addr
}

func (c *conn) LocalAddr() net.Addr  { return c.laddr }
func (c *conn) RemoteAddr() net.Addr { return c.raddr }

// Read and Write are the TCPConn's, with the real addresses in their errors
// ("read tcp 10.0.0.2:40001->10.0.0.1:8080: ..." rather than ":0->:0").
func (c *conn) Read(b []byte) (int, error) {
	n, err := c.TCPConn.Read(b)
	return n, c.withAddrs(err)
}

func (c *conn) Write(b []byte) (int, error) {
	n, err := c.TCPConn.Write(b)
	return n, c.withAddrs(err)
}

func (c *conn) withAddrs(err error) error {
	if oe, ok := err.(*net.OpError); ok {
		e := *oe
		e.Source, e.Addr = c.laddr, c.raddr
		return &e
	}
	return err
}

// newConn wraps tc; a nil address (the host could not say) is reported as
// an empty *net.TCPAddr, never as a nil interface.
func newConn(tc *net.TCPConn, laddr, raddr *net.TCPAddr) *conn {
	if laddr == nil {
		laddr = &net.TCPAddr{}
	}
	if raddr == nil {
		raddr = &net.TCPAddr{}
	}
	return &conn{TCPConn: tc, laddr: laddr, raddr: raddr}
}

// listener is a *net.TCPListener whose Addr is the bound address and whose
// Accept returns conns.
type listener struct {
	*net.TCPListener
	addr *net.TCPAddr
}

func (l *listener) Addr() net.Addr { return l.addr }

func (l *listener) Accept() (net.Conn, error) {
	tc, err := l.TCPListener.AcceptTCP()
	if err != nil {
		return nil, err
	}
	var laddr, raddr *net.TCPAddr
	if rc, err := tc.SyscallConn(); err == nil {
		rc.Control(func(fd uintptr) {
			laddr = tcpAddr(sockName(int(fd), false))
			raddr = tcpAddr(sockName(int(fd), true))
		})
	}
	if laddr == nil {
		laddr = l.addr
	}
	return newConn(tc, laddr, raddr), nil
}

// tcpAddr converts sockName's answer, nil when there is none.
func tcpAddr(ap netip.AddrPort, err error) *net.TCPAddr {
	if err != nil || !ap.IsValid() {
		return nil
	}
	return net.TCPAddrFromAddrPort(ap)
}
