module seedfall.dev/tests/gonetplain

go 1.22
