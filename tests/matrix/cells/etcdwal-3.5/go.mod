module seedfall.dev/tests/matrix/etcdwal-3.5

go 1.26.0

require (
	go.etcd.io/etcd/raft/v3 v3.5.36
	go.etcd.io/etcd/server/v3 v3.5.36
	go.uber.org/zap v1.17.0
	seedfall.dev/tests/matrix/harness v0.0.0
)

require (
	github.com/beorn7/perks v1.0.1 // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/gogo/protobuf v1.3.2 // indirect
	github.com/golang/protobuf v1.5.4 // indirect
	github.com/matttproud/golang_protobuf_extensions v1.0.1 // indirect
	github.com/prometheus/client_golang v1.11.1 // indirect
	github.com/prometheus/client_model v0.2.0 // indirect
	github.com/prometheus/common v0.26.0 // indirect
	github.com/prometheus/procfs v0.6.0 // indirect
	go.etcd.io/etcd/client/pkg/v3 v3.5.36 // indirect
	go.etcd.io/etcd/pkg/v3 v3.5.36 // indirect
	go.uber.org/atomic v1.7.0 // indirect
	go.uber.org/multierr v1.6.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	google.golang.org/protobuf v1.36.12 // indirect
	seedfall.dev/sdk v0.0.0 // indirect
)

replace (
	seedfall.dev/sdk => ../../../../sdk/go
	seedfall.dev/tests/matrix/harness => ../../harness
)
