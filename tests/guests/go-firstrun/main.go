// A plain Go program that fails the way real programs fail on their first
// run under seedfall (server/cli/tests/first_hour.rs): each -mode is one.
package main

import (
	"flag"
	"fmt"
	"net"
	"os"
	"time"
)

func main() {
	mode := flag.String("mode", "", "deadlock | serve-late | dial | lookup | config-file | udp | wait")
	to := flag.String("to", "server:7000", "address to dial")
	flag.Parse()
	switch *mode {
	case "deadlock":
		// Waits on a channel nobody sends on.
		ch := make(chan int)
		<-ch
	case "serve-late":
		// A server that takes its time before it listens.
		time.Sleep(500 * time.Millisecond)
		l, err := net.Listen("tcp", ":7000")
		if err != nil {
			panic(err)
		}
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	case "dial", "lookup":
		// Connects once, at start, without retrying.
		c, err := net.Dial("tcp", *to)
		if err != nil {
			panic(err)
		}
		c.Close()
	case "config-file":
		// Reads a file it expects the machine to have.
		if _, err := os.ReadFile("/srv/app/app.conf"); err != nil {
			panic(err)
		}
	case "udp":
		// Datagram sockets are not simulated.
		c, err := net.Dial("udp", *to)
		if err != nil {
			panic(err)
		}
		if _, err := c.Write([]byte("ping")); err != nil {
			panic(err)
		}
	case "wait":
		// Waits for an answer that never comes, without deadlocking:
		// a timer keeps the runtime awake.
		for {
			time.Sleep(time.Second)
		}
	default:
		fmt.Fprintf(os.Stderr, "unknown -mode %q\n", *mode)
		os.Exit(2)
	}
}
