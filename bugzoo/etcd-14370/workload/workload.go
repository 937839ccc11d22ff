// Package workload is what a user of a single-member etcd would write to
// test it against crashes, without knowing any bug: one etcd server
// (go.etcd.io/etcd/server/v3/embed, its data on the node's simulated disk)
// and a client (go.etcd.io/etcd/client/v3) over the simulated network. The
// client puts unique keys one at a time and records each acknowledged put
// in seedfall's oracle; the server crashes and restarts. Its property is
// about the user's data: every acknowledged put can be read back.
//
// ../affected and ../fixed build it against etcd v3.5.4, the release with
// etcd issue 14370, and v3.5.5, the release that fixed it.
package workload

import (
	"context"
	"flag"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"

	"seedfall.dev/sdk/sim"
)

// Main runs the role its flags name.
func Main() {
	role := flag.String("role", "client", "etcd | client")
	puts := flag.Int("puts", 100, "keys the client puts")
	logLevel := flag.String("log", "error", "the server's log level")
	flag.Parse()
	switch *role {
	case "etcd":
		runServer(*logLevel)
	case "client":
		runClient(*puts)
	default:
		fmt.Fprintf(os.Stderr, "etcd-14370: unknown -role %q\n", *role)
		os.Exit(2)
	}
}

func mustURL(s string) url.URL {
	u, err := url.Parse(s)
	if err != nil {
		panic(err)
	}
	return *u
}

// runServer is a single-member cluster with etcd's defaults, as a user
// would start one from a program: its own data folder, the client port
// 2379 for everyone on the network, the peer port for itself.
func runServer(logLevel string) {
	cfg := embed.NewConfig()
	cfg.Name = "etcd"
	cfg.Dir = "/data/etcd"
	cfg.LogLevel = logLevel
	cfg.LCUrls = []url.URL{mustURL("http://0.0.0.0:2379")}
	cfg.ACUrls = []url.URL{mustURL("http://etcd:2379")}
	cfg.LPUrls = []url.URL{mustURL("http://0.0.0.0:2380")}
	cfg.APUrls = []url.URL{mustURL("http://etcd:2380")}
	cfg.InitialCluster = "etcd=http://etcd:2380"
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		fmt.Println("etcd: start:", err)
		os.Exit(1)
	}
	select {
	case <-e.Server.ReadyNotify():
		fmt.Println("etcd: ready")
	case <-time.After(60 * time.Second):
		fmt.Println("etcd: not ready after 60 s")
		os.Exit(1)
	}
	err = <-e.Err()
	fmt.Println("etcd: stopped:", err)
	os.Exit(1)
}

func runClient(puts int) {
	cli, err := clientv3.New(clientv3.Config{
		Endpoints:   []string{"etcd:2379"},
		DialTimeout: 5 * time.Second,
		Logger:      zap.NewNop(),
	})
	if err != nil {
		fmt.Println("client: connect:", err)
		os.Exit(1)
	}
	defer cli.Close()
	sim.SetupComplete(nil)

	acked := map[int]bool{}
	for i := 1; i <= puts; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_, err := cli.Put(ctx, key(i), strconv.Itoa(i))
		cancel()
		if err == nil {
			acked[i] = true
		}
		time.Sleep(time.Duration(10+sim.RandomIntN(40)) * time.Millisecond)
	}
	sim.Reachable("the client put every key", map[string]any{"acknowledged": len(acked)})

	// Read every key back, retrying while the server restarts.
	for attempt := 0; attempt < 100; attempt++ {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		resp, err := cli.Get(ctx, "key/", clientv3.WithPrefix())
		cancel()
		if err != nil {
			time.Sleep(200 * time.Millisecond)
			continue
		}
		found := map[string]bool{}
		for _, kv := range resp.Kvs {
			found[string(kv.Key)] = true
		}
		lost, first := 0, "none"
		for i := 1; i <= puts; i++ {
			if acked[i] && !found[key(i)] {
				if lost == 0 {
					first = key(i)
				}
				lost++
			}
		}
		sim.Always(lost == 0, "every acknowledged put can be read back",
			map[string]any{"acknowledged": len(acked), "lost": lost, "first lost": first})
		sim.Reachable("the client read every key back", map[string]any{"keys": len(resp.Kvs)})
		fmt.Printf("client: %d puts acknowledged, %d keys read back, %d lost\n", len(acked), len(resp.Kvs), lost)
		return
	}
	fmt.Println("client: the server never answered the final read")
}

func key(i int) string { return fmt.Sprintf("key/%04d", i) }
