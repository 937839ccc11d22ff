module seedfall.dev/tests/matrix/bbolt-1.4

go 1.23

require (
	go.etcd.io/bbolt v1.4.3
	seedfall.dev/tests/matrix/harness v0.0.0
)

require (
	golang.org/x/sys v0.29.0 // indirect
	seedfall.dev/sdk v0.0.0 // indirect
)

replace (
	seedfall.dev/sdk => ../../../../sdk/go
	seedfall.dev/tests/matrix/harness => ../../harness
)
