// raftkv is a replicated key-value store on github.com/hashicorp/raft v1.8.0,
// unmodified, with github.com/hashicorp/raft-boltdb/v2 as each replica's
// durable log and stable store, served over plain net/http, and a client
// whose history of operations is checked for linearizability with
// porcupine (seedfall.dev/sdk/history).
//
// Roles (one program, chosen by -role):
//
//   - raft (3 replicas, raft#1..#3, reachable as raft-1..raft-3): a raft
//     member on :7000 and an HTTP front end on :8080. PUT /kv/<key> goes
//     through the log (r.Apply) on the leader. GET /kv/<key> is answered by
//     the leader after r.Barrier, so the state it reads holds every write
//     committed before the read began. A follower answers 421 and names the
//     leader in X-Raft-Leader.
//   - client: a few concurrent clients put and get a few keys, following
//     the leader, and record every call and return in a history. Every
//     250ms, and at the end, the history so far is checked:
//     sim.Always("history is linearizable").
//
// The bug, switched on with -stale-reads (seedfall.broken.json): every
// replica answers GET from its own state machine at once, without a barrier
// and without asking whether it still leads. A follower lags the leader by
// a heartbeat, a partitioned one by the whole partition, and a restarted one
// until it has replayed its log: its answers can be older than a write that
// had already been acknowledged.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
	"seedfall.dev/sdk/history"
	"seedfall.dev/sdk/sim"
)

const (
	raftPort = 7000
	httpPort = 8080
	replicas = 3

	checkEvery = 250 * time.Millisecond
)

func main() {
	role := flag.String("role", "client", "raft | client")
	staleReads := flag.Bool("stale-reads", false, "raft: answer reads from the local state machine, without a barrier (the bug)")
	clients := flag.Int("clients", 3, "client: concurrent clients")
	ops := flag.Int("ops", 40, "client: operations per client")
	keys := flag.Int("keys", 3, "client: keys")
	runFor := flag.Duration("run-for", 2500*time.Millisecond, "client: start no operation after this much virtual time (after the preload)")
	preload := flag.Int("preload", 0, "client: first write this many keys, one after another, then report setup complete")
	flag.Parse()
	switch *role {
	case "raft":
		serve(*staleReads)
	case "client":
		client(*clients, *ops, *keys, *runFor, *preload)
	default:
		fmt.Fprintf(os.Stderr, "raftkv: unknown -role %q\n", *role)
		os.Exit(2)
	}
}

// ---- the replica ----

// fsm is the replicated map: every committed "key\x00value" entry sets key.
type fsm struct {
	mu   sync.Mutex
	data map[string]string
}

func (f *fsm) Apply(l *raft.Log) interface{} {
	k, v, _ := strings.Cut(string(l.Data), "\x00")
	f.mu.Lock()
	f.data[k] = v
	f.mu.Unlock()
	return nil
}

func (f *fsm) get(k string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.data[k]
}

// Snapshots are never taken (SnapshotThreshold is out of reach): a restarted
// replica rebuilds its map by replaying its log.
func (f *fsm) Snapshot() (raft.FSMSnapshot, error) { return nil, errors.New("no snapshots") }
func (f *fsm) Restore(r io.ReadCloser) error       { return r.Close() }

// stream is raft's transport over plain TCP, peers named raft-N:7000.
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

