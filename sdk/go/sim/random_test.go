// random_test.go tests the helpers built on the `random` stream against a
// scripted stream (exact values, rejection, bounds) and against the real
// stream (bounds over many draws: math/rand/v2 natively, the host under
// seedfall).

package sim

import (
	"math"
	"testing"
)

func TestRandomReturnsTheStream(t *testing.T) {
	scriptRandom(t, 7, math.MaxUint64)
	if a, b := Random(), Random(); a != 7 || b != math.MaxUint64 {
		t.Errorf("Random gave %d, %d; want 7, %d", a, b, uint64(math.MaxUint64))
	}
}

func TestRandomIntNIsTheHighWordOfTheProduct(t *testing.T) {
	// With n = 4 no draw is rejected (2^64 mod 4 = 0): the result is the top
	// two bits of the draw.
	scriptRandom(t, 0, 1<<62, 1<<63, math.MaxUint64)
	for want := 0; want < 4; want++ {
		if got := RandomIntN(4); got != want {
			t.Errorf("draw %d: RandomIntN(4) = %d, want %d", want, got, want)
		}
	}
	scriptRandom(t, math.MaxUint64)
	if got := RandomIntN(1); got != 0 {
		t.Errorf("RandomIntN(1) = %d, want 0", got)
	}
	scriptRandom(t, math.MaxUint64)
	if got := RandomIntN(math.MaxInt); got != math.MaxInt-1 {
		t.Errorf("RandomIntN(MaxInt) = %d, want %d", got, math.MaxInt-1)
	}
}

func TestRandomIntNRejectsBiasedDraws(t *testing.T) {
	// n = 3: 2^64 mod 3 = 1, so only the draw whose low word of x*3 is 0,
	// x = 0, is rejected. The next draw, MaxUint64, gives 2.
	drawn := scriptRandom(t, 0, math.MaxUint64)
	if got := RandomIntN(3); got != 2 {
		t.Errorf("RandomIntN(3) = %d, want 2", got)
	}
	if drawn() != 2 {
		t.Errorf("drew %d values, want 2 (the first rejected)", drawn())
	}
	// x = 1: low word 3 >= 1, accepted, result 0, one draw.
	drawn = scriptRandom(t, 1)
	if got := RandomIntN(3); got != 0 || drawn() != 1 {
		t.Errorf("RandomIntN(3) = %d after %d draws, want 0 after 1", got, drawn())
	}
}

func TestRandomIntNPanicsOnNonPositiveN(t *testing.T) {
	for _, n := range []int{0, -1, math.MinInt} {
		func() {
			defer func() {
				if r := recover(); r != "sim: RandomIntN called with n <= 0" {
					t.Errorf("RandomIntN(%d): recovered %v, want the n <= 0 panic", n, r)
				}
			}()
			RandomIntN(n)
		}()
	}
}

func TestRandomIntNBoundsOnTheRealStream(t *testing.T) {
	for _, n := range []int{1, 2, 3, 7, 10, 1000, math.MaxInt} {
		for i := 0; i < 2000; i++ {
			if v := RandomIntN(n); v < 0 || v >= n {
				t.Fatalf("RandomIntN(%d) = %d, out of [0, %d)", n, v, n)
			}
		}
	}
	// Every value of a small range comes up.
	seen := make([]bool, 5)
	for i := 0; i < 1000; i++ {
		seen[RandomIntN(5)] = true
	}
	for v, ok := range seen {
		if !ok {
			t.Errorf("RandomIntN(5) never gave %d in 1000 draws", v)
		}
	}
}

func TestRandomFloat64(t *testing.T) {
	scriptRandom(t, 0, math.MaxUint64, 1<<63)
	if got := RandomFloat64(); got != 0 {
		t.Errorf("RandomFloat64 of 0 = %v, want 0", got)
	}
	if got, want := RandomFloat64(), 1-math.Pow(2, -53); got != want {
		t.Errorf("RandomFloat64 of MaxUint64 = %v, want %v (below 1)", got, want)
	}
	if got := RandomFloat64(); got != 0.5 {
		t.Errorf("RandomFloat64 of 2^63 = %v, want 0.5", got)
	}
}

func TestRandomBoolAndChoice(t *testing.T) {
	scriptRandom(t, 1, 1<<63)
	if a, b := RandomBool(), RandomBool(); a || !b {
		t.Errorf("RandomBool gave %v, %v; want false, true", a, b)
	}
	scriptRandom(t, 0, math.MaxUint64)
	items := []string{"x", "y", "z", "w"}
	if a, b := RandomChoice(items), RandomChoice(items); a != "x" || b != "w" {
		t.Errorf("RandomChoice gave %q, %q; want x, w", a, b)
	}
	func() {
		defer func() {
			if r := recover(); r != "sim: RandomChoice called with an empty slice" {
				t.Errorf("RandomChoice(nil): recovered %v, want the empty-slice panic", r)
			}
		}()
		RandomChoice[int](nil)
	}()
}
