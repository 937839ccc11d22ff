// numeric.go owns the numeric property forms (AlwaysGreaterThan and the
// others): they compare two operands, add them to the details as "left" and
// "right", and evaluate an always or sometimes property on the result. The
// comparison rides in the kind's bits 8-15, so the host also guides
// left - right toward the bound without a second host call. It also owns
// Maximize and Minimize, plain numeric guidance.

package sim

import (
	"math"
	"strconv"
)

// Number is any ordered numeric type the numeric properties accept.
type Number interface {
	~int | ~int8 | ~int16 | ~int32 | ~int64 |
		~uint | ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~uintptr |
		~float32 | ~float64
}

// AlwaysGreaterThan is Always(left > right, ...) with both operands in the details.
func AlwaysGreaterThan[T Number](left, right T, message string, details map[string]any) {
	numeric(kindAlways|opGreater, left > right, left, right, message, details, callerLocation(1))
}

// AlwaysGreaterThanOrEqualTo is Always(left >= right, ...) with both operands in the details.
func AlwaysGreaterThanOrEqualTo[T Number](left, right T, message string, details map[string]any) {
	numeric(kindAlways|opGreaterOrEqual, left >= right, left, right, message, details, callerLocation(1))
}

// AlwaysLessThan is Always(left < right, ...) with both operands in the details.
func AlwaysLessThan[T Number](left, right T, message string, details map[string]any) {
	numeric(kindAlways|opLess, left < right, left, right, message, details, callerLocation(1))
}

// AlwaysLessThanOrEqualTo is Always(left <= right, ...) with both operands in the details.
func AlwaysLessThanOrEqualTo[T Number](left, right T, message string, details map[string]any) {
	numeric(kindAlways|opLessOrEqual, left <= right, left, right, message, details, callerLocation(1))
}

// SometimesGreaterThan is Sometimes(left > right, ...) with both operands in the details.
func SometimesGreaterThan[T Number](left, right T, message string, details map[string]any) {
	numeric(kindSometimes|opGreater, left > right, left, right, message, details, callerLocation(1))
}

// SometimesGreaterThanOrEqualTo is Sometimes(left >= right, ...) with both operands in the details.
func SometimesGreaterThanOrEqualTo[T Number](left, right T, message string, details map[string]any) {
	numeric(kindSometimes|opGreaterOrEqual, left >= right, left, right, message, details, callerLocation(1))
}

// SometimesLessThan is Sometimes(left < right, ...) with both operands in the details.
func SometimesLessThan[T Number](left, right T, message string, details map[string]any) {
	numeric(kindSometimes|opLess, left < right, left, right, message, details, callerLocation(1))
}

// SometimesLessThanOrEqualTo is Sometimes(left <= right, ...) with both operands in the details.
func SometimesLessThanOrEqualTo[T Number](left, right T, message string, details map[string]any) {
	numeric(kindSometimes|opLessOrEqual, left <= right, left, right, message, details, callerLocation(1))
}

// numeric sends one evaluation of a numeric property. The caller's details
// map is copied, never changed; "left" and "right" replace any keys of the
// same name in it.
func numeric[T Number](kind assertKind, cond bool, left, right T, message string, details map[string]any, location string) {
	all := make(map[string]any, len(details)+2)
	for k, v := range details {
		all[k] = v
	}
	all["left"] = operand(left)
	all["right"] = operand(right)
	hostAssert(kind, cond, message, encodeDetails(all), location)
}

// operand returns v as it should appear in the details. JSON has no NaN or
// infinities, so those are spelled as strings ("NaN", "+Inf", "-Inf") rather
// than making the whole details unencodable.
func operand[T Number](v T) any {
	f := float64(v)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	return v
}

// Maximize tells seedfall that the quantity name should be driven up: each
// call reports one value, and a run's watermark for name is the largest value
// it reported, with the virtual time it was first reached. Explore prefers
// runs that raise a watermark, so it climbs toward large values (a queue
// length, a retry count, how far a replica lags). It is guidance only: it
// never fails a run or a sweep. NaN and infinities are ignored; a name is at
// most 4096 bytes, and a run keeps at most 1,000 watermarks (docs/limits.md).
//
//	sim.Maximize(len(queue), "queue depth")
func Maximize[T Number](value T, name string) {
	hostGuide(true, float64(value), name)
}

// Minimize is Maximize toward small values: the watermark is the smallest
// value reported (a free-space margin, the time left before a deadline).
func Minimize[T Number](value T, name string) {
	hostGuide(false, float64(value), name)
}
