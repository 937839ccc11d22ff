// helpers_test.go owns the test doubles shared by the tests: a recorder that
// replaces the host's assert and setup_complete calls, a scripted `random`
// stream, and nextLine for expected call-site locations.

package sim

import (
	"fmt"
	"runtime"
	"testing"
)

// call is one host assert call as the host would receive it.
type call struct {
	kind     assertKind
	cond     bool
	message  string
	details  string
	location string
}

// recordAsserts replaces hostAssert for the rest of the test and returns the
// calls it receives.
func recordAsserts(t *testing.T) *[]call {
	t.Helper()
	var calls []call
	saved := hostAssert
	hostAssert = func(kind assertKind, cond bool, message, details, location string) {
		calls = append(calls, call{kind, cond, message, details, location})
	}
	t.Cleanup(func() { hostAssert = saved })
	return &calls
}

// only returns the single recorded call, failing the test if there is not
// exactly one, and clears the record.
func only(t *testing.T, calls *[]call) call {
	t.Helper()
	if len(*calls) != 1 {
		t.Fatalf("got %d host assert calls, want 1: %+v", len(*calls), *calls)
	}
	c := (*calls)[0]
	*calls = nil
	return c
}

// scriptRandom replaces the `random` stream with values, in order, for the
// rest of the test; drawing past the end fails the test. It returns how many
// values have been drawn so far.
func scriptRandom(t *testing.T, values ...uint64) func() int {
	t.Helper()
	next := 0
	saved := hostRandomU64
	hostRandomU64 = func() uint64 {
		t.Helper()
		if next >= len(values) {
			t.Fatalf("drew more than the %d scripted random values", len(values))
		}
		v := values[next]
		next++
		return v
	}
	t.Cleanup(func() { hostRandomU64 = saved })
	return func() int { return next }
}

// nextLine returns "file:line" of the line after the one that calls it.
func nextLine() string {
	_, file, line, _ := runtime.Caller(1)
	return fmt.Sprintf("%s:%d", file, line+1)
}
