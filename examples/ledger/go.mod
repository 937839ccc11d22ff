module seedfall.dev/examples/ledger

go 1.22
