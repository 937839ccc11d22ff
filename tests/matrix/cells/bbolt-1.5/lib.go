// What the bolt family's main.go needs from this cell's release.
package main

import bolt "go.etcd.io/bbolt"

type (
	DB = bolt.DB
	Tx = bolt.Tx
)

var Open = bolt.Open
