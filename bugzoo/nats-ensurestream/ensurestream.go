// Package ensurestream is what a NATS user testing crash recovery of a
// JetStream stream would write, without knowing any bug: a single
// nats-server (embedded, file store on the simulated disk) and a client over
// the simulated network that makes sure its stream exists whenever it
// connects or reconnects (it adds the stream when the server says it does
// not exist), publishes with acks, records every acknowledgement in
// seedfall's oracle, and after every reconnect (the server restarted) reads
// the acknowledged messages back.
//
// Its properties are about the user's data:
//
//   - "the acknowledged stream survives restarts of the server": whenever
//     the client makes sure of its stream, a stream the server acknowledged
//     creating is there;
//   - "a stream added back survives restarts of the server": the same, for
//     a stream the client had to add back after it found it missing;
//   - "acknowledged messages can be read back": after a reconnect, every
//     acknowledged sequence reads back with its payload.
//
// With -streams N the client spreads its messages over N streams, one after
// another, creating each when it gets to it.
//
// With -first-loss-fails=false the first and the third become observations
// (sim.Sometimes "the server lost the acknowledged stream", "acknowledged
// messages were lost") and only the second fails a run. nats-server 2.9
// fsyncs nothing within a few seconds (its file store syncs every 2
// minutes), so after a power loss both are lost on every 2.9 release; the
// flag is there to see what happens after the client added the stream back.
// It selects properties with the bug in mind, which bugzoo's rules say a
// workload should not: ../nats-3752/README.md says what it shows and why.
//
// The bugzoo folder nats-3752 builds it against the releases with and
// without the bug; only their go.mod files differ.
package ensurestream

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"seedfall.dev/sdk/sim"
)

const (
	stream = "ORDERS"
)

var firstLossFails = true

// Main runs the role its flags name.
func Main() {
	role := flag.String("role", "client", "nats | client")
	addr := flag.String("server", "nats://nats:4222", "the server's URL (client)")
	msgs := flag.Int("msgs", 200, "messages the client publishes")
	pause := flag.Duration("pause", 100*time.Millisecond, "mean pause between two publishes (client)")
	streams := flag.Int("streams", 1, "streams the client spreads its messages over, one after another (client)")
	flag.BoolVar(&firstLossFails, "first-loss-fails", true, "a lost stream or lost messages fail the run (false: only a stream lost after it was added back does)")
	flag.Parse()
	switch *role {
	case "nats":
		runServer()
	case "client":
		runClient(*addr, *msgs, *pause, *streams)
	default:
		fmt.Fprintf(os.Stderr, "ensurestream: unknown -role %q\n", *role)
		os.Exit(2)
	}
}

type logger struct{}

func (logger) Noticef(f string, v ...any) {
	if strings.Contains(f, "Restored") || strings.Contains(f, "Starting restore") {
		fmt.Printf("[INF] "+f+"\n", v...)
	}
}
func (logger) Warnf(f string, v ...any)  { fmt.Printf("[WRN] "+f+"\n", v...) }
func (logger) Errorf(f string, v ...any) { fmt.Printf("[ERR] "+f+"\n", v...) }
func (logger) Fatalf(f string, v ...any) { fmt.Printf("[FTL] "+f+"\n", v...); os.Exit(1) }
func (logger) Debugf(string, ...any)     {}
func (logger) Tracef(string, ...any)     {}

// runServer starts one JetStream server with its file store on /data/js.
// nats-server 2.9 has no sync_interval option: the file store hands every
// write to the OS at once and fsyncs its message blocks every 60 s.
func runServer() {
	opts := &server.Options{
		ServerName:         "nats",
		Host:               "0.0.0.0",
		Port:               4222,
		JetStream:          true,
		StoreDir:           "/data/js",
		JetStreamMaxMemory: 16 << 20,
		JetStreamMaxStore:  256 << 20,
		NoSigs:             true,
		MaxPayload:         4096,
		ClientAdvertise:    "nats:4222",
	}
	s, err := server.NewServer(opts)
	if err != nil {
		fmt.Println("new server:", err)
		os.Exit(1)
	}
	s.SetLoggerV2(logger{}, false, false, false)
	s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		fmt.Println("server not ready")
		os.Exit(1)
	}
	fmt.Println("nats: ready")
	s.WaitForShutdown()
}

// ---- the oracle: what the client knows was acknowledged -----------------

// ack is one acknowledged publish: the stream sequence the server
// acknowledged it with, and its payload.
type ack struct {
	stream  string
	seq     uint64
	payload string
}

func loadAcked() []ack {
	var l []ack
	if raw, ok := sim.Recall("acked"); ok {
		for _, kv := range strings.Fields(string(raw)) {
			name, rest, _ := strings.Cut(kv, "/")
			s, p, _ := strings.Cut(rest, "=")
			n, _ := strconv.ParseUint(s, 10, 64)
			l = append(l, ack{name, n, p})
		}
	}
	return l
}

func saveAcked(l []ack) {
	var b strings.Builder
	for _, a := range l {
		fmt.Fprintf(&b, "%s/%d=%s ", a.stream, a.seq, a.payload)
	}
	sim.Remember("acked", []byte(b.String()))
}

func recallInt(key string) int {
	raw, ok := sim.Recall(key)
	if !ok {
		return 0
	}
	n, _ := strconv.Atoi(string(raw))
	return n
}

func remember(key string, n int) { sim.Remember(key, []byte(strconv.Itoa(n))) }

// ---- the client ---------------------------------------------------------

// streamName is the k-th stream of n (the subject prefix is its name in
// lower case): ORDERS when there is one, ORDERS-1, ORDERS-2, ... otherwise.
func streamName(k, n int) string {
	if n == 1 {
		return stream
	}
	return fmt.Sprintf("%s-%d", stream, k)
}

