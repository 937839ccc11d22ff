// net_seedfall_wasip1.go is added to the standard library's package net by
// make-overlay.sh (through `go build -overlay`), so that plain net.Listen,
// net.Dial and net/http reach the other simulated nodes through the host's
// sockets (the WasmEdge sockets extension of wasi_snapshot_preview1) without
// any change to the program. See README.md beside it.
//
// make-overlay.sh renames two functions in copies of GOROOT files, and this
// file takes their names:
//
//   - socket, in net_fake.go, becomes fakeSocket: the socket here opens a host
//     socket for TCP and leaves every other network (UDP, Unix) to the fake
//     in-memory network as before;
//   - (*netFD).accept, in fd_fake.go, becomes fakeAccept: the accept here
//     adds the host's addresses to an accepted connection.
//
// The resulting netFD is the one net.FileConn builds on wasip1 (newFD, then
// init to register the socket with the runtime's poller), so reads, writes,
// accept, deadlines and shutdown go through code the standard library
// already has; only opening, binding, listening and connecting are new.
//
// In this repository the file is kept out of every build by the constraint
// below; make-overlay.sh turns it into "wasip1" in the copy it overlays.

//go:build ignore

package net

import (
	"context"
	"errors"
	"os"
	"runtime"
	"syscall"
	"time"
	"unsafe"
)

// The host's numbering (WasmEdge's), not syscall's for wasip1.
const (
	seedfallAFInet      = 1
	seedfallAFInet6     = 2
	seedfallSockStream  = 2
	seedfallSolSocket   = 0
	seedfallSoReuseaddr = 0
	seedfallSoError     = 2
)

// The imports are not //go:noescape on purpose: what is passed to them then
// lives on the heap, which never moves, so the u32 address inside a
// seedfallAddr stays valid (the stack copier cannot see it).

//go:wasmimport wasi_snapshot_preview1 sock_open
func seedfallSockOpen(af, socktype int32, fd unsafe.Pointer) uint32

//go:wasmimport wasi_snapshot_preview1 sock_bind
func seedfallSockBind(fd int32, addr unsafe.Pointer, port uint32) uint32

//go:wasmimport wasi_snapshot_preview1 sock_listen
func seedfallSockListen(fd, backlog int32) uint32

//go:wasmimport wasi_snapshot_preview1 sock_connect
func seedfallSockConnect(fd int32, addr unsafe.Pointer, port uint32) uint32

//go:wasmimport wasi_snapshot_preview1 sock_getlocaladdr
func seedfallSockGetLocalAddr(fd int32, addr, port unsafe.Pointer) uint32

//go:wasmimport wasi_snapshot_preview1 sock_getpeeraddr
func seedfallSockGetPeerAddr(fd int32, addr, port unsafe.Pointer) uint32

//go:wasmimport wasi_snapshot_preview1 sock_getsockopt
func seedfallSockGetsockopt(fd int32, level, name uint32, value unsafe.Pointer, size uint32) uint32

//go:wasmimport wasi_snapshot_preview1 sock_setsockopt
func seedfallSockSetsockopt(fd int32, level, name uint32, value unsafe.Pointer, size uint32) uint32

// seedfallAddr is the {buf, len} pair through which the host reads or
// writes an address, followed by the area buf points to. The host writes a
// little-endian u16 family and then the raw IP; it reads the raw IP only.
type seedfallAddr struct {
	buf  uint32
	size uint32
	data [128]byte
}

func newSeedfallAddr() *seedfallAddr {
	a := new(seedfallAddr)
	a.buf = uint32(uintptr(unsafe.Pointer(&a.data[0])))
	a.size = uint32(len(a.data))
	return a
}

// seedfallIP encodes ip for a socket of family (syscall.AF_INET or
// AF_INET6) and returns the host's family number.
func seedfallIP(family int, ip IP) (*seedfallAddr, int32, error) {
	a := newSeedfallAddr()
	if family == syscall.AF_INET {
		if len(ip) == 0 {
			ip = IPv4zero
		}
		ip4 := ip.To4()
		if ip4 == nil {
			return nil, 0, &AddrError{Err: "non-IPv4 address", Addr: ip.String()}
		}
		a.size = uint32(copy(a.data[:], ip4))
		return a, seedfallAFInet, nil
	}
	if len(ip) == 0 {
		ip = IPv6unspecified
	}
	ip16 := ip.To16()
	if ip16 == nil {
		return nil, 0, &AddrError{Err: "non-IPv6 address", Addr: ip.String()}
	}
	a.size = uint32(copy(a.data[:], ip16))
	return a, seedfallAFInet6, nil
}

// seedfallOpen opens a non-blocking host stream socket: non-blocking so the
// runtime parks goroutines in poll_oneoff rather than block in a host call.
func seedfallOpen(af int32) (int, error) {
	var fd int32
	if e := seedfallSockOpen(af, seedfallSockStream, unsafe.Pointer(&fd)); e != 0 {
		return -1, os.NewSyscallError("socket", syscall.Errno(e))
	}
	if err := syscall.SetNonblock(int(fd), true); err != nil {
		syscall.Close(int(fd))
		return -1, os.NewSyscallError("setnonblock", err)
	}
	return int(fd), nil
}

