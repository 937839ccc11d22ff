// go-bbolt: go.etcd.io/bbolt, unmodified, on the simulated disk (built with
// the storage overlay). Each boot opens the store, checks that every write
// it acknowledged before a crash is still there, writes more, and checks
// again before it exits.
package main

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"

	bolt "go.etcd.io/bbolt"
	"seedfall.dev/sdk/sim"
)

func recallAcked() int {
	raw, ok := sim.Recall("acked/" + os.Getenv("SEEDFALL_NODE"))
	if !ok {
		return 0
	}
	n, _ := strconv.Atoi(string(raw))
	return n
}

func verify(db *bolt.DB, acked int, when string) {
	missing := 0
	db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte("kv"))
		for i := 0; i < acked; i++ {
			if b == nil || string(b.Get([]byte(fmt.Sprintf("k%04d", i)))) != fmt.Sprintf("v%04d", i) {
				missing++
			}
		}
		return nil
	})
	sim.Always(missing == 0, "acknowledged bbolt writes survive crashes", map[string]any{"acknowledged": acked, "missing": missing, "when": when})
}

func main() {
	writes := flag.Int("writes", 60, "keys to write in all")
	noSync := flag.Bool("nosync", false, "skip fsync on commit (the bug to find)")
	flag.Parse()
	if err := os.MkdirAll("/data", 0o755); err != nil {
		panic(err)
	}
	db, err := bolt.Open("/data/kv.db", 0o600, nil)
	if err != nil {
		panic(err)
	}
	db.NoSync = *noSync
	acked := recallAcked()
	verify(db, acked, "after open")
	fmt.Printf("opened with %d acknowledged keys\n", acked)
	for i := acked; i < *writes; i++ {
		err := db.Update(func(tx *bolt.Tx) error {
			b, err := tx.CreateBucketIfNotExists([]byte("kv"))
			if err != nil {
				return err
			}
			return b.Put([]byte(fmt.Sprintf("k%04d", i)), []byte(fmt.Sprintf("v%04d", i)))
		})
		if err != nil {
			panic(err)
		}
		sim.Remember("acked/"+os.Getenv("SEEDFALL_NODE"), []byte(strconv.Itoa(i+1)))
	}
	verify(db, *writes, "before exit")
	var stats []string
	db.View(func(tx *bolt.Tx) error {
		stats = append(stats, fmt.Sprintf("keys=%d", tx.Bucket([]byte("kv")).Stats().KeyN))
		return nil
	})
	fmt.Println("done:", strings.Join(stats, " "))
	if err := db.Close(); err != nil {
		panic(err)
	}
}
