// go-raft: a 3-node github.com/hashicorp/raft cluster, unmodified, with
// github.com/hashicorp/raft-boltdb/v2 as each node's durable log and stable
// store, over the simulated network (built with the net and storage
// overlays). Run as three replicas of one node (raft#1..#3, reachable as
// raft-1..raft-3).
//
// Whoever leads applies entries; every entry whose Apply returned without
// error is committed, and recorded in the test oracle (which survives the
// nodes' crashes). The property: a leader's log holds every committed entry,
// however the nodes were crashed and the network split. With -nosync the
// log skips its fsyncs, which loses committed entries.
package main

import (
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
	"seedfall.dev/sdk/sim"
)

const port = 7000

// stream is raft's transport over plain TCP, with peers named by host name
// (raft-1:7000), which the simulated network resolves.
type stream struct {
	net.Listener
	self string
}

type named string

func (named) Network() string  { return "tcp" }
func (n named) String() string { return string(n) }

func (s *stream) Addr() net.Addr { return named(s.self) }

func (s *stream) Dial(address raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	return net.DialTimeout("tcp", string(address), timeout)
}

// fsm keeps what was applied; the check reads the log itself.
type fsm struct{ applied int }

func (f *fsm) Apply(*raft.Log) interface{}         { f.applied++; return nil }
func (f *fsm) Snapshot() (raft.FSMSnapshot, error) { return snapshot{}, nil }
func (f *fsm) Restore(r io.ReadCloser) error       { return r.Close() }

type snapshot struct{}

func (snapshot) Persist(sink raft.SnapshotSink) error { return sink.Close() }
func (snapshot) Release()                             {}

// committed is the oracle's record of committed entries: index -> data.
func committed() map[uint64]string {
	out := map[uint64]string{}
	raw, ok := sim.Recall("committed")
	if !ok {
		return out
	}
	for _, kv := range strings.Fields(string(raw)) {
		i, v, _ := strings.Cut(kv, "=")
		n, _ := strconv.ParseUint(i, 10, 64)
		out[n] = v
	}
	return out
}

func remember(c map[uint64]string) {
	keys := make([]uint64, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(a, b int) bool { return keys[a] < keys[b] })
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%d=%s ", k, c[k])
	}
	sim.Remember("committed", []byte(b.String()))
}

func main() {
	entries := flag.Int("entries", 60, "entries to commit in all")
	noSync := flag.Bool("nosync", false, "the log skips fsync (loses committed entries)")
	flag.Parse()
	self := strings.ReplaceAll(os.Getenv("SEEDFALL_NODE"), "#", "-")
	if err := os.MkdirAll("/data", 0o755); err != nil {
		panic(err)
	}
	store, err := raftboltdb.New(raftboltdb.Options{Path: "/data/raft.db", NoSync: *noSync})
	if err != nil {
		panic(err)
	}
	snaps, err := raft.NewFileSnapshotStoreWithLogger("/data", 1, hclog.NewNullLogger())
	if err != nil {
		panic(err)
	}
	ln, err := net.Listen("tcp", fmt.Sprintf(":%d", port))
	if err != nil {
		panic(err)
	}
	trans := raft.NewNetworkTransport(&stream{Listener: ln, self: fmt.Sprintf("%s:%d", self, port)}, 3, 200*time.Millisecond, io.Discard)
	conf := raft.DefaultConfig()
	conf.LocalID = raft.ServerID(self)
	conf.HeartbeatTimeout = 100 * time.Millisecond
	conf.ElectionTimeout = 100 * time.Millisecond
	conf.LeaderLeaseTimeout = 50 * time.Millisecond
	conf.CommitTimeout = 10 * time.Millisecond
	conf.SnapshotThreshold = 1 << 20
	conf.Logger = hclog.NewNullLogger()
	if has, err := raft.HasExistingState(store, store, snaps); err != nil {
		panic(err)
	} else if !has {
		var servers []raft.Server
		for i := 1; i <= 3; i++ {
			id := fmt.Sprintf("raft-%d", i)
			servers = append(servers, raft.Server{ID: raft.ServerID(id), Address: raft.ServerAddress(fmt.Sprintf("%s:%d", id, port))})
		}
		if err := raft.BootstrapCluster(conf, store, store, snaps, trans, raft.Configuration{Servers: servers}); err != nil {
			panic(err)
		}
	}
	r, err := raft.NewRaft(conf, &fsm{}, store, store, snaps, trans)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%s started\n", self)
	for {
		time.Sleep(20 * time.Millisecond)
		if r.State() != raft.Leader {
			continue
		}
		c := committed()
		missing := 0
		for idx, data := range c {
			var l raft.Log
			if err := store.GetLog(idx, &l); err != nil || string(l.Data) != data {
				missing++
			}
		}
		sim.Always(missing == 0, "a leader's log holds every committed entry", map[string]any{"leader": self, "committed": len(c), "missing": missing})
		if len(c) >= *entries {
			continue
		}
		data := fmt.Sprintf("%s.%d", self, len(c))
		f := r.Apply([]byte(data), 200*time.Millisecond)
		if f.Error() == nil {
			c = committed()
			c[f.Index()] = data
			remember(c)
			if len(c)%20 == 0 {
				fmt.Printf("%d entries committed\n", len(c))
			}
		}
	}
}
