// go-net is a test guest for the engine's sockets: an ordinary Go program
// that talks TCP between simulated nodes through seedfall.dev/sdk/simnet.
// Each -mode is one side of a scenario; every mode prints one line starting
// with its verdict ("... ok") and exits 0 when the network behaved, and
// exits 1 with the reason on stderr when it did not.
//
//	-mode server       -port P                    echo server
//	-mode client       -to H:P -conns N -bytes B [-parallel]
//	-mode refused      -to H:P                    dial must be refused
//	-mode dial-timeout -to H:P -timeout D         dial must time out
//	-mode expect-reset -to H:P                    echo until the peer goes away, then reconnect
//	-mode http-server  -port P                    GET /echo?x=V answers V
//	-mode http-client  -to H:P -n N               N checked GETs
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"sync"
	"syscall"
	"time"

	"seedfall.dev/sdk/simnet"
)

func main() {
	mode := flag.String("mode", "", "server | client | refused | dial-timeout | expect-reset | http-server | http-client")
	port := flag.Int("port", 8080, "port to listen on (server modes)")
	to := flag.String("to", "server:8080", "host:port to connect to (client modes)")
	conns := flag.Int("conns", 3, "connections (client)")
	size := flag.Int("bytes", 4096, "bytes sent and echoed on each connection (client)")
	parallel := flag.Bool("parallel", false, "run the connections concurrently (client)")
	timeout := flag.Duration("timeout", time.Second, "dial timeout (dial-timeout)")
	n := flag.Int("n", 5, "requests (http-client)")
	flag.Parse()

	switch *mode {
	case "server":
		echoServer(*port)
	case "client":
		client(*to, *conns, *size, *parallel)
	case "refused":
		refused(*to)
	case "dial-timeout":
		dialTimeout(*to, *timeout)
	case "expect-reset":
		expectReset(*to)
	case "http-server":
		httpServer(*port)
	case "http-client":
		httpClient(*to, *n)
	default:
		fail("unknown mode %q", *mode)
	}
}

// fail reports why the scenario did not hold and exits 1.
func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, format+"\n", args...)
	os.Exit(1)
}

func echoServer(port int) {
	ln, err := simnet.Listen("tcp", fmt.Sprintf(":%d", port))
	if err != nil {
		fail("listen: %v", err)
	}
	fmt.Printf("echo server listening on :%d\n", port)
	for {
		c, err := ln.Accept()
		if err != nil {
			fail("accept: %v", err)
		}
		go func() {
			defer c.Close()
			if _, err := io.Copy(c, c); err != nil {
				fmt.Printf("echo %v: %v\n", c.RemoteAddr(), err)
			}
		}()
	}
}

// dialRetry dials to, retrying while the connection is refused (the server
// may not be listening yet).
func dialRetry(to string) net.Conn {
	var err error
	for attempt := 0; attempt < 50; attempt++ {
		var c net.Conn
		if c, err = simnet.Dial("tcp", to); err == nil {
			return c
		}
		if !errors.Is(err, syscall.ECONNREFUSED) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	fail("dial %s: %v", to, err)
	return nil
}

// pattern is the byte j of connection i.
func pattern(i, j int) byte {
	return byte((i*31 + j*7) % 251)
}

func client(to string, conns, size int, parallel bool) {
	var wg sync.WaitGroup
	for i := 0; i < conns; i++ {
		if parallel {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				echoOnce(to, i, size)
			}(i)
		} else {
			echoOnce(to, i, size)
		}
	}
	wg.Wait()
	fmt.Printf("client ok conns=%d bytes=%d\n", conns, size)
}

// echoOnce sends size bytes on a new connection, closes its write side and
// checks that exactly the same bytes come back.
func echoOnce(to string, i, size int) {
	c := dialRetry(to)
	defer c.Close()
	sent := make([]byte, size)
	for j := range sent {
		sent[j] = pattern(i, j)
	}
	// Write from a goroutine while reading: the echo comes back while we
	// send, and neither side's buffers have to hold all of it.
	written := make(chan error, 1)
	go func() {
		_, err := c.Write(sent)
		if err == nil {
			err = c.(interface{ CloseWrite() error }).CloseWrite()
		}
		written <- err
	}()
	got, err := io.ReadAll(c)
	if err != nil {
		fail("conn %d: read: %v", i, err)
	}
	if err := <-written; err != nil {
		fail("conn %d: write: %v", i, err)
	}
	if len(got) != len(sent) {
		fail("conn %d: echoed %d bytes, sent %d", i, len(got), len(sent))
	}
	for j := range got {
		if got[j] != sent[j] {
			fail("conn %d: byte %d is %d, sent %d", i, j, got[j], sent[j])
		}
	}
}

