// explore-climb: a value that must climb past a bound one small step at a
// time.
//
// x starts at 0. Every millisecond of virtual time it takes one step: up by
// 1 with odds 1 in 3 (drawn from sim.RandomIntN, the `random` stream),
// otherwise down by 1, never below 0. After every step the property
// "x stays below the bound" is checked. The walk drifts down, so x rarely
// strays far from 0: in 300 steps it reaches the bound of 22 in about one
// run in 100,000.
//
// Nothing changes on the way up: the property stays true at every step
// until the one that breaks it, and the same functions run at x = 3 and at
// x = 21. Only the value of x says how close a run came, which is what
// numeric guidance climbs on: from the moment a run reached its highest x,
// each further step up is a coin flip that costs about two runs.
package main

import (
	"fmt"
	"time"

	"seedfall.dev/sdk/sim"
)

const (
	steps = 300
	bound = 22
)

func main() {
	x, highest := 0, 0
	for i := 0; i < steps; i++ {
		time.Sleep(time.Millisecond)
		if sim.RandomIntN(3) == 0 {
			x++
		} else if x > 0 {
			x--
		}
		highest = max(highest, x)
		sim.AlwaysLessThan(x, bound, "x stays below the bound", nil)
	}
	fmt.Printf("%d steps, highest x %d (bound %d)\n", steps, highest, bound)
}
