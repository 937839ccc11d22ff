// assert.go owns the plain properties (Always, AlwaysOrUnreachable,
// Sometimes, Reachable, Unreachable) and SetupComplete.

package sim

// Always asserts that cond is true every time this line runs, and that it
// runs at least once across the sweep. A false evaluation fails the run at
// once.
func Always(cond bool, message string, details map[string]any) {
	hostAssert(kindAlways, cond, message, encodeDetails(details), callerLocation(1))
}

// AlwaysOrUnreachable asserts that cond is true every time this line runs;
// never running it is fine. A false evaluation fails the run at once.
func AlwaysOrUnreachable(cond bool, message string, details map[string]any) {
	hostAssert(kindAlwaysOrUnreachable, cond, message, encodeDetails(details), callerLocation(1))
}

// Sometimes asserts that cond is true at least once across the sweep: it
// fails the sweep if no evaluation in any run was true.
func Sometimes(cond bool, message string, details map[string]any) {
	hostAssert(kindSometimes, cond, message, encodeDetails(details), callerLocation(1))
}

// Reachable asserts that this line runs at least once across the sweep.
func Reachable(message string, details map[string]any) {
	hostAssert(kindReachable, true, message, encodeDetails(details), callerLocation(1))
}

// Unreachable asserts that this line never runs. Reaching it fails the run at
// once.
func Unreachable(message string, details map[string]any) {
	hostAssert(kindUnreachable, true, message, encodeDetails(details), callerLocation(1))
}

// SetupComplete tells seedfall that the workload finished its set-up; details
// (may be nil) are recorded with the event.
func SetupComplete(details map[string]any) {
	hostSetupComplete(encodeDetails(details))
}
