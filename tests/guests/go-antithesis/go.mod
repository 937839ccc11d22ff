module seedfall.dev/tests/goantithesis

go 1.24.0

require github.com/antithesishq/antithesis-sdk-go v0.9.0
