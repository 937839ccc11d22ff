module seedfall.dev/tests/gobasic

go 1.22
