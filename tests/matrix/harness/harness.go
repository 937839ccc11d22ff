// Package harness is the workload every cell of the storage overlay's
// coverage matrix runs (docs/sdk-go.md#storage): whatever the library, each
// boot opens the store, checks that every record it acknowledged before a
// crash reads back, writes more (each one durable before it is
// acknowledged), checks again, and exits. A cell only adapts its library to
// Store.
package harness

import (
	"flag"
	"fmt"
	"os"
	"strconv"

	"seedfall.dev/sdk/sim"
)

// Store is a library as a cell adapts it: records numbered from 1.
type Store interface {
	// Put writes record i durably (synced) before it returns. Records from
	// i on that a crash left behind unacknowledged may be overwritten.
	Put(i uint64, value []byte) error
	// Get reads record i back; ok is false when the store has none.
	Get(i uint64) (value []byte, ok bool, err error)
	Close() error
}

// Dir is the store's folder on the node's disk.
const Dir = "/data/store"

// Value is what record i holds.
func Value(i uint64) []byte {
	return []byte(fmt.Sprintf("record-%06d", i))
}

func ackedKey() string {
	return "acked/" + os.Getenv("SEEDFALL_NODE")
}

func recallAcked() uint64 {
	raw, ok := sim.Recall(ackedKey())
	if !ok {
		return 0
	}
	n, _ := strconv.ParseUint(string(raw), 10, 64)
	return n
}

func verify(s Store, acked uint64, when string) {
	missing, first, firstErr := 0, uint64(0), ""
	for i := uint64(1); i <= acked; i++ {
		v, ok, err := s.Get(i)
		if err != nil || !ok || string(v) != string(Value(i)) {
			missing++
			if first == 0 {
				first = i
			}
			if err != nil && firstErr == "" {
				firstErr = err.Error()
			}
		}
	}
	details := map[string]any{"acknowledged": acked, "missing": missing, "first missing": first, "when": when}
	if firstErr != "" {
		details["error"] = firstErr
	}
	sim.Always(missing == 0, "acknowledged records survive crashes", details)
}

// Run is a cell's whole program: open is how its library opens (or
// creates) a store in a folder.
func Run(open func(dir string) (Store, error)) {
	total := flag.Uint64("records", 40, "records to write in all")
	flag.Parse()
	if err := os.MkdirAll(Dir, 0o755); err != nil {
		panic(err)
	}
	s, err := open(Dir)
	if err != nil {
		panic(fmt.Sprintf("opening the store: %v", err))
	}
	acked := recallAcked()
	if acked > 0 {
		// Only a crash restarts a node: this boot checks what survived one.
		sim.Reachable("a boot reopened the store after a crash", map[string]any{"acknowledged": acked})
	}
	verify(s, acked, "after open")
	for i := acked + 1; i <= *total; i++ {
		if err := s.Put(i, Value(i)); err != nil {
			panic(fmt.Sprintf("writing record %d: %v", i, err))
		}
		sim.Remember(ackedKey(), []byte(strconv.FormatUint(i, 10)))
	}
	verify(s, *total, "before exit")
	if err := s.Close(); err != nil {
		panic(fmt.Sprintf("closing the store: %v", err))
	}
	sim.Reachable("a boot wrote every record", nil)
	fmt.Printf("done: %d records\n", *total)
}
