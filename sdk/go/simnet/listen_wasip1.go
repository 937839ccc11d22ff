// listen_wasip1.go owns listening under seedfall: open a host socket, bind
// and listen, then hand it to net.FileListener, whose Accept parks in the
// runtime's poller and takes connections with sock_accept.

//go:build wasip1

package simnet

import (
	"context"
	"net"
	"net/netip"
	"os"
	"runtime"
	"syscall"
	"unsafe"
)

// listenBacklog is the queue of connections not yet accepted.
const listenBacklog = 128

func platformListen(network, address string) (net.Listener, error) {
	ctx := context.Background()
	host, port, err := splitHostPort(ctx, network, address)
	if err != nil {
		return nil, &net.OpError{Op: "listen", Net: network, Err: err}
	}
	ip, err := listenIP(ctx, network, host)
	if err != nil {
		return nil, &net.OpError{Op: "listen", Net: network, Err: err}
	}
	laddr := net.TCPAddrFromAddrPort(netip.AddrPortFrom(ip, port))
	fail := func(err error) (net.Listener, error) {
		return nil, &net.OpError{Op: "listen", Net: network, Addr: laddr, Err: err}
	}

	fd, err := openSocket(ip)
	if err != nil {
		return fail(err)
	}
	// Only a nicety (a restarted node can bind its port again at once), so
	// a host without it still gets a listener.
	_ = setReuseAddr(fd)
	addr, _ := newHostAddr(ip)
	e := sockBind(int32(fd), unsafe.Pointer(addr), uint32(port))
	runtime.KeepAlive(addr)
	if e != 0 {
		syscall.Close(fd)
		return fail(os.NewSyscallError("bind", syscall.Errno(e)))
	}
	if e := sockListen(int32(fd), listenBacklog); e != 0 {
		syscall.Close(fd)
		return fail(os.NewSyscallError("listen", syscall.Errno(e)))
	}
	// The host's view has the port it chose when port was 0.
	if bound := tcpAddr(sockName(fd, false)); bound != nil {
		laddr = bound
	}

	f := os.NewFile(uintptr(fd), "tcp-listener:"+laddr.String())
	ln, err := net.FileListener(f)
	f.Close() // ln holds its own reference to the socket
	if err != nil {
		return fail(fileError(err))
	}
	tl, ok := ln.(*net.TCPListener)
	if !ok {
		ln.Close()
		return fail(syscall.EOPNOTSUPP)
	}
	return &listener{TCPListener: tl, addr: laddr}, nil
}

// listenIP is the address to bind for host. A wildcard is 0.0.0.0 unless
// the network is tcp6: the simulated nodes have IPv4 addresses.
func listenIP(ctx context.Context, network, host string) (netip.Addr, error) {
	wildcard := netip.IPv4Unspecified()
	if network == "tcp6" {
		wildcard = netip.IPv6Unspecified()
	}
	if host == "" {
		return wildcard, nil
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		ip = ip.Unmap()
		if ip.IsUnspecified() {
			return wildcard, nil
		}
		if len(suitable(network, []netip.Addr{ip})) == 0 {
			return netip.Addr{}, &net.AddrError{Err: "no suitable address found", Addr: host}
		}
		return ip, nil
	}
	ips, err := resolve(ctx, network, host, 0)
	if err != nil {
		return netip.Addr{}, err
	}
	return ips[0], nil
}
