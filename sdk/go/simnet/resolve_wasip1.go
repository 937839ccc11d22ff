// resolve_wasip1.go owns turning "host:port" into addresses to try: IP
// literals as they are, names through /etc/hosts (net.DefaultResolver) and
// then the host's sock_getaddrinfo.

//go:build wasip1

package simnet

import (
	"context"
	"encoding/binary"
	"net"
	"net/netip"
	"runtime"
	"strconv"
	"syscall"
	"unsafe"
)

// splitHostPort splits address and turns its port, a number or a service
// name such as "http", into a number.
func splitHostPort(ctx context.Context, network, address string) (string, uint16, error) {
	host, service, err := net.SplitHostPort(address)
	if err != nil {
		return "", 0, err
	}
	port, err := net.DefaultResolver.LookupPort(ctx, network, service)
	if err != nil {
		return "", 0, err
	}
	return host, uint16(port), nil
}

// loopback is the address an empty or wildcard host dials, as in the
// standard library.
func loopback(network string) netip.Addr {
	if network == "tcp6" {
		return netip.IPv6Loopback()
	}
	return netip.AddrFrom4([4]byte{127, 0, 0, 1})
}

// resolve returns the addresses to dial for host on network, in order.
func resolve(ctx context.Context, network, host string, port uint16) ([]netip.Addr, error) {
	if host == "" {
		return []netip.Addr{loopback(network)}, nil
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		ip = ip.Unmap()
		if ip.IsUnspecified() {
			ip = loopback(network)
		}
		if ips := suitable(network, []netip.Addr{ip}); len(ips) > 0 {
			return ips, nil
		}
		return nil, &net.AddrError{Err: "no suitable address found", Addr: host}
	}

	var found []netip.Addr
	// /etc/hosts first: it is what the program would use natively, and the
	// lookup stays inside the guest.
	if ipas, err := net.DefaultResolver.LookupIPAddr(ctx, host); err == nil {
		for _, ipa := range ipas {
			if ip, ok := netip.AddrFromSlice(ipa.IP); ok {
				found = append(found, ip.Unmap())
			}
		}
	}
	if ips := suitable(network, found); len(ips) > 0 {
		return ips, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, contextError(err)
	}
	more, err := getaddrinfo(network, host, port)
	if ips := suitable(network, more); len(ips) > 0 {
		return ips, nil
	}
	if len(found)+len(more) > 0 {
		return nil, &net.AddrError{Err: "no suitable address found", Addr: host}
	}
	dnsErr := &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	if err != nil {
		dnsErr.Err = "no such host (sock_getaddrinfo: " + err.Error() + ")"
	}
	return nil, dnsErr
}

// suitable keeps the addresses network can use.
func suitable(network string, ips []netip.Addr) []netip.Addr {
	var out []netip.Addr
	for _, ip := range ips {
		switch {
		case network == "tcp4" && !ip.Is4():
		case network == "tcp6" && !ip.Is6():
		default:
			out = append(out, ip)
		}
	}
	return out
}

// maxAddrinfo is how many results sock_getaddrinfo may return; a node name
// has one address, so this is plenty.
const maxAddrinfo = 8

// addrinfoSize is the stride of the addrinfo structs handed to the host: the
// fields end at byte 28 (flags u16, family u8, socktype u8, protocol u32,
// addrlen u32, addr u32, canonname u32, canonnamelen u32, next u32) and the
// ABI gives each struct 32 bytes. Every struct is also chained through
// ai_next, so a host that walks the chain finds the same ones.
const addrinfoSize = 32

// addrinfoBuf is everything sock_getaddrinfo reads and writes, in one heap
// object so that the u32 pointers between its parts stay valid.
type addrinfoBuf struct {
	hints     [addrinfoSize]byte
	infos     [maxAddrinfo][addrinfoSize]byte
	sockaddrs [maxAddrinfo][16]byte // sa_family u32, sa_data_len u32, sa_data u32
	data      [maxAddrinfo][32]byte // port (big-endian u16), then the IP
	canon     [maxAddrinfo][64]byte
	res       uint32
	resLen    uint32
}

// getaddrinfo asks the host for host's addresses on network.
func getaddrinfo(network, host string, port uint16) ([]netip.Addr, error) {
	le := binary.LittleEndian
	ptr := func(b *byte) uint32 { return uint32(uintptr(unsafe.Pointer(b))) }

	b := new(addrinfoBuf)
	switch network {
	case "tcp4":
		b.hints[2] = afInet
	case "tcp6":
		b.hints[2] = afInet6
	}
	b.hints[3] = sockStream
	for i := range b.infos {
		sa := &b.sockaddrs[i]
		le.PutUint32(sa[4:], uint32(len(b.data[i])))
		le.PutUint32(sa[8:], ptr(&b.data[i][0]))
		ai := &b.infos[i]
		le.PutUint32(ai[8:], uint32(len(sa)))
		le.PutUint32(ai[12:], ptr(&sa[0]))
		le.PutUint32(ai[16:], ptr(&b.canon[i][0]))
		le.PutUint32(ai[20:], uint32(len(b.canon[i])))
		if i+1 < len(b.infos) {
			le.PutUint32(ai[24:], ptr(&b.infos[i+1][0]))
		}
	}
	b.res = ptr(&b.infos[0][0])

	// NUL-terminated, the length counting the NUL, as WasmEdge expects.
	node := append([]byte(host), 0)
	service := append([]byte(strconv.Itoa(int(port))), 0)
	e := sockGetaddrinfo(unsafe.Pointer(&node[0]), uint32(len(node)),
		unsafe.Pointer(&service[0]), uint32(len(service)),
		unsafe.Pointer(&b.hints[0]), unsafe.Pointer(&b.res), maxAddrinfo, unsafe.Pointer(&b.resLen))
	runtime.KeepAlive(b)
	runtime.KeepAlive(node)
	runtime.KeepAlive(service)
	if e != 0 {
		return nil, syscall.Errno(e)
	}

	var ips []netip.Addr
	for i := 0; i < int(min(b.resLen, maxAddrinfo)); i++ {
		family := le.Uint32(b.sockaddrs[i][0:])
		if family != afInet && family != afInet6 {
			family = uint32(b.infos[i][2]) // ai_family
		}
		if ap, ok := decodeSockaddrData(family, b.data[i][:]); ok {
			ips = append(ips, ap.Addr())
		}
	}
	return ips, nil
}
