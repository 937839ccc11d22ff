module seedfall.dev/tests/matrix/harness

go 1.22

require seedfall.dev/sdk v0.0.0

replace seedfall.dev/sdk => ../../../sdk/go
