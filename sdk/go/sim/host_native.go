// host_native.go owns the stand-in for the host when the program is not built
// as a seedfall guest (any target but wasip1, e.g. `go test`): properties only
// report failures on stderr, randomness comes from math/rand/v2, Buggify
// never fires, and Maximize/Minimize do nothing.

//go:build !wasip1

package sim

import (
	"fmt"
	"io"
	"math/rand/v2"
	"os"
)

// nativeStderr is where failed properties are reported; tests replace it.
var nativeStderr io.Writer = os.Stderr

// platformAssert prints one line for an evaluation that would fail a
// seedfall run at once (a false always or always_or_unreachable, a reached
// unreachable) and does nothing else: the program goes on.
func platformAssert(kind assertKind, cond bool, message, details, location string) {
	failed := false
	switch kind & kindMask {
	case kindAlways, kindAlwaysOrUnreachable:
		failed = !cond
	case kindUnreachable:
		failed = true
	}
	if failed {
		fmt.Fprintf(nativeStderr, "seedfall: property failed: %s\n", message)
	}
}

func platformSetupComplete(details string) {}

func platformRandomU64() uint64 {
	return rand.Uint64()
}

func platformBuggify(site string) bool {
	return false
}

// platformGuide does nothing: there is no exploration to guide.
func platformGuide(maximize bool, value float64, name string) {}

var nativeOracle = map[string][]byte{}

func platformRemember(key string, value []byte) {
	nativeOracle[key] = append([]byte(nil), value...)
}

func platformRecall(key string) ([]byte, bool) {
	v, ok := nativeOracle[key]
	return v, ok
}
