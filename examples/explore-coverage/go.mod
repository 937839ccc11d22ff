module seedfall.dev/examples/explore-coverage

go 1.22
