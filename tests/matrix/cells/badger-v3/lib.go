// What the badger family's main.go needs from this cell's release.
package main

import badger "github.com/dgraph-io/badger/v3"

type (
	DB  = badger.DB
	Txn = badger.Txn
)

var errKeyNotFound = badger.ErrKeyNotFound

func openDB(dir string) (*DB, error) {
	// Sizes for wasm's 32-bit memory, as on any small machine: the defaults
	// map a 2 GiB value log and keep 64 MiB memtables.
	return badger.Open(badger.DefaultOptions(dir).WithSyncWrites(true).WithLogger(nil).
		WithMemTableSize(4 << 20).WithValueThreshold(1 << 10).WithValueLogFileSize(1 << 20).WithNumMemtables(2).WithNumCompactors(2))
}
