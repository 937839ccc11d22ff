// simnet_test.go tests what can be tested natively: the network check and
// the errors simnet makes, the decoding of the host's address layouts, and
// the API on its standard-library fallback (loopback only).

package simnet

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"strings"
	"testing"
	"time"
)

func TestOnlyTCPNetworks(t *testing.T) {
	for _, network := range []string{"udp", "unix", "ip4:icmp", ""} {
		_, err := Dial(network, "127.0.0.1:1")
		var oe *net.OpError
		if !errors.As(err, &oe) || oe.Op != "dial" || oe.Net != network {
			t.Errorf("Dial(%q): got %v, want a dial *net.OpError", network, err)
		}
		if !errors.Is(err, errors.ErrUnsupported) || !strings.Contains(err.Error(), `"`+network+`"`) {
			t.Errorf("Dial(%q): error %q does not name the network or match ErrUnsupported", network, err)
		}
		if _, err := Listen(network, ":0"); !errors.As(err, &oe) || oe.Op != "listen" {
			t.Errorf("Listen(%q): got %v, want a listen *net.OpError", network, err)
		}
	}
	for _, network := range []string{"tcp", "tcp4", "tcp6"} {
		if err := checkNetwork(network); err != nil {
			t.Errorf("checkNetwork(%q) = %v", network, err)
		}
	}
}

func TestDialErrorsMatchTheContextAndTheStandardOnes(t *testing.T) {
	err := error(&net.OpError{Op: "dial", Net: "tcp", Err: contextError(context.DeadlineExceeded)})
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Errorf("a timed-out dial is not a net.Error with Timeout: %v", err)
	}
	if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("a timed-out dial does not match the deadline errors: %v", err)
	}
	if err.Error() != "dial tcp: i/o timeout" {
		t.Errorf("message %q", err)
	}
	canceled := contextError(context.Canceled)
	if !errors.Is(canceled, context.Canceled) || errors.Is(canceled, context.DeadlineExceeded) {
		t.Errorf("a cancelled dial: %v", canceled)
	}
}

func TestDecodeHostAddr(t *testing.T) {
	v4 := make([]byte, hostAddrSize)
	v4[0] = afInet
	copy(v4[2:], []byte{10, 0, 1, 2})
	if ap, ok := decodeHostAddr(v4, 8080); !ok || ap != netip.MustParseAddrPort("10.0.1.2:8080") {
		t.Errorf("IPv4: got %v %v", ap, ok)
	}
	v6 := make([]byte, hostAddrSize)
	v6[0] = afInet6
	copy(v6[2:], netip.MustParseAddr("fd00::7").AsSlice())
	if ap, ok := decodeHostAddr(v6, 1); !ok || ap != netip.MustParseAddrPort("[fd00::7]:1") {
		t.Errorf("IPv6: got %v %v", ap, ok)
	}
	bad := make([]byte, hostAddrSize)
	bad[0] = 9
	if _, ok := decodeHostAddr(bad, 1); ok {
		t.Errorf("an unknown family decoded")
	}
	if _, ok := decodeHostAddr(v4[:5], 1); ok {
		t.Errorf("a short IPv4 area decoded")
	}
}

func TestDecodeSockaddrData(t *testing.T) {
	data := []byte{0x1f, 0x90, 10, 0, 0, 3, 0xff}
	if ap, ok := decodeSockaddrData(afInet, data); !ok || ap != netip.MustParseAddrPort("10.0.0.3:8080") {
		t.Errorf("got %v %v", ap, ok)
	}
	if _, ok := decodeSockaddrData(afInet6, data); ok {
		t.Errorf("a short IPv6 sa_data decoded")
	}
}

func TestEncodeIP(t *testing.T) {
	if f, raw := encodeIP(netip.MustParseAddr("::ffff:10.0.0.1")); f != afInet || string(raw) != "\x0a\x00\x00\x01" {
		t.Errorf("4in6: family %d raw %v", f, raw)
	}
	if f, raw := encodeIP(netip.IPv6Loopback()); f != afInet6 || len(raw) != 16 || raw[15] != 1 {
		t.Errorf("::1: family %d raw %v", f, raw)
	}
}

func TestEchoOverTheNativeFallback(t *testing.T) {
	ln, err := Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		io.Copy(c, c)
		c.Close()
	}()
	d := Dialer{Timeout: 5 * time.Second}
	c, err := d.Dial("tcp4", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write([]byte("ping")); err != nil {
		t.Fatal(err)
	}
	c.(interface{ CloseWrite() error }).CloseWrite()
	got, err := io.ReadAll(c)
	if err != nil || string(got) != "ping" {
		t.Errorf("echo: %q, %v", got, err)
	}
}

func TestTransportAndInstallDialThroughSimnet(t *testing.T) {
	tr := Transport()
	if tr.DialContext == nil || tr == http.DefaultTransport {
		t.Fatalf("Transport() = %+v", tr)
	}
	saved := http.DefaultTransport
	t.Cleanup(func() { http.DefaultTransport = saved })
	http.DefaultTransport = saved.(*http.Transport).Clone()
	Install()
	if http.DefaultTransport.(*http.Transport).DialContext == nil {
		t.Errorf("Install left DefaultTransport without a DialContext")
	}
	// A DefaultTransport that is not an *http.Transport is replaced.
	http.DefaultTransport = roundTripperFunc(nil)
	Install()
	if tr, ok := http.DefaultTransport.(*http.Transport); !ok || tr.DialContext == nil {
		t.Errorf("Install did not replace a foreign DefaultTransport: %T", http.DefaultTransport)
	}
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
