// native.go owns the stand-in for the host's sockets when the program is not
// built as a seedfall guest (any target but wasip1, e.g. `go test`): the
// standard net package does the work.

//go:build !wasip1

package simnet

import (
	"context"
	"net"
)

func platformDial(ctx context.Context, network, address string) (net.Conn, error) {
	var d net.Dialer
	return d.DialContext(ctx, network, address)
}

func platformListen(network, address string) (net.Listener, error) {
	return net.Listen(network, address)
}
