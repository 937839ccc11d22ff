// explore: a vault that opens only after six consecutive lucky draws.
//
// The client tries the vault's dials one after another. Each try is lucky
// with odds 1 in 10 (drawn from sim.Random, the stream seedfall steers); an
// unlucky draw sets off the alarm and ends the attempt. Reaching level k
// takes k lucky draws in a row (odds 10^-k), so a plain sweep reaches level
// 6, and opens the vault, about once in a million runs. Feedback-guided
// exploration reaches it in tens of runs: it keeps the run that reached
// level k and branches from just after that moment.
package main

import (
	"fmt"
	"time"

	"seedfall.dev/sdk/sim"
)

const levels = 6

func main() {
	level := 0
	for level < levels {
		// Turning a dial takes a little time: branching points sit between draws.
		time.Sleep(time.Duration(1+sim.RandomIntN(5)) * time.Millisecond)
		if sim.RandomIntN(10) != 0 {
			fmt.Printf("alarm at level %d: the vault stays shut\n", level)
			return
		}
		level++
		fmt.Printf("lucky draw: level %d\n", level)
		// A progress marker for explore, not a requirement every sweep must
		// meet: its message is built at run time, so seedfall's catalog
		// leaves it out of the sweep's never-true check (and says so once).
		sim.Sometimes(true, fmt.Sprintf("level %d reached", level), nil)
	}
	sim.Unreachable("the vault opened after 6 consecutive lucky draws", map[string]any{"levels": level})
}
