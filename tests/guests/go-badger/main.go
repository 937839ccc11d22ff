// go-badger: github.com/dgraph-io/badger/v4, unmodified, on the simulated
// disk (built with the storage overlay: its memtables and value log are
// memory-mapped files). Each boot opens the store with synced writes,
// checks that every write it acknowledged before a crash is still there,
// writes more, and checks again before it exits.
package main

import (
	"flag"
	"fmt"
	"os"
	"strconv"

	badger "github.com/dgraph-io/badger/v4"
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

func verify(db *badger.DB, acked int, when string) {
	missing := 0
	db.View(func(tx *badger.Txn) error {
		for i := 0; i < acked; i++ {
			item, err := tx.Get([]byte(fmt.Sprintf("k%04d", i)))
			if err != nil {
				missing++
				continue
			}
			v, _ := item.ValueCopy(nil)
			if string(v) != fmt.Sprintf("v%04d", i) {
				missing++
			}
		}
		return nil
	})
	sim.Always(missing == 0, "acknowledged badger writes survive crashes", map[string]any{"acknowledged": acked, "missing": missing, "when": when})
}

func main() {
	writes := flag.Int("writes", 40, "keys to write in all")
	flag.Parse()
	opts := badger.DefaultOptions("/data/badger").
		WithSyncWrites(true).
		WithLogger(nil).
		WithMemTableSize(4 << 20).
		WithValueThreshold(1 << 10).
		WithValueLogFileSize(1 << 20).
		WithNumMemtables(2).
		WithNumCompactors(2).
		WithBlockCacheSize(1 << 20).
		WithIndexCacheSize(0)
	db, err := badger.Open(opts)
	if err != nil {
		panic(err)
	}
	acked := recallAcked()
	verify(db, acked, "after open")
	fmt.Printf("opened with %d acknowledged keys\n", acked)
	for i := acked; i < *writes; i++ {
		err := db.Update(func(tx *badger.Txn) error {
			return tx.Set([]byte(fmt.Sprintf("k%04d", i)), []byte(fmt.Sprintf("v%04d", i)))
		})
		if err != nil {
			panic(err)
		}
		sim.Remember("acked/"+os.Getenv("SEEDFALL_NODE"), []byte(strconv.Itoa(i+1)))
	}
	verify(db, *writes, "before exit")
	if err := db.Close(); err != nil {
		panic(err)
	}
	fmt.Println("done")
}
