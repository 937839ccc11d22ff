module seedfall.dev/tests/matrix/xsys-2020

go 1.22

require (
	golang.org/x/sys v0.0.0-20200930185726-fdedc70b468f
	seedfall.dev/tests/matrix/harness v0.0.0
)

require seedfall.dev/sdk v0.0.0 // indirect

replace (
	seedfall.dev/sdk => ../../../../sdk/go
	seedfall.dev/tests/matrix/harness => ../../harness
)
