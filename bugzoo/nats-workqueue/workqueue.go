// Package workqueue is what a NATS user testing crash recovery of a
// JetStream work queue would write, without knowing any bug: a single
// nats-server (embedded, file store on the simulated disk, sync_interval:
// always) and a client over the simulated network that publishes jobs to a
// WorkQueue stream and has a durable pull consumer take and acknowledge
// each one, so the queue drains over and over. Its properties are about
// the user's data: a publish acknowledgement's sequence is never handed out
// twice (the stream's sequence never goes back), and the client goes on only
// once the job it published was delivered to the worker and acknowledged.
//
// The bugzoo folders nats-6600 and nats-6881 build it against the releases
// with and without each bug; only their go.mod files differ. Two flags are
// off by default (nats-6600 passes neither): -clean-restarts has the server
// node shut the embedded server down cleanly and start it again now and
// then, as a maintenance window or a rolling upgrade does, and -job-pause
// sets the client's pause between jobs (by default 1 to 5 ms) for runs of
// several virtual minutes. -sync-always=false runs the server at
// nats-server's default durability (a sync every 2 minutes) instead of
// sync_always, which nats-server documents as losing what was acknowledged
// since the last sync on a power loss.
package workqueue

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"seedfall.dev/sdk/sim"
)

const (
	stream   = "JOBS"
	subject  = "jobs.new"
	consumer = "workers"
)

// Main runs the role its flags name.
func Main() {
	role := flag.String("role", "client", "nats | client")
	addr := flag.String("server", "nats://nats:4222", "the server's URL (client)")
	jobs := flag.Int("jobs", 100, "jobs the client publishes")
	restarts := flag.Duration("clean-restarts", 0, "the server is shut down cleanly and started again about this often (0: never)")
	pause := flag.Duration("job-pause", 0, "the client's pause between jobs (0: 1 to 5 ms)")
	syncAlways := flag.Bool("sync-always", true, "the server syncs every write (sync_always); false: nats-server's default sync interval")
	flag.Parse()
	switch *role {
	case "nats":
		runServer(*restarts, *syncAlways)
	case "client":
		runClient(*addr, *jobs, *pause)
	default:
		fmt.Fprintf(os.Stderr, "workqueue: unknown -role %q\n", *role)
		os.Exit(2)
	}
}

type logger struct{}

func (logger) Noticef(string, ...any)    {}
func (logger) Warnf(f string, v ...any)  { fmt.Printf("[WRN] "+f+"\n", v...) }
func (logger) Errorf(f string, v ...any) { fmt.Printf("[ERR] "+f+"\n", v...) }
func (logger) Fatalf(f string, v ...any) { fmt.Printf("[FTL] "+f+"\n", v...); os.Exit(1) }
func (logger) Debugf(string, ...any)     {}
func (logger) Tracef(string, ...any)     {}

func serverOptions(syncAlways bool) *server.Options {
	return &server.Options{
		ServerName:         "nats",
		Host:               "0.0.0.0",
		Port:               4222,
		JetStream:          true,
		StoreDir:           "/data/js",
		SyncAlways:         syncAlways,
		JetStreamMaxMemory: 16 << 20,
		JetStreamMaxStore:  256 << 20,
		NoSigs:             true,
		MaxPayload:         4096,
		ClientAdvertise:    "nats:4222",
	}
}

func startServer(syncAlways bool) *server.Server {
	s, err := server.NewServer(serverOptions(syncAlways))
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
	return s
}

// runServer runs the embedded server. With every > 0 it also shuts the
// server down cleanly (Shutdown, as on SIGTERM) after a random stretch of
// every/2 to 3*every/2 and starts it again on the same store, for the life
// of the instance.
func runServer(every time.Duration, syncAlways bool) {
	s := startServer(syncAlways)
	if every <= 0 {
		s.WaitForShutdown()
		return
	}
	for n := 1; ; n++ {
		time.Sleep(every/2 + time.Duration(sim.RandomIntN(int(every/time.Millisecond)+1))*time.Millisecond)
		s.Shutdown()
		s.WaitForShutdown()
		fmt.Printf("nats: clean shutdown %d\n", n)
		s = startServer(syncAlways)
	}
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

func runClient(url string, jobs int, pause time.Duration) {
	nc, err := nats.Connect(url,
		nats.RetryOnFailedConnect(true), nats.MaxReconnects(-1),
		nats.ReconnectWait(20*time.Millisecond), nats.Timeout(500*time.Millisecond))
	if err != nil {
		fmt.Println("connect:", err)
		os.Exit(1)
	}
	js, _ := jetstream.New(nc)
	// call retries f until the server answers: it may be down, restarting.
	call := func(f func(ctx context.Context) error) {
		for {
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			err := f(ctx)
			cancel()
			if err == nil {
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	call(func(ctx context.Context) error {
		_, err := js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
			Name: stream, Subjects: []string{"jobs.>"}, Storage: jetstream.FileStorage,
			Retention: jetstream.WorkQueuePolicy, Replicas: 1,
		})
		return err
	})
	var cons jetstream.Consumer
	call(func(ctx context.Context) error {
		c, err := js.CreateOrUpdateConsumer(ctx, stream, jetstream.ConsumerConfig{Durable: consumer, AckPolicy: jetstream.AckExplicitPolicy, AckWait: 100 * time.Millisecond})
		cons = c
		return err
	})
	sim.SetupComplete(nil)
	fmt.Println("client: stream and consumer ready")

	// The oracle: the highest sequence a publish was acknowledged with.
	highest := recallInt("highest acked seq")
	for i := 1; i <= jobs; i++ {
		payload := fmt.Sprintf("job-%d", i)
		var ack *jetstream.PubAck
		call(func(ctx context.Context) error {
			a, err := js.Publish(ctx, subject, []byte(payload))
			ack = a
			return err
		})
		seq := int(ack.Sequence)
		sim.Always(seq > highest, "a publish acknowledgement's sequence is never handed out twice",
			map[string]any{"job": payload, "acknowledged seq": seq, "highest acknowledged before": highest})
		if seq > highest {
			highest = seq
			remember("highest acked seq", highest)
		}
		// The worker takes the job and acknowledges it: a work queue then
		// removes it, so the queue empties after every job. A job whose ack
		// never reached the server comes again after AckWait; one whose ack
		// did (its answer lost to a crash) is done.
		for delivered := false; !delivered; {
			batch, err := cons.Fetch(1, jetstream.FetchMaxWait(200*time.Millisecond))
			if err != nil {
				if errors.Is(err, jetstream.ErrConsumerNotFound) {
					fmt.Println("client: the server says the consumer does not exist")
				}
				time.Sleep(20 * time.Millisecond)
				continue
			}
			for m := range batch.Messages() {
				ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
				m.DoubleAck(ctx)
				if string(m.Data()) == payload {
					delivered = true
				}
				cancel()
			}
		}
		if pause > 0 {
			time.Sleep(pause)
		} else {
			time.Sleep(time.Duration(1+sim.RandomIntN(5)) * time.Millisecond)
		}
	}
	sim.Reachable("every job delivered", nil)
	fmt.Printf("client: %d jobs published and delivered, highest seq %d\n", jobs, highest)
	nc.Close()
}
