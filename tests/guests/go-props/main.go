// go-props exercises every property kind of the Go SDK on a real guest.
// In the default mode: "x stays below 9" fails in about one seed in ten;
// "x is 3 sometimes" is true in some seeds; "x exceeds 100" is reached but
// never true; "only in dead-code mode" is never reached; "ready" is reached.
package main

import (
	"flag"
	"fmt"
	"time"

	"seedfall.dev/sdk/sim"
)

func main() {
	mode := flag.String("mode", "normal", "normal | unreachable | dead-code | buggify")
	flag.Parse()

	time.Sleep(time.Millisecond)
	sim.SetupComplete(nil)
	x := sim.RandomIntN(10)
	fmt.Printf("x = %d\n", x)
	sim.Reachable("ready", nil)
	sim.Sometimes(x == 3, "x is 3 sometimes", map[string]any{"x": x})
	sim.Sometimes(x > 100, "x exceeds 100", nil)
	sim.AlwaysGreaterThanOrEqualTo(x, 0, "x is not negative", nil)
	if *mode == "dead-code" {
		sim.Always(true, "only in dead-code mode", nil)
		sim.AlwaysOrUnreachable(true, "may never run", nil)
	}
	if *mode == "unreachable" && x < 5 {
		sim.Unreachable("the impossible branch ran", map[string]any{"x": x})
	}
	if *mode == "buggify" {
		fired := 0
		for i := 0; i < 20; i++ {
			if sim.Buggify("slow-path") {
				fired++
			}
		}
		fmt.Printf("buggify fired %d times\n", fired)
		return
	}
	time.Sleep(time.Millisecond)
	sim.Always(x < 9, "x stays below 9", map[string]any{"x": x})
	fmt.Println("after the always")
}
