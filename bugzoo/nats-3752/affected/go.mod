module seedfall.dev/bugzoo/nats3752/affected

go 1.26.0

require seedfall.dev/bugzoo/ensurestream v0.0.0

require (
	github.com/klauspost/compress v1.15.11 // indirect
	github.com/minio/highwayhash v1.0.2 // indirect
	github.com/nats-io/jwt/v2 v2.3.0 // indirect
	github.com/nats-io/nats-server/v2 v2.9.10 // indirect
	github.com/nats-io/nats.go v1.22.1 // indirect
	github.com/nats-io/nkeys v0.3.0 // indirect
	github.com/nats-io/nuid v1.0.1 // indirect
	golang.org/x/crypto v0.0.0-20220926161630-eccd6366d1be // indirect
	golang.org/x/sys v0.0.0-20220928140112-f11e5e49a4ec // indirect
	golang.org/x/time v0.0.0-20220922220347-f3bd1da661af // indirect
	seedfall.dev/sdk v0.0.0 // indirect
)

replace (
	seedfall.dev/bugzoo/ensurestream => ../../nats-ensurestream
	seedfall.dev/sdk => ../../../sdk/go
)
