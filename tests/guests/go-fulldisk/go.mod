module seedfall.dev/tests/gofulldisk

go 1.22