func refused(to string) {
	c, err := simnet.Dial("tcp", to)
	if err == nil {
		c.Close()
		fail("refused: dial %s connected", to)
	}
	if !errors.Is(err, syscall.ECONNREFUSED) {
		fail("refused: dial %s failed otherwise: %v", to, err)
	}
	fmt.Printf("refused ok: %v\n", err)
}

func dialTimeout(to string, timeout time.Duration) {
	d := simnet.Dialer{Timeout: timeout}
	start := time.Now()
	c, err := d.Dial("tcp", to)
	if err == nil {
		c.Close()
		fail("timeout: dial %s connected", to)
	}
	if !isTimeout(err) {
		fail("timeout: dial %s failed otherwise after %v: %v", to, time.Since(start), err)
	}
	fmt.Printf("timeout ok: %v\n", err)
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, syscall.ETIMEDOUT) || (errors.As(err, &ne) && ne.Timeout())
}

// expectReset echoes 100 bytes at a time until the connection breaks, which
// the scenario causes (the server crashes or is killed). Running into the 5 s
// deadline instead means the break went unnoticed.
func expectReset(to string) {
	c := dialRetry(to)
	defer c.Close()
	msg := make([]byte, 100)
	buf := make([]byte, len(msg))
	for round := 0; ; round++ {
		for j := range msg {
			msg[j] = pattern(round, j)
		}
		c.SetDeadline(time.Now().Add(5 * time.Second))
		_, err := c.Write(msg)
		if err == nil {
			_, err = io.ReadFull(c, buf)
		}
		if err != nil {
			if isTimeout(err) {
				fail("reset: round %d: deadline hit before the connection broke: %v", round, err)
			}
			if isBroken(err) {
				fmt.Printf("reset ok: %v\n", err)
				reconnect(to)
				return
			}
			fail("reset: round %d: unexpected error: %v", round, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// reconnect dials again (a restarted server listens again) and checks one
// echo on the new connection.
func reconnect(to string) {
	c := dialRetry(to)
	defer c.Close()
	msg := []byte("after the restart")
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write(msg); err != nil {
		fail("reconnect: write: %v", err)
	}
	buf := make([]byte, len(msg))
	if _, err := io.ReadFull(c, buf); err != nil || string(buf) != string(msg) {
		fail("reconnect: echo %q, %v", buf, err)
	}
	fmt.Println("reconnected ok")
}

// isBroken reports errors that mean the peer is gone.
func isBroken(err error) bool {
	for _, target := range []error{syscall.ECONNRESET, syscall.ECONNABORTED, syscall.EPIPE,
		syscall.ENOTCONN, io.EOF, io.ErrUnexpectedEOF, net.ErrClosed} {
		if errors.Is(err, target) {
			return true
		}
	}
	return false
}

func echoHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, r.URL.Query().Get("x"))
	})
	return mux
}

func httpServer(port int) {
	ln, err := simnet.Listen("tcp", fmt.Sprintf(":%d", port))
	if err != nil {
		fail("listen: %v", err)
	}
	fmt.Printf("http server listening on :%d\n", port)
	fail("serve: %v", http.Serve(ln, echoHandler()))
}

func httpClient(to string, n int) {
	simnet.Install()
	for i := 0; i < n; i++ {
		want := fmt.Sprintf("value-%d", i)
		got := getRetry("http://" + to + "/echo?x=" + url.QueryEscape(want))
		if got != want {
			fail("http: request %d answered %q, want %q", i, got, want)
		}
	}
	fmt.Printf("http ok n=%d\n", n)
}

// getRetry GETs u with plain http.Get, retrying while the connection is
// refused (the server may not be listening yet), and returns the body.
func getRetry(u string) string {
	var err error
	for attempt := 0; attempt < 50; attempt++ {
		var resp *http.Response
		if resp, err = http.Get(u); err == nil {
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil {
				fail("http: read body: %v", err)
			}
			if resp.StatusCode != http.StatusOK {
				fail("http: %s: status %s", u, resp.Status)
			}
			return string(body)
		}
		if !errors.Is(err, syscall.ECONNREFUSED) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	fail("http: GET %s: %v", u, err)
	return ""
}
