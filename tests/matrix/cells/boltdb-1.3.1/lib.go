// What the bolt family's main.go needs from this cell's release.
package main

import bolt "github.com/boltdb/bolt"

type (
	DB = bolt.DB
	Tx = bolt.Tx
)

var Open = bolt.Open