func serve(staleReads bool) {
	self := strings.ReplaceAll(os.Getenv("SEEDFALL_NODE"), "#", "-")
	if err := os.MkdirAll("/data", 0o755); err != nil {
		panic(err)
	}
	store, err := raftboltdb.New(raftboltdb.Options{Path: "/data/raft.db"})
	if err != nil {
		panic(err)
	}
	snaps, err := raft.NewFileSnapshotStoreWithLogger("/data", 1, hclog.NewNullLogger())
	if err != nil {
		panic(err)
	}
	ln, err := net.Listen("tcp", fmt.Sprintf(":%d", raftPort))
	if err != nil {
		panic(err)
	}
	trans := raft.NewNetworkTransport(&stream{Listener: ln, self: fmt.Sprintf("%s:%d", self, raftPort)}, 3, 200*time.Millisecond, io.Discard)
	conf := raft.DefaultConfig()
	conf.LocalID = raft.ServerID(self)
	conf.HeartbeatTimeout = 100 * time.Millisecond
	conf.ElectionTimeout = 100 * time.Millisecond
	conf.LeaderLeaseTimeout = 50 * time.Millisecond
	conf.CommitTimeout = 10 * time.Millisecond
	conf.SnapshotThreshold = 1 << 30
	conf.SnapshotInterval = time.Hour
	conf.Logger = hclog.NewNullLogger()
	if has, err := raft.HasExistingState(store, store, snaps); err != nil {
		panic(err)
	} else if !has {
		var servers []raft.Server
		for i := 1; i <= replicas; i++ {
			id := fmt.Sprintf("raft-%d", i)
			servers = append(servers, raft.Server{ID: raft.ServerID(id), Address: raft.ServerAddress(fmt.Sprintf("%s:%d", id, raftPort))})
		}
		if err := raft.BootstrapCluster(conf, store, store, snaps, trans, raft.Configuration{Servers: servers}); err != nil {
			panic(err)
		}
	}
	state := &fsm{data: map[string]string{}}
	r, err := raft.NewRaft(conf, state, store, store, snaps, trans)
	if err != nil {
		panic(err)
	}

	notLeader := func(w http.ResponseWriter) {
		_, id := r.LeaderWithID()
		w.Header().Set("X-Raft-Leader", string(id))
		http.Error(w, "not the leader", http.StatusMisdirectedRequest)
	}
	http.HandleFunc("/kv/", func(w http.ResponseWriter, req *http.Request) {
		key := strings.TrimPrefix(req.URL.Path, "/kv/")
		switch req.Method {
		case http.MethodGet:
			if staleReads {
				// BUG: whatever this replica has applied so far, leader or not.
				io.WriteString(w, state.get(key))
				return
			}
			if r.State() != raft.Leader {
				notLeader(w)
				return
			}
			// Every entry committed before the barrier is applied once it
			// returns, and it commits only while this replica still leads.
			if err := r.Barrier(300 * time.Millisecond).Error(); err != nil {
				http.Error(w, "barrier: "+err.Error(), http.StatusServiceUnavailable)
				return
			}
			io.WriteString(w, state.get(key))
		case http.MethodPut:
			body, err := io.ReadAll(req.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			if r.State() != raft.Leader {
				notLeader(w) // nothing was applied: the client may retry elsewhere
				return
			}
			if err := r.Apply([]byte(key+"\x00"+string(body)), 300*time.Millisecond).Error(); err != nil {
				// The entry may still commit: the outcome is unknown.
				http.Error(w, "apply: "+err.Error(), http.StatusServiceUnavailable)
				return
			}
			io.WriteString(w, "ok")
		default:
			http.Error(w, "GET or PUT", http.StatusMethodNotAllowed)
		}
	})
	go func() {
		for leading := range r.LeaderCh() {
			if leading {
				fmt.Printf("%s leads (term %s)\n", self, r.Stats()["term"])
			} else {
				fmt.Printf("%s no longer leads\n", self)
			}
		}
	}()
	fmt.Printf("%s started (stale reads: %v)\n", self, staleReads)
	if err := http.ListenAndServe(fmt.Sprintf(":%d", httpPort), nil); err != nil {
		panic(err)
	}
}

// ---- the client ----

// outcome of one attempt of a request.
type outcome int

const (
	done      outcome = iota // answered 200
	elsewhere                // certainly not performed: try another replica
	unknown                  // may or may not have been performed
)

type conn struct {
	http   *http.Client
	leader string // the replica to try first, raft-N
}

func (c *conn) attempt(method, key, value string) (outcome, string) {
	target := c.leader
	if target == "" {
		target = fmt.Sprintf("raft-%d", 1+sim.RandomIntN(replicas))
	}
	req, _ := http.NewRequest(method, fmt.Sprintf("http://%s:%d/kv/%s", target, httpPort, key), bytes.NewBufferString(value))
	resp, err := c.http.Do(req)
	if err != nil {
		c.leader = ""
		var op *net.OpError
		if errors.As(err, &op) && op.Op == "dial" {
			return elsewhere, "" // never connected: nothing was sent
		}
		return unknown, ""
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	switch {
	case err != nil:
		c.leader = ""
		return unknown, ""
	case resp.StatusCode == http.StatusOK:
		c.leader = target
		return done, string(body)
	case resp.StatusCode == http.StatusMisdirectedRequest:
		c.leader = resp.Header.Get("X-Raft-Leader")
		return elsewhere, ""
	default:
		c.leader = ""
		return unknown, ""
	}
}

// do performs one operation, recorded in h, retrying while it is certain
// that nothing was performed. A write whose outcome is unknown stays pending
// in the history; a read has no effect, so it is retried.
func do(h *history.History, id int, c *conn, in history.KVInput, deadline time.Time) {
	op := h.Call(id, in)
	if op == nil {
		return // the history is full
	}
	method := http.MethodGet
	if in.Op == history.OpPut {
		method = http.MethodPut
	}
	for time.Now().Before(deadline) {
		res, body := c.attempt(method, in.Key, in.Value)
		switch {
		case res == done:
			op.Return(history.Value(body))
			return
		case res == unknown && in.Op == history.OpPut:
			sim.Reachable("a write's outcome is unknown", map[string]any{"client": id, "key": in.Key})
			return
		}
		time.Sleep(time.Duration(5+sim.RandomIntN(20)) * time.Millisecond)
	}
}

// settle writes n keys p0..p<n-1>, each until it is certainly done (a
// write whose outcome is unknown is written again: these keys are not in
// the history), then reports setup complete: the cluster has a leader and
// a log with data in it, the state the workload's faults should hit.
func settle(n int) {
	c := &conn{http: &http.Client{Timeout: 400 * time.Millisecond, Transport: &http.Transport{DisableKeepAlives: true}}}
	for i := 0; i < n; i++ {
		for {
			if res, _ := c.attempt(http.MethodPut, fmt.Sprintf("p%d", i), "preloaded"); res == done {
				break
			}
			time.Sleep(time.Duration(5+sim.RandomIntN(20)) * time.Millisecond)
		}
	}
	sim.SetupComplete(map[string]any{"preloaded keys": n})
}

func client(clients, ops, keys int, runFor time.Duration, preload int) {
	if preload > 0 {
		settle(preload)
	}
	h := history.New("kv")
	stop := time.Now().Add(runFor)
	var wg sync.WaitGroup
	for id := 0; id < clients; id++ {
		wg.Add(1)
		go func(id int) {
			defer wg.Done()
			c := &conn{http: &http.Client{Timeout: 400 * time.Millisecond, Transport: &http.Transport{DisableKeepAlives: true}}}
			for i := 0; i < ops && time.Now().Before(stop); i++ {
				key := fmt.Sprintf("k%d", sim.RandomIntN(keys))
				in := history.Get(key)
				if sim.RandomBool() {
					in = history.Put(key, fmt.Sprintf("c%d.%d", id, i))
				}
				do(h, id, c, in, time.Now().Add(time.Second))
				time.Sleep(time.Duration(sim.RandomIntN(20)) * time.Millisecond)
			}
		}(id)
	}
	// Check what has happened so far every checkEvery, and all of it at the
	// end. A history cut short is checked with its operations in flight
	// pending, so a violation fails the run soon after it happens, and fewer
	// faults come before the failure for shrinking to sort out.
	finished := make(chan struct{})
	go func() {
		wg.Wait()
		close(finished)
	}()
	for ticks := time.Tick(checkEvery); ; {
		select {
		case <-ticks:
			h.Check(history.KV(), 500*time.Millisecond)
			continue
		case <-finished:
		}
		break
	}
	fmt.Printf("clients done: %d operations recorded\n", h.Len())
	res := h.Check(history.KV(), 500*time.Millisecond)
	fmt.Println(res)
}
