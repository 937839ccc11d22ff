module seedfall.dev/examples/raftkv

go 1.25.0

require (
	github.com/hashicorp/go-hclog v1.6.3
	github.com/hashicorp/raft v1.8.0
	github.com/hashicorp/raft-boltdb/v2 v2.3.1
	seedfall.dev/sdk v0.0.0
)

require (
	github.com/anishathalye/porcupine v1.3.1 // indirect
	github.com/armon/go-metrics v0.4.1 // indirect
	github.com/boltdb/bolt v1.3.1 // indirect
	github.com/fatih/color v1.13.0 // indirect
	github.com/hashicorp/go-immutable-radix v1.3.1 // indirect
	github.com/hashicorp/go-metrics v0.7.0 // indirect
	github.com/hashicorp/go-msgpack/v2 v2.1.5 // indirect
	github.com/hashicorp/golang-lru v1.0.2 // indirect
	github.com/mattn/go-colorable v0.1.12 // indirect
	github.com/mattn/go-isatty v0.0.14 // indirect
	go.etcd.io/bbolt v1.3.5 // indirect
	golang.org/x/sys v0.47.0 // indirect
)

replace seedfall.dev/sdk => ../../sdk/go

// hashicorp/raft v1.8.0 needs go-metrics v0.7.0, which dropped the compat
// package raft-boltdb/v2 v2.3.1 imports; v0.6.1 has both (docs/sdk-go.md).
replace github.com/hashicorp/go-metrics => github.com/hashicorp/go-metrics v0.6.1