// seedfallSockName asks the host for sysfd's local address, or its peer's.
// The error is a bare errno: ENOTCONN while a connect is in flight.
func seedfallSockName(sysfd int, peer bool) (*TCPAddr, error) {
	a := newSeedfallAddr()
	var port uint32
	var e uint32
	if peer {
		e = seedfallSockGetPeerAddr(int32(sysfd), unsafe.Pointer(a), unsafe.Pointer(&port))
	} else {
		e = seedfallSockGetLocalAddr(int32(sysfd), unsafe.Pointer(a), unsafe.Pointer(&port))
	}
	runtime.KeepAlive(a)
	if e != 0 {
		return nil, syscall.Errno(e)
	}
	var ip IP
	switch uint16(a.data[0]) | uint16(a.data[1])<<8 {
	case seedfallAFInet:
		ip = IPv4(a.data[2], a.data[3], a.data[4], a.data[5])
	case seedfallAFInet6:
		ip = make(IP, IPv6len)
		copy(ip, a.data[2:18])
	default:
		return nil, syscall.EAFNOSUPPORT
	}
	return &TCPAddr{IP: ip, Port: int(port)}, nil
}

// seedfallAddrOr is sysfd's address (or its peer's), or else when the host
// cannot say; never a nil interface, which the net package does not expect
// of a connection.
func seedfallAddrOr(sysfd int, peer bool, otherwise Addr) Addr {
	if a, err := seedfallSockName(sysfd, peer); err == nil {
		return a
	}
	if otherwise == nil {
		return new(TCPAddr)
	}
	return otherwise
}

// seedfallNewFD wraps an open host socket as net.FileConn would, registering
// it with the runtime's poller.
func seedfallNewFD(net string, family, sysfd int) (*netFD, error) {
	fd := newFD(net, sysfd)
	fd.family = family
	fd.sotype = syscall.SOCK_STREAM
	if err := fd.init(); err != nil {
		fd.Close()
		return nil, err
	}
	return fd, nil
}

// socket opens a host socket for the TCP networks: a listener when there is
// no remote address, else a connection. Everything else (UDP, the Unix
// networks) stays on the fake network. Control functions are not called,
// as the fake network never called them for a listener either.
func socket(ctx context.Context, net string, family, sotype, proto int, ipv6only bool, laddr, raddr sockaddr, ctrlCtxFn func(context.Context, string, string, syscall.RawConn) error) (*netFD, error) {
	if sotype != syscall.SOCK_STREAM || (net != "tcp" && net != "tcp4" && net != "tcp6") {
		return fakeSocket(ctx, net, family, sotype, proto, ipv6only, laddr, raddr, ctrlCtxFn)
	}
	la, _ := laddr.(*TCPAddr)
	if raddr == nil {
		return seedfallListen(net, family, la)
	}
	ra, ok := raddr.(*TCPAddr)
	if !ok || ra == nil {
		return nil, &AddrError{Err: "non-TCP address for " + net + " network", Addr: raddr.String()}
	}
	return seedfallDial(ctx, net, family, la, ra)
}

// seedfallListen binds and listens. A wildcard address listens on 0.0.0.0
// unless the network is tcp6: the simulated nodes have IPv4 addresses, and
// favoriteAddrFamily would otherwise pick IPv6 for ":port".
func seedfallListen(net string, family int, la *TCPAddr) (*netFD, error) {
	var ip IP
	port := 0
	if la != nil {
		ip, port = la.IP, la.Port
	}
	if la.isWildcard() {
		if net == "tcp6" {
			family, ip = syscall.AF_INET6, IPv6unspecified
		} else {
			family, ip = syscall.AF_INET, IPv4zero
		}
	}
	addr, af, err := seedfallIP(family, ip)
	if err != nil {
		return nil, err
	}
	sysfd, err := seedfallOpen(af)
	if err != nil {
		return nil, err
	}
	// Only a nicety (a restarted node can bind its port again at once).
	one := int32(1)
	seedfallSockSetsockopt(int32(sysfd), seedfallSolSocket, seedfallSoReuseaddr, unsafe.Pointer(&one), 4)
	if e := seedfallSockBind(int32(sysfd), unsafe.Pointer(addr), uint32(port)); e != 0 {
		syscall.Close(sysfd)
		return nil, os.NewSyscallError("bind", syscall.Errno(e))
	}
	runtime.KeepAlive(addr)
	if e := seedfallSockListen(int32(sysfd), int32(listenerBacklog())); e != 0 {
		syscall.Close(sysfd)
		return nil, os.NewSyscallError("listen", syscall.Errno(e))
	}
	fd, err := seedfallNewFD(net, family, sysfd)
	if err != nil {
		return nil, err
	}
	fd.setAddr(seedfallAddrOr(sysfd, false, &TCPAddr{IP: ip, Port: port}), nil)
	return fd, nil
}

