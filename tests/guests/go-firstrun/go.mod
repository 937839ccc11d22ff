module seedfall.dev/tests/gofirstrun

go 1.22
