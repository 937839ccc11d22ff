module seedfall.dev/examples/walkv

go 1.22

require (
	github.com/rosedblabs/wal v1.3.8
	seedfall.dev/sdk v0.0.0
)

require github.com/valyala/bytebufferpool v1.0.0 // indirect

replace seedfall.dev/sdk => ../../sdk/go
