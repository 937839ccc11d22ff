// What the pebble family's main.go needs from this cell's release.
package main

import "github.com/cockroachdb/pebble"

type DB = pebble.DB

var (
	syncWrites  = pebble.Sync
	errNotFound = pebble.ErrNotFound
)

func openDB(dir string) (*DB, error) { return pebble.Open(dir, &pebble.Options{}) }
