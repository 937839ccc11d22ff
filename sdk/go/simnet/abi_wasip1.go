// abi_wasip1.go owns the binding to the host's socket calls in
// wasi_snapshot_preview1 (the WasmEdge sockets extension) and thin wrappers
// that turn their errnos into Go errors.
//
// The imports are deliberately not marked //go:noescape: a pointer passed
// to them then escapes, so the object it points into lives on the heap,
// which never moves. That matters because several calls take a struct that
// holds a second address as a u32 (hostAddr.buf, the addrinfo chain), which
// the garbage collector and the stack copier cannot see; on a goroutine
// stack that address could go stale if the stack grew before the call.

//go:build wasip1

package simnet

import (
	"net/netip"
	"os"
	"runtime"
	"syscall"
	"unsafe"
)

//go:wasmimport wasi_snapshot_preview1 sock_open
func sockOpen(af, socktype int32, fd unsafe.Pointer) uint32

//go:wasmimport wasi_snapshot_preview1 sock_bind
func sockBind(fd int32, addr unsafe.Pointer, port uint32) uint32

//go:wasmimport wasi_snapshot_preview1 sock_listen
func sockListen(fd, backlog int32) uint32

//go:wasmimport wasi_snapshot_preview1 sock_connect
func sockConnect(fd int32, addr unsafe.Pointer, port uint32) uint32

//go:wasmimport wasi_snapshot_preview1 sock_getlocaladdr
func sockGetLocalAddr(fd int32, addr, port unsafe.Pointer) uint32

//go:wasmimport wasi_snapshot_preview1 sock_getpeeraddr
func sockGetPeerAddr(fd int32, addr, port unsafe.Pointer) uint32

//go:wasmimport wasi_snapshot_preview1 sock_getsockopt
func sockGetsockopt(fd int32, level, name uint32, value unsafe.Pointer, size uint32) uint32

//go:wasmimport wasi_snapshot_preview1 sock_setsockopt
func sockSetsockopt(fd int32, level, name uint32, value unsafe.Pointer, size uint32) uint32

//go:wasmimport wasi_snapshot_preview1 sock_getaddrinfo
func sockGetaddrinfo(node unsafe.Pointer, nodeLen uint32, service unsafe.Pointer, serviceLen uint32, hints, res unsafe.Pointer, maxResLen uint32, resLen unsafe.Pointer) uint32

// hostAddr is the {buf, len} pair through which the host reads or writes an
// address, followed by the area buf points to.
type hostAddr struct {
	buf  uint32
	size uint32
	data [hostAddrSize]byte
}

// newHostAddr returns a hostAddr holding ip's raw bytes, and ip's family.
func newHostAddr(ip netip.Addr) (*hostAddr, int32) {
	family, raw := encodeIP(ip)
	a := new(hostAddr)
	a.size = uint32(copy(a.data[:], raw))
	a.buf = uint32(uintptr(unsafe.Pointer(&a.data[0])))
	return a, family
}

// openSocket opens a non-blocking stream socket of ip's family. Non-blocking
// is what lets the Go runtime park a goroutine in poll_oneoff instead of
// blocking the whole program in a host call.
func openSocket(ip netip.Addr) (int, error) {
	family, _ := encodeIP(ip)
	var fd int32
	if e := sockOpen(family, sockStream, unsafe.Pointer(&fd)); e != 0 {
		return -1, os.NewSyscallError("socket", syscall.Errno(e))
	}
	if err := syscall.SetNonblock(int(fd), true); err != nil {
		syscall.Close(int(fd))
		return -1, os.NewSyscallError("setnonblock", err)
	}
	return int(fd), nil
}

// sockName asks the host for fd's local address, or its peer's when peer is
// set. The errors are bare errnos (ENOTCONN for an unconnected socket).
func sockName(fd int, peer bool) (netip.AddrPort, error) {
	a := new(hostAddr)
	a.size = hostAddrSize
	a.buf = uint32(uintptr(unsafe.Pointer(&a.data[0])))
	var port uint32
	var e uint32
	if peer {
		e = sockGetPeerAddr(int32(fd), unsafe.Pointer(a), unsafe.Pointer(&port))
	} else {
		e = sockGetLocalAddr(int32(fd), unsafe.Pointer(a), unsafe.Pointer(&port))
	}
	runtime.KeepAlive(a)
	if e != 0 {
		return netip.AddrPort{}, syscall.Errno(e)
	}
	ap, ok := decodeHostAddr(a.data[:], port)
	if !ok {
		return netip.AddrPort{}, syscall.EAFNOSUPPORT
	}
	return ap, nil
}

// pendingError returns the socket's SO_ERROR: the outcome of a non-blocking
// connect once it has finished, 0 on success.
func pendingError(fd int) (syscall.Errno, error) {
	var v int32
	if e := sockGetsockopt(int32(fd), solSocket, soError, unsafe.Pointer(&v), 4); e != 0 {
		return 0, os.NewSyscallError("getsockopt", syscall.Errno(e))
	}
	return syscall.Errno(v), nil
}

// setReuseAddr sets SO_REUSEADDR, so a restarted node can listen on its
// port again at once.
func setReuseAddr(fd int) error {
	one := int32(1)
	if e := sockSetsockopt(int32(fd), solSocket, soReuseaddr, unsafe.Pointer(&one), 4); e != 0 {
		return os.NewSyscallError("setsockopt", syscall.Errno(e))
	}
	return nil
}
