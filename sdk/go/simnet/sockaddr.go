// sockaddr.go owns the host's numbering and the address layouts it writes
// into guest memory, decoded from plain bytes so that the decoding is tested
// natively too. The numbers are the WasmEdge sockets extension's, not Go's
// syscall constants for wasip1 (where AF_INET is 2 and SOCK_STREAM is 1).

package simnet

import (
	"encoding/binary"
	"net/netip"
)

// Address families and socket types as the host numbers them.
const (
	afInet     = 1
	afInet6    = 2
	sockStream = 2
)

// Socket option level and names for sock_getsockopt and sock_setsockopt.
const (
	solSocket   = 0
	soReuseaddr = 0
	soError     = 2
)

// hostAddrSize is the size of the area sock_getlocaladdr and
// sock_getpeeraddr write into.
const hostAddrSize = 128

// decodeHostAddr reads what sock_getlocaladdr and sock_getpeeraddr write: the
// family as a little-endian u16 at offset 0, then the raw IP bytes; the port
// comes separately.
func decodeHostAddr(b []byte, port uint32) (netip.AddrPort, bool) {
	if len(b) < 2 {
		return netip.AddrPort{}, false
	}
	ip, ok := rawIP(uint32(binary.LittleEndian.Uint16(b)), b[2:])
	if !ok {
		return netip.AddrPort{}, false
	}
	return netip.AddrPortFrom(ip, uint16(port)), true
}

// decodeSockaddrData reads the sa_data of a sockaddr that sock_getaddrinfo
// fills: the port as a big-endian u16, then the raw IP bytes of family.
func decodeSockaddrData(family uint32, data []byte) (netip.AddrPort, bool) {
	if len(data) < 2 {
		return netip.AddrPort{}, false
	}
	ip, ok := rawIP(family, data[2:])
	if !ok {
		return netip.AddrPort{}, false
	}
	return netip.AddrPortFrom(ip, binary.BigEndian.Uint16(data)), true
}

// rawIP is the address of family at the start of b.
func rawIP(family uint32, b []byte) (netip.Addr, bool) {
	switch family {
	case afInet:
		if len(b) >= 4 {
			return netip.AddrFrom4([4]byte(b[:4])), true
		}
	case afInet6:
		if len(b) >= 16 {
			return netip.AddrFrom16([16]byte(b[:16])).Unmap(), true
		}
	}
	return netip.Addr{}, false
}

// encodeIP returns the host's family for ip and its raw bytes (4 or 16).
func encodeIP(ip netip.Addr) (family int32, raw []byte) {
	ip = ip.Unmap()
	if ip.Is4() {
		b := ip.As4()
		return afInet, b[:]
	}
	b := ip.As16()
	return afInet6, b[:]
}
