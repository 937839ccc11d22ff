// native_test.go tests the native stand-in for the host (host_native.go):
// which failures it reports on stderr, that guidance is silent, and that
// Buggify never fires.

//go:build !wasip1

package sim

import (
	"bytes"
	"testing"
)

func TestNativeReportsOnlyFailuresThatFailARunAtOnce(t *testing.T) {
	var out bytes.Buffer
	saved := nativeStderr
	nativeStderr = &out
	t.Cleanup(func() { nativeStderr = saved })

	Always(true, "fine", nil)
	AlwaysOrUnreachable(true, "fine", nil)
	Sometimes(false, "not yet", nil)
	Reachable("here", nil)
	AlwaysGreaterThan(2, 1, "fine", nil)
	SometimesLessThan(2, 1, "not yet", nil)
	if out.Len() != 0 {
		t.Fatalf("passing properties printed %q", out.String())
	}

	Always(false, "always broke", map[string]any{"x": 1})
	AlwaysOrUnreachable(false, "aou broke", nil)
	Unreachable("reached the unreachable", nil)
	AlwaysLessThan(2, 1, "numeric broke", nil)
	want := "seedfall: property failed: always broke\n" +
		"seedfall: property failed: aou broke\n" +
		"seedfall: property failed: reached the unreachable\n" +
		"seedfall: property failed: numeric broke\n"
	if out.String() != want {
		t.Errorf("stderr got\n%s\nwant\n%s", out.String(), want)
	}
}

func TestNativeGuidanceDoesNothing(t *testing.T) {
	var out bytes.Buffer
	saved := nativeStderr
	nativeStderr = &out
	t.Cleanup(func() { nativeStderr = saved })
	Maximize(3, "queue depth")
	Minimize(1.5, "margin")
	if out.Len() != 0 {
		t.Errorf("guidance printed %q", out.String())
	}
}

func TestNativeBuggifyNeverFires(t *testing.T) {
	for i := 0; i < 100; i++ {
		if Buggify("site") {
			t.Fatal("Buggify fired outside seedfall")
		}
	}
}
