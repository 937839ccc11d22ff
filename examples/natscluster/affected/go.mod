module seedfall.dev/examples/natscluster/affected

go 1.26.0

require seedfall.dev/examples/natscluster/workload v0.0.0

require (
	github.com/klauspost/compress v1.17.11 // indirect
	github.com/minio/highwayhash v1.0.3 // indirect
	github.com/nats-io/jwt/v2 v2.5.8 // indirect
	github.com/nats-io/nats-server/v2 v2.10.22 // indirect
	github.com/nats-io/nats.go v1.37.0 // indirect
	github.com/nats-io/nkeys v0.4.7 // indirect
	github.com/nats-io/nuid v1.0.1 // indirect
	golang.org/x/crypto v0.28.0 // indirect
	golang.org/x/sys v0.26.0 // indirect
	golang.org/x/text v0.19.0 // indirect
	golang.org/x/time v0.7.0 // indirect
	seedfall.dev/sdk v0.0.0 // indirect
)

replace (
	seedfall.dev/examples/natscluster/workload => ../workload
	seedfall.dev/sdk => ../../../sdk/go
)
