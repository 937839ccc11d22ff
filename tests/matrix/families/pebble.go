// The pebble family of the storage matrix: github.com/cockroachdb/pebble v1
// and v2. Each cell's lib.go names its release's DB, how it opens a store,
// its synced write option and its not-found error.
package main

import (
	"errors"
	"fmt"

	"seedfall.dev/tests/matrix/harness"
)

func key(i uint64) []byte { return []byte(fmt.Sprintf("%016d", i)) }

type pebbleStore struct{ db *DB }

func (s pebbleStore) Put(i uint64, v []byte) error { return s.db.Set(key(i), v, syncWrites) }

func (s pebbleStore) Get(i uint64) ([]byte, bool, error) {
	v, closer, err := s.db.Get(key(i))
	if errors.Is(err, errNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	out := append([]byte(nil), v...)
	return out, true, closer.Close()
}

func (s pebbleStore) Close() error { return s.db.Close() }

func main() {
	harness.Run(func(dir string) (harness.Store, error) {
		db, err := openDB(dir)
		if err != nil {
			return nil, err
		}
		return pebbleStore{db}, nil
	})
}
