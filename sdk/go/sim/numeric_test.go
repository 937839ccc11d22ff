// numeric_test.go tests the numeric property forms: the condition each one
// computes, its kind (with the comparison in bits 8-15), and the
// "left"/"right" it adds to the details; and Maximize/Minimize.

package sim

import (
	"math"
	"testing"
)

func TestNumericFormsConditionAndKind(t *testing.T) {
	calls := recordAsserts(t)
	type form struct {
		name string
		f    func(left, right int, message string, details map[string]any)
		kind assertKind
		// cond for (1,2), (2,2), (3,2)
		want [3]bool
	}
	forms := []form{
		{"AlwaysGreaterThan", AlwaysGreaterThan[int], kindAlways | opGreater, [3]bool{false, false, true}},
		{"AlwaysGreaterThanOrEqualTo", AlwaysGreaterThanOrEqualTo[int], kindAlways | opGreaterOrEqual, [3]bool{false, true, true}},
		{"AlwaysLessThan", AlwaysLessThan[int], kindAlways | opLess, [3]bool{true, false, false}},
		{"AlwaysLessThanOrEqualTo", AlwaysLessThanOrEqualTo[int], kindAlways | opLessOrEqual, [3]bool{true, true, false}},
		{"SometimesGreaterThan", SometimesGreaterThan[int], kindSometimes | opGreater, [3]bool{false, false, true}},
		{"SometimesGreaterThanOrEqualTo", SometimesGreaterThanOrEqualTo[int], kindSometimes | opGreaterOrEqual, [3]bool{false, true, true}},
		{"SometimesLessThan", SometimesLessThan[int], kindSometimes | opLess, [3]bool{true, false, false}},
		{"SometimesLessThanOrEqualTo", SometimesLessThanOrEqualTo[int], kindSometimes | opLessOrEqual, [3]bool{true, true, false}},
	}
	wantDetails := [3]string{`{"left":1,"right":2}`, `{"left":2,"right":2}`, `{"left":3,"right":2}`}
	for _, fm := range forms {
		for i, left := range []int{1, 2, 3} {
			fm.f(left, 2, fm.name+" message", nil)
			got := only(t, calls)
			if got.kind != fm.kind || got.cond != fm.want[i] || got.message != fm.name+" message" || got.details != wantDetails[i] {
				t.Errorf("%s(%d, 2): got kind %d cond %v message %q details %s; want kind %d cond %v details %s",
					fm.name, left, got.kind, got.cond, got.message, got.details, fm.kind, fm.want[i], wantDetails[i])
			}
		}
	}
}

func TestNumericDetailsMergeWithoutChangingTheCallersMap(t *testing.T) {
	calls := recordAsserts(t)
	d := map[string]any{"op": "withdraw", "left": "user value"}
	AlwaysGreaterThanOrEqualTo(-5, 0, "balance", d)
	got := only(t, calls)
	if want := `{"left":-5,"op":"withdraw","right":0}`; got.details != want {
		t.Errorf("details %s, want %s", got.details, want)
	}
	if got.cond {
		t.Errorf("-5 >= 0 evaluated true")
	}
	if len(d) != 2 || d["left"] != "user value" {
		t.Errorf("the caller's details map was changed: %v", d)
	}
}

func TestNumericOperandTypes(t *testing.T) {
	calls := recordAsserts(t)
	type celsius float64

	AlwaysLessThan(uint64(math.MaxUint64-1), math.MaxUint64, "u64", nil)
	if got := only(t, calls); !got.cond || got.details != `{"left":18446744073709551614,"right":18446744073709551615}` {
		t.Errorf("uint64: got %+v", got)
	}
	SometimesGreaterThan(celsius(21.5), 20, "named float", nil)
	if got := only(t, calls); !got.cond || got.details != `{"left":21.5,"right":20}` {
		t.Errorf("named float: got %+v", got)
	}
	// JSON has no NaN or infinities: they are spelled as strings, and every
	// comparison with NaN is false.
	AlwaysGreaterThanOrEqualTo(math.NaN(), math.Inf(-1), "nan", nil)
	if got := only(t, calls); got.cond || got.details != `{"left":"NaN","right":"-Inf"}` {
		t.Errorf("NaN: got %+v", got)
	}
	AlwaysLessThanOrEqualTo(float32(1), float32(math.Inf(1)), "inf", nil)
	if got := only(t, calls); !got.cond || got.details != `{"left":1,"right":"+Inf"}` {
		t.Errorf("+Inf: got %+v", got)
	}
}

func TestNumericKindsKeepTheirBaseKind(t *testing.T) {
	calls := recordAsserts(t)
	AlwaysLessThan(1, 2, "m", nil)
	SometimesGreaterThanOrEqualTo(1, 2, "m", nil)
	if a, s := (*calls)[0].kind, (*calls)[1].kind; a&kindMask != kindAlways || a != 0x300 || s&kindMask != kindSometimes || s != 0x202 {
		t.Errorf("kinds %#x %#x, want 0x300 (always, <) and 0x202 (sometimes, >=)", a, s)
	}
}

// guideCall is one host guide call.
type guideCall struct {
	maximize bool
	value    float64
	name     string
}

func TestMaximizeAndMinimizeSendTheValueAsFloat64(t *testing.T) {
	var got []guideCall
	saved := hostGuide
	hostGuide = func(maximize bool, value float64, name string) {
		got = append(got, guideCall{maximize, value, name})
	}
	t.Cleanup(func() { hostGuide = saved })
	type depth uint16
	Maximize(7, "queue depth")
	Maximize(depth(3), "queue depth")
	Minimize(-2.5, "margin")
	Minimize(uint64(math.MaxUint64), "big")
	want := []guideCall{{true, 7, "queue depth"}, {true, 3, "queue depth"}, {false, -2.5, "margin"}, {false, math.MaxUint64, "big"}}
	if len(got) != len(want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("call %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
}
