// dial_wasip1.go owns dialling under seedfall: open a host socket, start a
// non-blocking connect, wait for it in the runtime's poller, then hand the
// socket to net.FileConn.

//go:build wasip1

package simnet

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"os"
	"runtime"
	"syscall"
	"unsafe"
)

func platformDial(ctx context.Context, network, address string) (net.Conn, error) {
	host, port, err := splitHostPort(ctx, network, address)
	if err != nil {
		return nil, &net.OpError{Op: "dial", Net: network, Err: err}
	}
	ips, err := resolve(ctx, network, host, port)
	if err != nil {
		return nil, &net.OpError{Op: "dial", Net: network, Err: err}
	}
	// Like the standard library, try the addresses in order and report the
	// first failure if none answers.
	var first error
	for _, ip := range ips {
		c, err := dialAddr(ctx, network, netip.AddrPortFrom(ip, port))
		if err == nil {
			return c, nil
		}
		if first == nil {
			first = err
		}
		if ctx.Err() != nil {
			break
		}
	}
	return nil, first
}

// dialAddr connects to one address.
func dialAddr(ctx context.Context, network string, ap netip.AddrPort) (net.Conn, error) {
	raddr := net.TCPAddrFromAddrPort(ap)
	fail := func(err error) (net.Conn, error) {
		return nil, &net.OpError{Op: "dial", Net: network, Addr: raddr, Err: err}
	}
	if err := ctx.Err(); err != nil {
		return fail(contextError(err))
	}
	fd, err := openSocket(ap.Addr())
	if err != nil {
		return fail(err)
	}
	addr, _ := newHostAddr(ap.Addr())
	e := syscall.Errno(sockConnect(int32(fd), unsafe.Pointer(addr), uint32(ap.Port())))
	runtime.KeepAlive(addr)
	if e != 0 && e != syscall.EINPROGRESS {
		syscall.Close(fd)
		return fail(os.NewSyscallError("connect", e))
	}

	// The os.File registers the socket with the runtime's poller (it is
	// non-blocking), which is what lets a goroutine wait for the connect.
	f := os.NewFile(uintptr(fd), "tcp:"+raddr.String())
	if e == syscall.EINPROGRESS {
		if err := awaitConnect(ctx, f); err != nil {
			f.Close()
			return fail(err)
		}
	}
	laddr := tcpAddr(sockName(fd, false))
	if peer := tcpAddr(sockName(fd, true)); peer != nil {
		raddr = peer
	}
	c, err := net.FileConn(f)
	f.Close() // c holds its own reference to the socket
	if err != nil {
		return fail(fileError(err))
	}
	tc, ok := c.(*net.TCPConn)
	if !ok {
		c.Close()
		return fail(errors.New("the host socket is not a stream socket"))
	}
	return newConn(tc, laddr, raddr), nil
}

// awaitConnect waits until the connect in flight on f's socket finishes and
// returns its outcome. The host signals completion, success or failure, as
// writability; SO_ERROR then holds the result. ctx's deadline becomes the
// file's write deadline, and cancelling ctx moves that deadline into the
// past, which wakes the waiting goroutine.
func awaitConnect(ctx context.Context, f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	if deadline, ok := ctx.Deadline(); ok {
		if err := f.SetWriteDeadline(deadline); err != nil {
			return err
		}
	}
	stop := context.AfterFunc(ctx, func() { f.SetWriteDeadline(aLongTimeAgo) })
	defer stop()

	var result error
	waited := false
	err = rc.Write(func(fd uintptr) bool {
		// The first call comes before any wait, right after connect said
		// EINPROGRESS: there is nothing to look at yet.
		if !waited {
			waited = true
			return false
		}
		done, err := connectFinished(int(fd))
		result = err
		return done
	})
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return contextError(ctxErr)
		}
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return errTimeout
		}
		return err
	}
	return result
}

// connectFinished reports whether the connect on fd has finished, with its
// error if it failed. SO_ERROR is 0 both on success and while the connect is
// still in flight, so a wake-up without completion is told apart by asking
// for the peer, as the standard library does on Unix.
func connectFinished(fd int) (bool, error) {
	e, err := pendingError(fd)
	if err != nil {
		return true, err
	}
	switch e {
	case 0, syscall.EISCONN:
	case syscall.EINPROGRESS, syscall.EALREADY, syscall.EINTR:
		return false, nil
	default:
		return true, os.NewSyscallError("connect", e)
	}
	if _, err := sockName(fd, true); err == syscall.ENOTCONN {
		return false, nil
	}
	return true, nil
}

// fileError unwraps the *net.OpError of net.FileConn and net.FileListener,
// which say "file" where the caller's error says "dial" or "listen".
func fileError(err error) error {
	var oe *net.OpError
	if errors.As(err, &oe) {
		return oe.Err
	}
	return err
}