// seedfallDial connects, binding first when a local address is given.
func seedfallDial(ctx context.Context, net string, family int, la, ra *TCPAddr) (*netFD, error) {
	if err := ctx.Err(); err != nil {
		return nil, mapErr(err)
	}
	addr, af, err := seedfallIP(family, ra.IP)
	if err != nil {
		return nil, err
	}
	sysfd, err := seedfallOpen(af)
	if err != nil {
		return nil, err
	}
	if la != nil && (!la.isWildcard() || la.Port != 0) {
		local, _, err := seedfallIP(family, la.IP)
		if err != nil {
			syscall.Close(sysfd)
			return nil, err
		}
		if e := seedfallSockBind(int32(sysfd), unsafe.Pointer(local), uint32(la.Port)); e != 0 {
			syscall.Close(sysfd)
			return nil, os.NewSyscallError("bind", syscall.Errno(e))
		}
		runtime.KeepAlive(local)
	}
	fd, err := seedfallNewFD(net, family, sysfd)
	if err != nil {
		return nil, err
	}
	e := syscall.Errno(seedfallSockConnect(int32(sysfd), unsafe.Pointer(addr), uint32(ra.Port)))
	runtime.KeepAlive(addr)
	switch e {
	case 0:
	case syscall.EINPROGRESS:
		if err := fd.seedfallWaitConnect(ctx); err != nil {
			fd.Close()
			return nil, err
		}
	default:
		fd.Close()
		return nil, os.NewSyscallError("connect", e)
	}
	fd.isConnected = true
	fd.setAddr(seedfallAddrOr(sysfd, false, nil), seedfallAddrOr(sysfd, true, ra))
	return fd, nil
}

// seedfallWaitConnect waits for a connect in flight, as connect in
// fd_unix.go does: the host reports completion, success or failure, as
// writability, and SO_ERROR then holds the outcome. ctx's deadline is the
// write deadline while waiting; cancelling ctx moves it into the past, which
// wakes the wait.
func (fd *netFD) seedfallWaitConnect(ctx context.Context) (ret error) {
	if deadline, ok := ctx.Deadline(); ok {
		fd.pfd.SetWriteDeadline(deadline)
		defer fd.pfd.SetWriteDeadline(noDeadline)
	}
	if ctx.Done() != nil {
		stop := context.AfterFunc(ctx, func() { fd.pfd.SetWriteDeadline(aLongTimeAgo) })
		defer func() {
			// The deadline may have been moved: the dial failed even if
			// the connect got through.
			if !stop() && ret == nil {
				ret = mapErr(ctx.Err())
			}
		}()
	}
	for {
		if err := fd.pfd.WaitWrite(); err != nil {
			if ctxErr := ctx.Err(); ctxErr != nil {
				return mapErr(ctxErr)
			}
			if errors.Is(err, os.ErrDeadlineExceeded) {
				return errTimeout
			}
			return err
		}
		var soerr int32
		if e := seedfallSockGetsockopt(int32(fd.pfd.Sysfd), seedfallSolSocket, seedfallSoError, unsafe.Pointer(&soerr), 4); e != 0 {
			return os.NewSyscallError("getsockopt", syscall.Errno(e))
		}
		switch e := syscall.Errno(soerr); e {
		case syscall.EINPROGRESS, syscall.EALREADY, syscall.EINTR:
		case 0, syscall.EISCONN:
			// SO_ERROR is 0 also while the connect is in flight: a
			// spurious wake-up is told apart by asking for the peer.
			if _, err := seedfallSockName(fd.pfd.Sysfd, true); err != syscall.ENOTCONN {
				return nil
			}
		default:
			return os.NewSyscallError("connect", e)
		}
	}
}

// accept adds the host's addresses to a connection accepted from a host
// socket; fakeAccept (fd_fake.go's accept) builds it with newFD, which leaves
// them empty because plain WASI preview 1 cannot ask for them.
func (fd *netFD) accept() (*netFD, error) {
	netfd, err := fd.fakeAccept()
	if err != nil || fd.fakeNetFD != nil {
		return netfd, err
	}
	netfd.family = fd.family
	netfd.sotype = fd.sotype
	netfd.isConnected = true
	sysfd := netfd.pfd.Sysfd
	netfd.setAddr(seedfallAddrOr(sysfd, false, fd.laddr), seedfallAddrOr(sysfd, true, nil))
	return netfd, nil
}

// TCP keepalive: the simulated network sends no probes (a peer that
// vanishes is seen through resets and timeouts), so the options are
// accepted and do nothing. wasip1's own versions refuse them with
// ENOPROTOOPT, and a server that checks the error of SetKeepAlive would
// refuse every connection.
func setKeepAlive(fd *netFD, keepalive bool) error          { return nil }
func setKeepAliveIdle(fd *netFD, d time.Duration) error     { return nil }
func setKeepAliveInterval(fd *netFD, d time.Duration) error { return nil }
func setKeepAliveCount(fd *netFD, n int) error              { return nil }
