// The bolt family of the storage matrix: go.etcd.io/bbolt and
// github.com/boltdb/bolt, whose APIs are one. Each cell's lib.go names its
// library's DB, Tx and Open.
package main

import (
	"fmt"

	"seedfall.dev/tests/matrix/harness"
)

var bucket = []byte("records")

func key(i uint64) []byte { return []byte(fmt.Sprintf("%016d", i)) }

type boltStore struct{ db *DB }

func (s boltStore) Put(i uint64, v []byte) error {
	return s.db.Update(func(tx *Tx) error {
		b, err := tx.CreateBucketIfNotExists(bucket)
		if err != nil {
			return err
		}
		return b.Put(key(i), v)
	})
}

func (s boltStore) Get(i uint64) ([]byte, bool, error) {
	var out []byte
	err := s.db.View(func(tx *Tx) error {
		if b := tx.Bucket(bucket); b != nil {
			if v := b.Get(key(i)); v != nil {
				out = append([]byte(nil), v...)
			}
		}
		return nil
	})
	return out, out != nil, err
}

func (s boltStore) Close() error { return s.db.Close() }

func main() {
	harness.Run(func(dir string) (harness.Store, error) {
		db, err := Open(dir+"/bolt.db", 0o600, nil)
		if err != nil {
			return nil, err
		}
		return boltStore{db}, nil
	})
}
