// The badger family of the storage matrix: github.com/dgraph-io/badger v2,
// v3 and v4. Each cell's lib.go names its release's DB and Txn, how it
// opens a store with synced writes, and its key-not-found error.
package main

import (
	"errors"
	"fmt"

	"seedfall.dev/tests/matrix/harness"
)

func key(i uint64) []byte { return []byte(fmt.Sprintf("%016d", i)) }

type badgerStore struct{ db *DB }

func (s badgerStore) Put(i uint64, v []byte) error {
	return s.db.Update(func(txn *Txn) error { return txn.Set(key(i), v) })
}

func (s badgerStore) Get(i uint64) ([]byte, bool, error) {
	var out []byte
	err := s.db.View(func(txn *Txn) error {
		item, err := txn.Get(key(i))
		if errors.Is(err, errKeyNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		out, err = item.ValueCopy(nil)
		return err
	})
	return out, out != nil, err
}

func (s badgerStore) Close() error { return s.db.Close() }

func main() {
	harness.Run(func(dir string) (harness.Store, error) {
		db, err := openDB(dir)
		if err != nil {
			return nil, err
		}
		return badgerStore{db}, nil
	})
}
