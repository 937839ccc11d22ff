// kvlog is a small key-value store that appends every write to a log file
// and replays the log when it starts. Its client acknowledges each write as
// soon as Put returns, and its checker verifies, after every restart, that
// every acknowledged write is still there.
//
// The bug: Put appends to the log and returns; a background "group commit"
// goroutine fsyncs the log every few milliseconds, which batches fsyncs and
// looks like the classic optimisation. But a write is acknowledged before
// its fsync, so a crash in that window loses acknowledged data. With -fixed,
// Put fsyncs before returning.
//
// Client and checker live in the same process here (there is no network in
// this example); they keep what they know in seedfall's test oracle
// (sim.Remember / sim.Recall), which survives crashes of the node.
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"hash/crc32"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"seedfall.dev/sdk/sim"
)

const (
	dir     = "/data"
	logPath = "/data/kv.log"
)

type store struct {
	mu    sync.Mutex
	log   *os.File
	data  map[string]int
	fixed bool
}

func syncDir(path string) {
	d, err := os.Open(path)
	if err != nil {
		panic(err)
	}
	if err := d.Sync(); err != nil {
		panic(err)
	}
	d.Close()
}

// open creates the data directory and log durably, then replays the log.
// A torn tail (a record cut by the crash) fails its checksum and is dropped.
func open(fixed bool) *store {
	if _, err := os.Stat(dir); err != nil {
		if err := os.Mkdir(dir, 0o755); err != nil {
			panic(err)
		}
		syncDir("/")
	}
	_, statErr := os.Stat(logPath)
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_RDWR|os.O_APPEND, 0o644)
	if err != nil {
		panic(err)
	}
	if statErr != nil {
		syncDir(dir)
	}
	s := &store{log: f, data: map[string]int{}, fixed: fixed}
	raw, err := os.ReadFile(logPath)
	if err != nil {
		panic(err)
	}
	records, skipped := 0, 0
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for sc.Scan() {
		key, version, ok := parse(sc.Text())
		if !ok {
			skipped++
			continue
		}
		s.data[key] = version
		records++
	}
	fmt.Printf("recovered %d records (%d damaged skipped)\n", records, skipped)
	return s
}

func record(key string, version int) string {
	body := fmt.Sprintf("%s=%d", key, version)
	return fmt.Sprintf("%s %08x\n", body, crc32.ChecksumIEEE([]byte(body)))
}

func parse(line string) (string, int, bool) {
	body, sum, ok := strings.Cut(line, " ")
	if !ok || fmt.Sprintf("%08x", crc32.ChecksumIEEE([]byte(body))) != sum {
		return "", 0, false
	}
	key, v, ok := strings.Cut(body, "=")
	version, err := strconv.Atoi(v)
	return key, version, ok && err == nil
}

func (s *store) put(key string, version int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.log.WriteString(record(key, version)); err != nil {
		panic(err)
	}
	if s.fixed {
		if err := s.log.Sync(); err != nil {
			panic(err)
		}
	}
	s.data[key] = version
}

// groupCommit fsyncs the log every few milliseconds (the buggy build).
func (s *store) groupCommit() {
	for {
		time.Sleep(3 * time.Millisecond)
		s.mu.Lock()
		s.log.Sync()
		s.mu.Unlock()
	}
}

// acked is the client's memory of acknowledged writes: key -> version.
func loadAcked() map[string]int {
	acked := map[string]int{}
	if raw, ok := sim.Recall("acked"); ok {
		for _, kv := range strings.Fields(string(raw)) {
			k, v, _ := strings.Cut(kv, "=")
			n, _ := strconv.Atoi(v)
			acked[k] = n
		}
	}
	return acked
}

func saveAcked(acked map[string]int) {
	keys := make([]string, 0, len(acked))
	for k := range acked {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s=%d ", k, acked[k])
	}
	sim.Remember("acked", []byte(b.String()))
}

func main() {
	fixed := flag.Bool("fixed", false, "fsync before acknowledging")
	ops := flag.Int("ops", 150, "writes the client makes in all")
	flag.Parse()

	s := open(*fixed)
	acked := loadAcked()
	keys := make([]string, 0, len(acked))
	for k := range acked {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		sim.Always(s.data[k] >= acked[k], "acknowledged writes survive crashes",
			map[string]any{"key": k, "acknowledged": acked[k], "found": s.data[k]})
	}
	sim.SetupComplete(nil)
	if !*fixed {
		go s.groupCommit()
	}

	next := 1
	if raw, ok := sim.Recall("next"); ok {
		next, _ = strconv.Atoi(string(raw))
	}
	for ; next <= *ops; next++ {
		key := fmt.Sprintf("k%d", next%8)
		s.put(key, next)
		acked[key] = next
		saveAcked(acked)
		sim.Remember("next", []byte(strconv.Itoa(next+1)))
		time.Sleep(time.Duration(1+sim.RandomIntN(3)) * time.Millisecond)
	}
	sim.Reachable("the client finished its writes", nil)
	fmt.Printf("done: %d writes acknowledged\n", *ops)
}
