// go-pebble: github.com/cockroachdb/pebble/v2, unmodified, on the simulated
// disk (built with the storage overlay, which gives it pebble's Unix file
// system on wasip1). Each boot opens the store, checks that every write it
// acknowledged (a synced Set) before a crash is still there, writes more,
// and checks again before it exits.
package main

import (
	"flag"
	"fmt"
	"os"
	"strconv"

	"github.com/cockroachdb/pebble/v2"
	"seedfall.dev/sdk/sim"
)

func recallAcked() int {
	raw, ok := sim.Recall("acked/" + os.Getenv("SEEDFALL_NODE"))
	if !ok {
		return 0
	}
	n, _ := strconv.Atoi(string(raw))
	return n
}

func verify(db *pebble.DB, acked int, when string) {
	missing := 0
	for i := 0; i < acked; i++ {
		v, closer, err := db.Get([]byte(fmt.Sprintf("k%04d", i)))
		if err != nil {
			missing++
			continue
		}
		if string(v) != fmt.Sprintf("v%04d", i) {
			missing++
		}
		closer.Close()
	}
	sim.Always(missing == 0, "acknowledged pebble writes survive crashes", map[string]any{"acknowledged": acked, "missing": missing, "when": when})
}

func main() {
	writes := flag.Int("writes", 40, "keys to write in all")
	flag.Parse()
	db, err := pebble.Open("/data/pebble", &pebble.Options{Logger: quiet{}})
	if err != nil {
		panic(err)
	}
	acked := recallAcked()
	verify(db, acked, "after open")
	fmt.Printf("opened with %d acknowledged keys\n", acked)
	for i := acked; i < *writes; i++ {
		if err := db.Set([]byte(fmt.Sprintf("k%04d", i)), []byte(fmt.Sprintf("v%04d", i)), pebble.Sync); err != nil {
			panic(err)
		}
		sim.Remember("acked/"+os.Getenv("SEEDFALL_NODE"), []byte(strconv.Itoa(i+1)))
	}
	verify(db, *writes, "before exit")
	if err := db.Close(); err != nil {
		panic(err)
	}
	fmt.Println("done")
}

// quiet drops pebble's informational log lines; errors still panic.
type quiet struct{}

func (quiet) Infof(string, ...interface{})  {}
func (quiet) Errorf(string, ...interface{}) {}
func (quiet) Fatalf(format string, args ...interface{}) {
	panic(fmt.Sprintf(format, args...))
}
