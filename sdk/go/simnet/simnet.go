// simnet.go owns the public API shared by every target: Dial, DialContext,
// Dialer, Listen, Transport and Install. The platform files (dial_wasip1.go
// and listen_wasip1.go under seedfall, native.go elsewhere) supply
// platformDial and platformListen.

package simnet

import (
	"context"
	"net"
	"net/http"
	"time"
)

// Dialer dials TCP connections between simulated nodes. The zero value dials
// without a timeout.
type Dialer struct {
	// Timeout bounds the whole dial, name lookup and connect together. Zero
	// means no bound other than the context's. A dial that runs out of time
	// fails with an error whose Timeout method reports true and that
	// matches context.DeadlineExceeded and os.ErrDeadlineExceeded with
	// errors.Is.
	Timeout time.Duration
}

// Dial connects to address on the named network; see [Dialer.DialContext].
func (d *Dialer) Dial(network, address string) (net.Conn, error) {
	return d.DialContext(context.Background(), network, address)
}

// DialContext connects to address ("host:port") on the named network, which
// must be "tcp", "tcp4" or "tcp6". ctx bounds the dial only: once connected,
// the connection no longer depends on it. Errors are *net.OpError values as
// the standard library returns them, so errors.Is(err, syscall.ECONNREFUSED)
// works.
func (d *Dialer) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	if err := checkNetwork(network); err != nil {
		return nil, &net.OpError{Op: "dial", Net: network, Err: err}
	}
	if d != nil && d.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d.Timeout)
		defer cancel()
	}
	return platformDial(ctx, network, address)
}

// Dial connects to address on the named network with a zero [Dialer].
func Dial(network, address string) (net.Conn, error) {
	var d Dialer
	return d.DialContext(context.Background(), network, address)
}

// DialContext connects to address on the named network with a zero
// [Dialer]; it has the signature http.Transport.DialContext expects.
func DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	var d Dialer
	return d.DialContext(ctx, network, address)
}

// Listen listens on address ("host:port", the host may be empty) on the
// named network, which must be "tcp", "tcp4" or "tcp6". Port 0 lets the
// host choose; the listener's Addr reports the port it chose.
func Listen(network, address string) (net.Listener, error) {
	if err := checkNetwork(network); err != nil {
		return nil, &net.OpError{Op: "listen", Net: network, Err: err}
	}
	return platformListen(network, address)
}

// Transport returns a new *http.Transport that dials through simnet, with
// the settings of http.DefaultTransport otherwise.
func Transport() *http.Transport {
	var t *http.Transport
	if dt, ok := http.DefaultTransport.(*http.Transport); ok {
		t = dt.Clone()
	} else {
		t = &http.Transport{
			Proxy:                 http.ProxyFromEnvironment,
			ForceAttemptHTTP2:     true,
			MaxIdleConns:          100,
			IdleConnTimeout:       90 * time.Second,
			TLSHandshakeTimeout:   10 * time.Second,
			ExpectContinueTimeout: 1 * time.Second,
		}
	}
	t.DialContext = DialContext
	return t
}

// Install makes http.DefaultTransport dial through simnet, so http.Get,
// http.DefaultClient and every http.Client without a Transport of its own
// reach the other nodes unchanged. Call it once at the start of main, before
// any request: it changes the shared transport in place.
func Install() {
	if t, ok := http.DefaultTransport.(*http.Transport); ok {
		t.DialContext = DialContext
		return
	}
	http.DefaultTransport = Transport()
}
