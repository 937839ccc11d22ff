// Package workload is a 3-node NATS JetStream cluster and a client, as a
// user testing it against process kills would write them, without knowing
// any bug (the test Jepsen ran against NATS 2.10.20 to 2.12.1): three
// nats-server nodes (embedded, clustered JetStream, file store on each
// node's simulated disk, sync_interval: always) route to each other over
// the simulated network; a client creates one stream replicated on all
// three and publishes unique values to it, recording each acknowledged one
// in seedfall's oracle. Its properties are about the user's data: the
// cluster never answers that the acknowledged stream does not exist, and
// every acknowledged value can be read back at the end.
//
// examples/natscluster/affected and fixed build it against the release
// with nats-server issue 6888 and the release that fixed it.
package workload

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"seedfall.dev/sdk/sim"
)

const (
	stream  = "jepsen-stream"
	subject = "jepsen.0"
	// Nodes of the cluster: the instances nats#1..nats#3 of the config,
	// which the simulated network names nats-1..nats-3.
	nodes = 3
)

// Main runs the role its flags name.
func Main() {
	role := flag.String("role", "client", "nats | client")
	values := flag.Int("values", 200, "values the client publishes")
	flag.Parse()
	switch *role {
	case "nats":
		runServer()
	case "client":
		runClient(*values)
	default:
		fmt.Fprintf(os.Stderr, "natscluster: unknown -role %q\n", *role)
		os.Exit(2)
	}
}

type logger struct{ name string }

func (logger) Noticef(string, ...any)      {}
func (l logger) Warnf(f string, v ...any)  { fmt.Printf("[WRN] "+f+"\n", v...) }
func (l logger) Errorf(f string, v ...any) { fmt.Printf("[ERR] "+f+"\n", v...) }
func (l logger) Fatalf(f string, v ...any) { fmt.Printf("[FTL] "+f+"\n", v...); os.Exit(1) }
func (logger) Debugf(string, ...any)       {}
func (logger) Tracef(string, ...any)       {}

func runServer() {
	// SEEDFALL_NODE is this instance's name, "nats#2"; its host is nats-2.
	name := strings.ReplaceAll(os.Getenv("SEEDFALL_NODE"), "#", "-")
	var routes []*url.URL
	for i := 1; i <= nodes; i++ {
		routes = append(routes, &url.URL{Scheme: "nats", Host: fmt.Sprintf("nats-%d:6222", i)})
	}
	opts := &server.Options{
		ServerName:         name,
		Host:               "0.0.0.0",
		Port:               4222,
		JetStream:          true,
		StoreDir:           "/data/js",
		SyncAlways:         true,
		JetStreamMaxMemory: 16 << 20,
		JetStreamMaxStore:  256 << 20,
		NoSigs:             true,
		MaxPayload:         4096,
		Cluster:            server.ClusterOpts{Name: "jepsen", Host: "0.0.0.0", Port: 6222, Advertise: name + ":6222"},
		Routes:             routes,
	}
	s, err := server.NewServer(opts)
	if err != nil {
		fmt.Println("new server:", err)
		os.Exit(1)
	}
	s.SetLoggerV2(logger{name}, false, false, false)
	s.Start()
	if !s.ReadyForConnections(30 * time.Second) {
		fmt.Println("server not ready")
		os.Exit(1)
	}
	fmt.Println(name + ": ready")
	s.WaitForShutdown()
}

func acked() map[int]bool {
	m := map[int]bool{}
	if raw, ok := sim.Recall("acked"); ok {
		for _, f := range strings.Fields(string(raw)) {
			n, _ := strconv.Atoi(f)
			m[n] = true
		}
	}
	return m
}

// notFound says whether the cluster answered that the stream does not
// exist: an answer of its meta leader, not a timeout.
func notFound(err error) bool {
	var apiErr *jetstream.APIError
	return errors.Is(err, jetstream.ErrStreamNotFound) || (errors.As(err, &apiErr) && apiErr.ErrorCode == jetstream.JSErrCodeStreamNotFound)
}

func runClient(values int) {
	var urls []string
	for i := 1; i <= nodes; i++ {
		urls = append(urls, fmt.Sprintf("nats://nats-%d:4222", i))
	}
	nc, err := nats.Connect(strings.Join(urls, ","),
		nats.RetryOnFailedConnect(true), nats.MaxReconnects(-1),
		nats.ReconnectWait(50*time.Millisecond), nats.Timeout(time.Second))
	if err != nil {
		fmt.Println("connect:", err)
		os.Exit(1)
	}
	js, _ := jetstream.New(nc)
	created := false
	if _, ok := sim.Recall("created"); ok {
		created = true
	}
	// check records the cluster's answer about the stream, once it exists.
	check := func(err error, when string, n int) {
		if created {
			sim.Always(!notFound(err), "the cluster never forgets the acknowledged stream",
				map[string]any{"when": when, "acknowledged values": n, "error": fmt.Sprint(err)})
		}
	}
	for !created {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_, err := js.CreateStream(ctx, jetstream.StreamConfig{
			Name: stream, Subjects: []string{subject}, Storage: jetstream.FileStorage, Replicas: nodes,
		})
		cancel()
		if err == nil || errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
			created = true
			sim.Remember("created", []byte("yes"))
			fmt.Println("client: created stream", stream)
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	sim.SetupComplete(nil)

	done := acked()
	var log strings.Builder
	for v := range done {
		fmt.Fprintf(&log, "%d ", v)
	}
	for v := 1; v <= values; v++ {
		if done[v] {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, err := js.Publish(ctx, subject, []byte(strconv.Itoa(v)))
		cancel()
		if err == nil {
			done[v] = true
			fmt.Fprintf(&log, "%d ", v)
			sim.Remember("acked", []byte(log.String()))
		} else {
			// An unacknowledged value is not a loss; ask about the stream.
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			_, serr := js.Stream(ctx, stream)
			cancel()
			check(serr, "after a failed publish", len(done))
		}
		time.Sleep(time.Duration(20+sim.RandomIntN(80)) * time.Millisecond)
	}
	sim.Reachable("the client published every value", nil)

	// Read every value back, retrying while the cluster recovers.
	for attempt := 0; attempt < 100; attempt++ {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		st, err := js.Stream(ctx, stream)
		check(err, "reading back", len(done))
		if err != nil {
			cancel()
			time.Sleep(200 * time.Millisecond)
			continue
		}
		info, err := st.Info(ctx)
		if err != nil {
			cancel()
			time.Sleep(200 * time.Millisecond)
			continue
		}
		found := map[int]bool{}
		ok := true
		for seq := info.State.FirstSeq; seq <= info.State.LastSeq && seq > 0; seq++ {
			m, err := st.GetMsg(ctx, seq)
			if err != nil {
				if errors.Is(err, jetstream.ErrMsgNotFound) {
					continue
				}
				ok = false
				break
			}
			n, _ := strconv.Atoi(string(m.Data))
			found[n] = true
		}
		cancel()
		if !ok {
			time.Sleep(200 * time.Millisecond)
			continue
		}
		lost := 0
		for v := range done {
			if !found[v] {
				lost++
			}
		}
		sim.Always(lost == 0, "every acknowledged value can be read back",
			map[string]any{"acknowledged": len(done), "lost": lost, "stream last seq": info.State.LastSeq})
		fmt.Printf("client: %d values acknowledged, %d read back, %d lost\n", len(done), len(found), lost)
		nc.Close()
		return
	}
	fmt.Println("client: the cluster never answered the final read")
	nc.Close()
}
