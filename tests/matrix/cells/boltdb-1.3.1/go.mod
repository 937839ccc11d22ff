module seedfall.dev/tests/matrix/boltdb-1.3.1

go 1.26.0

require (
	github.com/boltdb/bolt v1.3.1
	seedfall.dev/tests/matrix/harness v0.0.0
)

require (
	golang.org/x/sys v0.50.0 // indirect
	seedfall.dev/sdk v0.0.0 // indirect
)

replace (
	seedfall.dev/sdk => ../../../../sdk/go
	seedfall.dev/tests/matrix/harness => ../../harness
)
