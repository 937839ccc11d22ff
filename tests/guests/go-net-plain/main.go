// go-net-plain is a test guest for the net overlay (sdk/go/overlay): a
// plain net/http program with no seedfall import at all. Built normally for
// wasip1 its sockets are Go's in-memory fake network, so the client cannot
// reach a server on another node; built with
// `go build -overlay $(sdk/go/overlay/make-overlay.sh OUT)` the same code
// talks through the host's sockets.
//
//	-mode server -port P        GET /echo?x=V answers V
//	-mode client -to H:P -n N   N checked GETs, then "http ok n=N"
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"syscall"
	"time"
)

func main() {
	mode := flag.String("mode", "", "server | client")
	port := flag.Int("port", 8080, "port to listen on (server)")
	to := flag.String("to", "server:8080", "host:port to request (client)")
	n := flag.Int("n", 5, "requests (client)")
	flag.Parse()

	switch *mode {
	case "server":
		http.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, r.URL.Query().Get("x"))
		})
		fmt.Printf("http server listening on :%d\n", *port)
		fail("serve: %v", http.ListenAndServe(fmt.Sprintf(":%d", *port), nil))
	case "client":
		for i := 0; i < *n; i++ {
			want := fmt.Sprintf("value-%d", i)
			if got := get("http://" + *to + "/echo?x=" + url.QueryEscape(want)); got != want {
				fail("request %d answered %q, want %q", i, got, want)
			}
		}
		fmt.Printf("http ok n=%d\n", *n)
	default:
		fail("unknown mode %q", *mode)
	}
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, format+"\n", args...)
	os.Exit(1)
}

// get GETs u, retrying while the connection is refused (the server may not
// be listening yet), and returns the body.
func get(u string) string {
	var err error
	for attempt := 0; attempt < 50; attempt++ {
		var resp *http.Response
		if resp, err = http.Get(u); err == nil {
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil {
				fail("read body: %v", err)
			}
			if resp.StatusCode != http.StatusOK {
				fail("GET %s: status %s", u, resp.Status)
			}
			return string(body)
		}
		if !errors.Is(err, syscall.ECONNREFUSED) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	fail("GET %s: %v", u, err)
	return ""
}
