// location.go owns finding the user's call site ("file:line") that each
// property reports as its location.

package sim

import (
	"runtime"
	"strconv"
)

// callerLocation returns "file:line" of a frame above the function that calls
// it: skip 0 is that function itself, 1 its caller, and so on. Every exported
// property calls callerLocation(1), so the location is the user's line that
// called the property. Built with -trimpath (as seedfall builds Go nodes) the
// file is module-relative, like example.com/mod/dir/file.go. It returns ""
// when the stack is not that deep.
func callerLocation(skip int) string {
	_, file, line, ok := runtime.Caller(skip + 1)
	if !ok {
		return ""
	}
	return file + ":" + strconv.Itoa(line)
}
