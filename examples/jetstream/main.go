// jetstream runs a real NATS JetStream server (nats-server, embedded, file
// store, SyncAlways) and a real nats.go client over seedfall's simulated
// network, and checks the promise JetStream makes with sync_interval: always:
// a message whose publish was acknowledged, and a stream configuration whose
// create or update was acknowledged, survive a crash of the server.
//
// Two roles of one program (seedfall.json runs one node of each):
//
//   - nats: starts the server on /data/js. When it starts after a crash, it
//     first checks what it recovered against the client's acknowledgements
//     (kept in seedfall's oracle, which survives crashes), through an
//     in-process connection, then serves.
//   - client: creates the stream ORDERS once, then publishes with acks and,
//     every few messages, updates the stream's configuration (its
//     description and max_msgs_per_subject), recording each
//     acknowledgement in the oracle before it moves on.
//
// Nothing here is patched: the server and client are the released modules,
// built for GOOS=wasip1 with seedfall's network overlay ("net": true).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"seedfall.dev/sdk/sim"
)

const (
	stream  = "ORDERS"
	subject = "orders"
)

func main() {
	role := flag.String("role", "client", "nats | client")
	addr := flag.String("server", "nats://nats:4222", "the server's URL (client)")
	msgs := flag.Int("msgs", 100, "messages the client publishes")
	every := flag.Int("update-every", 4, "update the stream config after every N messages (0: never)")
	flag.Parse()
	switch *role {
	case "nats":
		runServer()
	case "client":
		runClient(*addr, *msgs, *every)
	default:
		fmt.Fprintf(os.Stderr, "jetstream: unknown -role %q\n", *role)
		os.Exit(2)
	}
}

// ---- the oracle: what the client knows was acknowledged -----------------

// acked maps stream sequence -> payload of every acknowledged publish.
func loadAcked() map[uint64]string {
	m := map[uint64]string{}
	if raw, ok := sim.Recall("acked"); ok {
		for _, kv := range strings.Fields(string(raw)) {
			s, p, _ := strings.Cut(kv, "=")
			n, _ := strconv.ParseUint(s, 10, 64)
			m[n] = p
		}
	}
	return m
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

// The config revision r: description "rev r", max_msgs_per_subject 1000+r.
func config(rev int) jetstream.StreamConfig {
	return jetstream.StreamConfig{
		Name:              stream,
		Subjects:          []string{subject + ".>"},
		Storage:           jetstream.FileStorage,
		Description:       fmt.Sprintf("rev %d", rev),
		MaxMsgsPerSubject: int64(1000 + rev),
	}
}

// ---- the server ---------------------------------------------------------

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

func runServer() {
	opts := &server.Options{
		ServerName:         "nats",
		Host:               "0.0.0.0",
		Port:               4222,
		JetStream:          true,
		StoreDir:           "/data/js",
		SyncAlways:         true,
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
	if _, ok := sim.Recall("created"); ok {
		check(s)
	}
	s.WaitForShutdown()
}

// check compares what the server recovered with what was acknowledged.
func check(s *server.Server) {
	nc, err := nats.Connect("", nats.InProcessServer(s))
	if err != nil {
		fmt.Println("check: in-process connect:", err)
		os.Exit(1)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	acked := loadAcked()
	rev, pending := recallInt("rev"), recallInt("rev.pending")
	st, err := js.Stream(ctx, stream)
	sim.Always(err == nil, "the acknowledged stream survives crashes",
		map[string]any{"error": fmt.Sprint(err), "acknowledged messages": len(acked), "config rev": rev})
	if err != nil {
		return
	}
	info, err := st.Info(ctx)
	if err != nil {
		fmt.Println("check: stream info:", err)
		return
	}
	got := info.Config.Description
	ok := got == fmt.Sprintf("rev %d", rev) || (pending > rev && got == fmt.Sprintf("rev %d", pending))
	sim.Always(ok, "the acknowledged stream configuration survives crashes",
		map[string]any{"acknowledged": fmt.Sprintf("rev %d", rev), "in flight": pending, "found": got})
	seqs := make([]uint64, 0, len(acked))
	for q := range acked {
		seqs = append(seqs, q)
	}
	sort.Slice(seqs, func(i, j int) bool { return seqs[i] < seqs[j] })
	lost := 0
	first := uint64(0)
	for _, q := range seqs {
		m, err := st.GetMsg(ctx, q)
		if err != nil || string(m.Data) != acked[q] {
			if lost == 0 {
				first = q
			}
			lost++
		}
	}
	sim.Always(lost == 0, "acknowledged messages survive crashes",
		map[string]any{"acknowledged": len(acked), "lost": lost, "first lost seq": first,
			"stream last seq": info.State.LastSeq, "stream msgs": info.State.Msgs})
	fmt.Printf("check: stream %s recovered with %d msgs (last seq %d), config %q; %d acknowledged, %d lost\n",
		stream, info.State.Msgs, info.State.LastSeq, got, len(acked), lost)
}

// ---- the client ---------------------------------------------------------

func runClient(url string, msgs, every int) {
	nc, err := nats.Connect(url,
		nats.RetryOnFailedConnect(true), nats.MaxReconnects(-1),
		nats.ReconnectWait(20*time.Millisecond), nats.Timeout(500*time.Millisecond))
	if err != nil {
		fmt.Println("connect:", err)
		os.Exit(1)
	}
	js, _ := jetstream.New(nc)
	call := func(f func(ctx context.Context) error) {
		for {
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			err := f(ctx)
			cancel()
			if err == nil {
				return
			}
			if errors.Is(err, jetstream.ErrStreamNotFound) {
				fmt.Println("client: the server says the stream does not exist")
			}
			time.Sleep(20 * time.Millisecond)
		}
	}

	if _, ok := sim.Recall("created"); !ok {
		call(func(ctx context.Context) error {
			_, err := js.CreateStream(ctx, config(1))
			return err
		})
		remember("rev", 1)
		sim.Remember("created", []byte("yes"))
		fmt.Println("client: created stream", stream)
	}
	sim.SetupComplete(nil)

	acked := loadAcked()
	var log strings.Builder
	for _, q := range sortedKeys(acked) {
		fmt.Fprintf(&log, "%d=%s ", q, acked[q])
	}
	rev := recallInt("rev")
	for i := 1; i <= msgs; i++ {
		payload := fmt.Sprintf("m%d", i)
		var ack *jetstream.PubAck
		call(func(ctx context.Context) error {
			a, err := js.Publish(ctx, fmt.Sprintf("%s.%d", subject, i%5), []byte(payload))
			ack = a
			return err
		})
		fmt.Fprintf(&log, "%d=%s ", ack.Sequence, payload)
		sim.Remember("acked", []byte(log.String()))
		if every > 0 && i%every == 0 {
			next := rev + 1
			remember("rev.pending", next)
			call(func(ctx context.Context) error {
				_, err := js.UpdateStream(ctx, config(next))
				return err
			})
			rev = next
			remember("rev", rev)
		}
		time.Sleep(time.Duration(1+sim.RandomIntN(10)) * time.Millisecond)
	}
	sim.Reachable("the client published every message", nil)
	fmt.Printf("client: %d messages acknowledged, config at rev %d\n", msgs, rev)
	nc.Close()
}

func sortedKeys(m map[uint64]string) []uint64 {
	ks := make([]uint64, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Slice(ks, func(i, j int) bool { return ks[i] < ks[j] })
	return ks
}
