// host_wasip1.go owns the binding to the host's `seedfall` import module
// (docs/abi.md) when the program is built as a seedfall guest
// (GOOS=wasip1 GOARCH=wasm).

//go:build wasip1

package sim

import (
	"runtime"
	"unsafe"
)

//go:wasmimport seedfall assert
//go:noescape
func seedfallAssert(kind, cond uint32, msgPtr unsafe.Pointer, msgLen uint32, detailsPtr unsafe.Pointer, detailsLen uint32, locPtr unsafe.Pointer, locLen uint32)

//go:wasmimport seedfall setup_complete
//go:noescape
func seedfallSetupComplete(detailsPtr unsafe.Pointer, detailsLen uint32)

//go:wasmimport seedfall random_u64
func seedfallRandomU64() uint64

//go:wasmimport seedfall buggify
//go:noescape
func seedfallBuggify(sitePtr unsafe.Pointer, siteLen uint32) uint32

//go:wasmimport seedfall guide
//go:noescape
func seedfallGuide(maximize uint32, value float64, namePtr unsafe.Pointer, nameLen uint32)

// stringArg splits s into the pointer and length the host expects; an empty
// string is passed as a nil pointer and 0. The caller keeps s alive across
// the host call.
func stringArg(s string) (unsafe.Pointer, uint32) {
	if len(s) == 0 {
		return nil, 0
	}
	return unsafe.Pointer(unsafe.StringData(s)), uint32(len(s))
}

func platformAssert(kind assertKind, cond bool, message, details, location string) {
	var c uint32
	if cond {
		c = 1
	}
	msgPtr, msgLen := stringArg(message)
	detailsPtr, detailsLen := stringArg(details)
	locPtr, locLen := stringArg(location)
	seedfallAssert(uint32(kind), c, msgPtr, msgLen, detailsPtr, detailsLen, locPtr, locLen)
	runtime.KeepAlive(message)
	runtime.KeepAlive(details)
	runtime.KeepAlive(location)
}

func platformSetupComplete(details string) {
	ptr, n := stringArg(details)
	seedfallSetupComplete(ptr, n)
	runtime.KeepAlive(details)
}

func platformRandomU64() uint64 {
	return seedfallRandomU64()
}

func platformBuggify(site string) bool {
	ptr, n := stringArg(site)
	fired := seedfallBuggify(ptr, n)
	runtime.KeepAlive(site)
	return fired != 0
}

func platformGuide(maximize bool, value float64, name string) {
	var m uint32
	if maximize {
		m = 1
	}
	ptr, n := stringArg(name)
	seedfallGuide(m, value, ptr, n)
	runtime.KeepAlive(name)
}

//go:wasmimport seedfall oracle_put
//go:noescape
func seedfallOraclePut(keyPtr unsafe.Pointer, keyLen uint32, valuePtr unsafe.Pointer, valueLen uint32)

//go:wasmimport seedfall oracle_get
//go:noescape
func seedfallOracleGet(keyPtr unsafe.Pointer, keyLen uint32, bufPtr unsafe.Pointer, bufLen uint32) int32

func platformRemember(key string, value []byte) {
	kp, kl := stringArg(key)
	var vp unsafe.Pointer
	if len(value) > 0 {
		vp = unsafe.Pointer(&value[0])
	}
	seedfallOraclePut(kp, kl, vp, uint32(len(value)))
	runtime.KeepAlive(key)
	runtime.KeepAlive(value)
}

func platformRecall(key string) ([]byte, bool) {
	kp, kl := stringArg(key)
	buf := make([]byte, 256)
	for {
		n := seedfallOracleGet(kp, kl, unsafe.Pointer(&buf[0]), uint32(len(buf)))
		if n < 0 {
			runtime.KeepAlive(key)
			return nil, false
		}
		if int(n) <= len(buf) {
			runtime.KeepAlive(key)
			return buf[:n], true
		}
		buf = make([]byte, n)
	}
}
