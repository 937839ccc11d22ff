// clock_wasip1.go owns reading the run's virtual time inside seedfall.

//go:build wasip1

package history

import "time"

// realtimeEpoch is where seedfall starts every node's realtime clock
// (2024-01-01T00:00:00Z, server/sim/src/wasi/clock.rs): realtime minus it is
// the virtual time since the run began, on a node whose clock no clock_skew
// or clock_jump fault touched.
var realtimeEpoch = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

// runTime is the run's virtual time at t, in nanoseconds. It is read once,
// when a history begins; later stamps add the monotonic time since then, so
// a clock jump later on cannot move them backwards.
func runTime(t time.Time) int64 {
	if d := t.Sub(realtimeEpoch); d > 0 {
		return d.Nanoseconds()
	}
	return 0
}
