// go-guide reports numeric guidance on a real guest, for the watermark
// tests (server/search/tests/guidance.rs): "go level" is maximized and
// minimized with 3, 7, 5 a millisecond apart (watermarks 7 and 3, each at
// the time of its call, marked by the reachable just before it); the
// numeric properties evaluate x = 2, 8, 4 against 10 and 0 a millisecond
// apart, so each one's left - right watermark moves in its direction.
// "both levels" is maximized by this node with 4 and by rust-guide with 6.
package main

import (
	"fmt"
	"time"

	"seedfall.dev/sdk/sim"
)

func main() {
	sim.Reachable("go level 3", nil)
	sim.Maximize(3, "go level")
	sim.Minimize(3, "go level")
	time.Sleep(time.Millisecond)
	sim.Reachable("go level 7", nil)
	sim.Maximize(7, "go level")
	sim.Minimize(7, "go level")
	time.Sleep(time.Millisecond)
	sim.Maximize(5, "go level")
	sim.Minimize(5, "go level")
	sim.Maximize(4, "both levels")
	for _, x := range []int{2, 8, 4} {
		switch x {
		case 2:
			sim.Reachable("go x is 2", nil)
		case 8:
			sim.Reachable("go x is 8", nil)
		}
		sim.AlwaysLessThan(x, 10, "go x below 10", nil)
		sim.AlwaysGreaterThanOrEqualTo(x, 0, "go x not negative", nil)
		sim.SometimesGreaterThan(x, 100, "go x above 100", nil)
		sim.SometimesLessThanOrEqualTo(x, 1, "go x at most 1", nil)
		time.Sleep(time.Millisecond)
	}
	fmt.Println("guided")
}
