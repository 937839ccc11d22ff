// go-antithesis is unmodified code written against the Antithesis Go SDK:
// seedfall sets ANTITHESIS_SDK_LOCAL_OUTPUT and turns the SDK's JSON lines
// into property events, and its catalog scan finds the assert.* calls.
package main

import (
	"fmt"

	"github.com/antithesishq/antithesis-sdk-go/assert"
	"github.com/antithesishq/antithesis-sdk-go/lifecycle"
	"github.com/antithesishq/antithesis-sdk-go/random"
)

func main() {
	lifecycle.SetupComplete(map[string]any{"stage": "ready"})
	x := random.GetRandom() % 10
	fmt.Printf("x = %d\n", x)
	assert.Reachable("antithesis reached main", nil)
	assert.Sometimes(x == 3, "antithesis x is 3 sometimes", map[string]any{"x": x})
	if x == 42 {
		assert.Always(true, "antithesis never reached", nil)
	}
	assert.Always(x < 9, "antithesis x stays below 9", map[string]any{"x": x})
	// Numeric: the SDK also writes an antithesis_guidance line (left - right,
	// maximized), which seedfall keeps as a watermark.
	assert.AlwaysLessThan(x, 10, "antithesis x below 10", nil)
	fmt.Println("done")
}
