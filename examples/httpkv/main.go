// httpkv is a small replicated key-value service over HTTP: a primary takes
// writes and copies each one to a backup; clients write through the primary
// and read back from the backup. It is plain net/http: seedfall builds it
// with the network overlay ("net": true in seedfall.json), so the same code
// runs natively too.
//
// The bug: when the copy to the backup fails (a timeout: the backup is
// partitioned away), the primary still answers 200, trusting that the backup
// "will catch up". Nothing ever re-sends the write, so an acknowledged write
// is missing from the backup for good. -sync (seedfall.fixed.json) makes the
// primary answer 503 instead, and the client counts the write as not done.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"seedfall.dev/sdk/sim"
)

func main() {
	role := flag.String("role", "client", "primary | backup | client")
	backup := flag.String("backup", "backup:8080", "the backup's address (primary)")
	primary := flag.String("primary", "primary:8080", "the primary's address (client)")
	syncAck := flag.Bool("sync", false, "acknowledge a write only once the backup has it")
	writes := flag.Int("writes", 20, "writes per client")
	flag.Parse()

	switch *role {
	case "primary":
		serve(newStore(), &replicator{backup: *backup, sync: *syncAck})
	case "backup":
		serve(newStore(), nil)
	case "client":
		client(*primary, *backup, *writes)
	default:
		fmt.Fprintf(os.Stderr, "httpkv: unknown -role %q\n", *role)
		os.Exit(2)
	}
}

type store struct {
	mu   sync.Mutex
	data map[string]string
}

func newStore() *store { return &store{data: map[string]string{}} }

func (s *store) put(k, v string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.data[k] = v
}

func (s *store) get(k string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.data[k]
	return v, ok
}

// replicator copies the primary's writes to the backup.
type replicator struct {
	backup string
	sync   bool
}

var replication = &http.Client{Timeout: 100 * time.Millisecond}

func (r *replicator) copy(key, value string) error {
	req, _ := http.NewRequest(http.MethodPut, "http://"+r.backup+"/kv/"+key, strings.NewReader(value))
	resp, err := replication.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("backup answered %s", resp.Status)
	}
	return nil
}

// serve answers GET and PUT /kv/<key>; a primary (r != nil) replicates PUTs.
func serve(s *store, r *replicator) {
	http.HandleFunc("/kv/", func(w http.ResponseWriter, req *http.Request) {
		key := strings.TrimPrefix(req.URL.Path, "/kv/")
		switch req.Method {
		case http.MethodGet:
			v, ok := s.get(key)
			if !ok {
				http.Error(w, "not found", http.StatusNotFound)
				return
			}
			io.WriteString(w, v)
		case http.MethodPut:
			body, err := io.ReadAll(req.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			s.put(key, string(body))
			if r != nil {
				if err := r.copy(key, string(body)); err != nil {
					if r.sync {
						http.Error(w, "backup unreachable: "+err.Error(), http.StatusServiceUnavailable)
						return
					}
					// BUG: the backup "will catch up" -- but nothing re-sends this write.
					fmt.Printf("copy of %s to the backup failed (%v); acknowledging anyway\n", key, err)
				}
			}
			io.WriteString(w, "ok")
		default:
			http.Error(w, "GET or PUT", http.StatusMethodNotAllowed)
		}
	})
	fmt.Println("httpkv listening on :8080")
	if err := http.ListenAndServe(":8080", nil); err != nil {
		fmt.Fprintln(os.Stderr, "httpkv:", err)
		os.Exit(1)
	}
}

var web = &http.Client{Timeout: 500 * time.Millisecond}

// client writes keys through the primary and, for every write the primary
// acknowledged, reads it back from the backup.
func client(primary, backup string, writes int) {
	me := strings.ReplaceAll(os.Getenv("SEEDFALL_NODE"), "#", "-")
	acked := 0
	for i := 0; i < writes; i++ {
		key, value := fmt.Sprintf("%s-k%d", me, i), fmt.Sprintf("v%d", i)
		req, _ := http.NewRequest(http.MethodPut, "http://"+primary+"/kv/"+key, bytes.NewBufferString(value))
		resp, err := web.Do(req)
		if err != nil {
			time.Sleep(20 * time.Millisecond)
			continue // not acknowledged: nothing promised
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			time.Sleep(20 * time.Millisecond)
			continue
		}
		acked++
		got, ok := readBack(backup, key)
		if ok {
			sim.Always(got == value, "an acknowledged write is on the backup", map[string]any{"key": key, "wrote": value, "backup has": got})
		}
		time.Sleep(20 * time.Millisecond)
	}
	sim.Reachable("a client finished its writes", map[string]any{"acknowledged": acked})
	fmt.Printf("client done: %d of %d writes acknowledged\n", acked, writes)
}

// readBack asks the backup for key until it answers (it may be partitioned
// away for a while); "" when the backup has no such key.
func readBack(backup, key string) (string, bool) {
	for try := 0; try < 50; try++ {
		resp, err := web.Get("http://" + backup + "/kv/" + key)
		if err != nil {
			time.Sleep(50 * time.Millisecond)
			continue
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusNotFound {
			return "", true
		}
		if resp.StatusCode == http.StatusOK {
			return string(body), true
		}
		time.Sleep(50 * time.Millisecond)
	}
	return "", false
}
