// assert_test.go tests the plain properties, SetupComplete and the details
// encoding: what reaches the host's assert call (kind, cond, message,
// details, location).

package sim

import (
	"errors"
	"strings"
	"testing"
)

func TestPlainPropertiesSendKindCondMessageAndDetails(t *testing.T) {
	calls := recordAsserts(t)
	d := map[string]any{"n": 3}

	Always(false, "a", d)
	if got := only(t, calls); got.kind != kindAlways || got.cond || got.message != "a" || got.details != `{"n":3}` {
		t.Errorf("Always: got %+v", got)
	}
	AlwaysOrUnreachable(true, "b", nil)
	if got := only(t, calls); got.kind != kindAlwaysOrUnreachable || !got.cond || got.message != "b" || got.details != "" {
		t.Errorf("AlwaysOrUnreachable: got %+v", got)
	}
	Sometimes(false, "c", map[string]any{})
	if got := only(t, calls); got.kind != kindSometimes || got.cond || got.message != "c" || got.details != "" {
		t.Errorf("Sometimes: got %+v", got)
	}
	Reachable("d", d)
	if got := only(t, calls); got.kind != kindReachable || !got.cond || got.message != "d" || got.details != `{"n":3}` {
		t.Errorf("Reachable: got %+v", got)
	}
	Unreachable("e", nil)
	if got := only(t, calls); got.kind != kindUnreachable || !got.cond || got.message != "e" || got.details != "" {
		t.Errorf("Unreachable: got %+v", got)
	}
}

func TestKindsMatchTheABINumbers(t *testing.T) {
	kinds := []assertKind{kindAlways, kindAlwaysOrUnreachable, kindSometimes, kindReachable, kindUnreachable}
	for want, k := range kinds {
		if uint32(k) != uint32(want) {
			t.Errorf("kind %d has number %d", want, k)
		}
	}
}

func TestMessagesAreSentVerbatim(t *testing.T) {
	calls := recordAsserts(t)
	msg := "  leading space, \"quotes\", tab\t, newline\n, ünïcode  "
	Always(true, msg, nil)
	if got := only(t, calls); got.message != msg {
		t.Errorf("message %q, want %q", got.message, msg)
	}
	Sometimes(true, "", nil)
	if got := only(t, calls); got.message != "" {
		t.Errorf("empty message became %q", got.message)
	}
}

func TestLocationIsTheCallersLine(t *testing.T) {
	calls := recordAsserts(t)
	check := func(name, want string) {
		t.Helper()
		got := only(t, calls).location
		if got != want {
			t.Errorf("%s: location %q, want %q", name, got, want)
		}
		if !strings.Contains(got, "assert_test.go:") {
			t.Errorf("%s: location %q is not in assert_test.go", name, got)
		}
	}

	want := nextLine()
	Always(true, "m", nil)
	check("Always", want)
	want = nextLine()
	AlwaysOrUnreachable(true, "m", nil)
	check("AlwaysOrUnreachable", want)
	want = nextLine()
	Sometimes(true, "m", nil)
	check("Sometimes", want)
	want = nextLine()
	Reachable("m", nil)
	check("Reachable", want)
	want = nextLine()
	Unreachable("m", nil)
	check("Unreachable", want)
	want = nextLine()
	AlwaysGreaterThan(2, 1, "m", nil)
	check("AlwaysGreaterThan", want)
	want = nextLine()
	AlwaysGreaterThanOrEqualTo(2.5, 1, "m", nil)
	check("AlwaysGreaterThanOrEqualTo", want)
	want = nextLine()
	AlwaysLessThan[uint8](1, 2, "m", nil)
	check("AlwaysLessThan", want)
	want = nextLine()
	AlwaysLessThanOrEqualTo(1, 2, "m", nil)
	check("AlwaysLessThanOrEqualTo", want)
	want = nextLine()
	SometimesGreaterThan(int64(2), 1, "m", nil)
	check("SometimesGreaterThan", want)
	want = nextLine()
	SometimesGreaterThanOrEqualTo(2, 1, "m", nil)
	check("SometimesGreaterThanOrEqualTo", want)
	want = nextLine()
	SometimesLessThan(float32(1), 2, "m", nil)
	check("SometimesLessThan", want)
	want = nextLine()
	SometimesLessThanOrEqualTo(1, 2, "m", nil)
	check("SometimesLessThanOrEqualTo", want)
}

// The location must also be right when the property is called from a helper
// function or a closure (the frame that called the SDK, not its caller).
func TestLocationFromAClosure(t *testing.T) {
	calls := recordAsserts(t)
	var want string
	f := func() {
		want = nextLine()
		AlwaysLessThan(1, 2, "m", nil)
	}
	f()
	if got := only(t, calls).location; got != want {
		t.Errorf("location %q, want %q", got, want)
	}
}

func TestSetupCompleteSendsDetails(t *testing.T) {
	var got []string
	saved := hostSetupComplete
	hostSetupComplete = func(details string) { got = append(got, details) }
	t.Cleanup(func() { hostSetupComplete = saved })

	SetupComplete(map[string]any{"nodes": 3, "leader": "a"})
	SetupComplete(nil)
	want := []string{`{"leader":"a","nodes":3}`, ""}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("setup_complete details %q, want %q", got, want)
	}
}

type badJSON struct{}

func (badJSON) MarshalJSON() ([]byte, error) { return nil, errors.New("no way") }

type panickyJSON struct{}

func (panickyJSON) MarshalJSON() ([]byte, error) { panic("boom") }

func TestEncodeDetails(t *testing.T) {
	cases := []struct {
		name    string
		details map[string]any
		want    string
	}{
		{"nil", nil, ""},
		{"empty", map[string]any{}, ""},
		{"sorted keys", map[string]any{"b": 1, "a": []int{1, 2}, "c": nil}, `{"a":[1,2],"b":1,"c":null}`},
		{"no HTML escaping", map[string]any{"s": "<a&b>"}, `{"s":"<a&b>"}`},
		{"nested", map[string]any{"m": map[string]any{"x": true}}, `{"m":{"x":true}}`},
		{"unsupported type", map[string]any{"ch": make(chan int)}, `{"details_error":"json: unsupported type: chan int"}`},
		{"failing MarshalJSON", map[string]any{"v": badJSON{}}, `{"details_error":"json: error calling MarshalJSON for type sim.badJSON: no way"}`},
		{"panicking MarshalJSON", map[string]any{"v": panickyJSON{}}, `{"details_error":"panic while encoding details: boom"}`},
	}
	for _, c := range cases {
		if got := encodeDetails(c.details); got != c.want {
			t.Errorf("%s: got %s, want %s", c.name, got, c.want)
		}
	}
}
