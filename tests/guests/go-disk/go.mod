module seedfall.dev/tests/godisk

go 1.22