func runClient(url string, msgs int, pause time.Duration, streams int) {
	reconnected := make(chan struct{}, 1)
	nc, err := nats.Connect(url,
		nats.RetryOnFailedConnect(true), nats.MaxReconnects(-1),
		nats.ReconnectWait(20*time.Millisecond), nats.Timeout(500*time.Millisecond),
		nats.ReconnectHandler(func(*nats.Conn) {
			select {
			case reconnected <- struct{}{}:
			default:
			}
		}))
	if err != nil {
		fmt.Println("connect:", err)
		os.Exit(1)
	}
	js, err := nc.JetStream(nats.MaxWait(300 * time.Millisecond))
	if err != nil {
		fmt.Println("jetstream:", err)
		os.Exit(1)
	}
	addsKey := func(name string) string {
		if name == stream {
			return "stream adds"
		}
		return "stream adds " + name
	}

	// ensure makes sure the stream exists, adding it when the server says
	// it does not. A stream whose creation the server acknowledged must be
	// there, and so must one the client had to add back.
	ensure := func(name, why string) {
		for {
			_, err := js.StreamInfo(name)
			if err != nil && !errors.Is(err, nats.ErrStreamNotFound) {
				fmt.Printf("client: %s: stream info: %v\n", why, err)
				time.Sleep(20 * time.Millisecond) // no answer: the server may be restarting
				continue
			}
			found := err == nil
			adds := recallInt(addsKey(name))
			if adds > 0 {
				details := map[string]any{"stream": name, "when": why, "acknowledged adds of the stream": adds, "acknowledged messages": len(loadAcked())}
				if firstLossFails {
					sim.Always(found, "the acknowledged stream survives restarts of the server", details)
				} else {
					sim.Sometimes(!found, "the server lost the acknowledged stream", details)
				}
				if adds > 1 {
					sim.Always(found, "a stream added back survives restarts of the server", details)
				}
			}
			if found {
				return
			}
			if adds > 0 {
				fmt.Printf("client: %s: the server says stream %s does not exist (added %d times); adding it back\n", why, name, adds)
			}
			_, err = js.AddStream(&nats.StreamConfig{Name: name, Subjects: []string{strings.ToLower(name) + ".>"}, Storage: nats.FileStorage, Replicas: 1})
			if err == nil || errors.Is(err, nats.ErrStreamNameAlreadyInUse) {
				remember(addsKey(name), adds+1)
				return
			}
			fmt.Printf("client: %s: add stream: %v\n", why, err)
			time.Sleep(20 * time.Millisecond)
		}
	}
	// check reads every acknowledged message back.
	check := func() {
		acked := loadAcked()
		lost, first := 0, ""
		for _, a := range acked {
			var m *nats.RawStreamMsg
			var err error
			for try := 0; try < 20; try++ {
				m, err = js.GetMsg(a.stream, a.seq)
				if err == nil || errors.Is(err, nats.ErrMsgNotFound) || errors.Is(err, nats.ErrStreamNotFound) {
					break
				}
				time.Sleep(20 * time.Millisecond)
			}
			if err != nil || string(m.Data) != a.payload {
				if lost == 0 {
					first = fmt.Sprintf("%s seq %d (%s): %v", a.stream, a.seq, a.payload, err)
					if err == nil {
						first = fmt.Sprintf("%s seq %d (%s): reads %q", a.stream, a.seq, a.payload, m.Data)
					}
				}
				lost++
			}
		}
		details := map[string]any{"acknowledged": len(acked), "lost": lost, "first lost": first}
		if firstLossFails {
			sim.Always(lost == 0, "acknowledged messages can be read back", details)
		} else {
			sim.Sometimes(lost > 0, "acknowledged messages were lost", details)
		}
		fmt.Printf("client: after a reconnect, %d acknowledged messages, %d not read back\n", len(acked), lost)
	}

	// cur is the stream the client publishes to now; after a reconnect it
	// makes sure of every stream it created so far.
	cur := 1
	ensureAll := func(why string) {
		for k := 1; k <= cur; k++ {
			ensure(streamName(k, streams), why)
		}
	}
	ensure(streamName(cur, streams), "connected")
	sim.SetupComplete(nil)
	fmt.Println("client: stream", streamName(cur, streams), "ready")

	acked := loadAcked()
	for i := 1; i <= msgs; i++ {
		if k := 1 + (i-1)*streams/msgs; k != cur {
			cur = k
			ensure(streamName(cur, streams), "new stream")
		}
		name := streamName(cur, streams)
		payload := fmt.Sprintf("m%d", i)
		var a *nats.PubAck
		for {
			select {
			case <-reconnected: // the server restarted: make sure of the streams, read back what was acknowledged
				ensureAll("reconnected")
				check()
			default:
			}
			var err error
			a, err = js.Publish(fmt.Sprintf("%s.%d", strings.ToLower(name), i%5), []byte(payload))
			if err == nil {
				break
			}
			fmt.Printf("client: publish %s: %v\n", payload, err)
			ensure(name, "publish: "+err.Error())
			time.Sleep(20 * time.Millisecond)
		}
		acked = append(acked, ack{name, a.Sequence, payload})
		saveAcked(acked)
		time.Sleep(pause/2 + time.Duration(sim.RandomIntN(int(pause/time.Millisecond)+1))*time.Millisecond)
	}
	select {
	case <-reconnected:
		ensureAll("reconnected")
		check()
	default:
	}
	sim.Reachable("the client published every message", nil)
	fmt.Printf("client: %d messages acknowledged to %d streams\n", msgs, streams)
	nc.Close()
}
