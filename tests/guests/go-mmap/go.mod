module seedfall.dev/tests/gommap

go 1.22
