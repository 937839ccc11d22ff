// clock_native.go owns the history's time base outside seedfall.

//go:build !wasip1

package history

import "time"

// runTime is 0 outside seedfall: a history's times count from New.
func runTime(time.Time) int64 { return 0 }
