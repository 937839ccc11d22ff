// warm-start: a program whose start-up is most of its run. It computes
// for a while (a digest chain, as a service loading and checking its
// state), then settles until 2 s, then serves a light tail of 0.5 s: a few
// timed writes of a small file. scripts/bench-snapshots runs it from a
// snapshot at 2050ms against from scratch: a child should cost about its
// tail.
package main

import (
	"crypto/sha256"
	"flag"
	"fmt"
	"math/rand"
	"os"
	"time"
)

func main() {
	rounds := flag.Int("rounds", 60000, "digest rounds at start-up")
	stateMB := flag.Int("state-mb", 32, "MiB of state loaded at start-up (an index, a cache)")
	flag.Parse()
	state := make(map[int][]byte)
	for i := 0; i < *stateMB*16; i++ {
		state[i] = make([]byte, 64<<10)
		state[i][0] = byte(i)
	}
	sum := sha256.Sum256([]byte("warm-start"))
	for i := 0; i < *rounds; i++ {
		sum = sha256.Sum256(sum[:])
	}
	for time.Since(start) < 2*time.Second {
		time.Sleep(100 * time.Millisecond)
	}
	fmt.Printf("setup complete %x\n", sum[:4])
	f, err := os.Create("/tail.log")
	if err != nil {
		panic(err)
	}
	for i := 0; i < 10; i++ {
		time.Sleep(time.Duration(20+rand.Intn(60)) * time.Millisecond)
		fmt.Fprintf(f, "tick %d %d\n", i, state[rand.Intn(len(state))][0])
	}
	if err := f.Sync(); err != nil {
		panic(err)
	}
	f.Close()
}

var start = time.Now()
