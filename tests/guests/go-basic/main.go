// go-basic is a test guest for the engine: an ordinary Go program that does
// not know it is simulated. It exercises goroutines, channels, timers, the
// clocks, both random sources and the filesystem, and can be told to fail in
// the ways a real service fails (panic, non-zero exit, a spin without
// blocking) so the engine's verdicts are tested on real Go.
package main

import (
	crand "crypto/rand"
	"encoding/binary"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"time"
)

func main() {
	mode := flag.String("mode", "work", "work | panic-sometimes | exit3 | spin | spin-clock | files")
	workers := flag.Int("workers", 3, "goroutines in the work mode")
	flag.Parse()

	switch *mode {
	case "work":
		work(*workers)
	case "panic-sometimes":
		work(*workers)
		if rand.IntN(4) == 0 {
			explode(rand.IntN(100))
		}
	case "exit3":
		fmt.Println("exiting with 3")
		os.Exit(3)
	case "spin":
		spin()
	case "spin-clock":
		start := time.Now()
		n := 0
		for time.Since(start) < 10*time.Millisecond {
			n++
		}
		fmt.Printf("spun %d times for %v\n", n > 0, time.Since(start) >= 10*time.Millisecond)
	case "files":
		files()
	default:
		fmt.Fprintf(os.Stderr, "unknown mode %q\n", *mode)
		os.Exit(2)
	}
}

// work starts goroutines that sleep random amounts and report over a
// channel; the order they report in depends on the seed.
func work(workers int) {
	var seed [8]byte
	if _, err := crand.Read(seed[:]); err != nil {
		panic(err)
	}
	fmt.Printf("crypto seed %016x\n", binary.LittleEndian.Uint64(seed[:]))

	start := time.Now()
	results := make(chan string, workers)
	var wg sync.WaitGroup
	for i := 0; i < workers; i++ {
		wg.Add(1)
		go func(id int) {
			defer wg.Done()
			for round := 0; round < 3; round++ {
				time.Sleep(time.Duration(1+rand.IntN(20)) * time.Millisecond)
			}
			results <- fmt.Sprintf("worker %d done after %v", id, time.Since(start).Round(time.Millisecond))
		}(i)
	}
	wg.Wait()
	close(results)
	var order []string
	for r := range results {
		fmt.Println(r)
		order = append(order, r[:8])
	}
	files()
	fmt.Printf("wall clock year %d, elapsed %v\n", time.Now().Year(), time.Since(start).Round(time.Millisecond))
	_ = strings.Join(order, ",")
}

func files() {
	if err := os.MkdirAll("/data", 0o755); err != nil {
		panic(err)
	}
	f, err := os.Create("/data/log.txt")
	if err != nil {
		panic(err)
	}
	for i := 0; i < 3; i++ {
		fmt.Fprintf(f, "entry %d %d\n", i, rand.IntN(1000))
	}
	if err := f.Sync(); err != nil {
		panic(err)
	}
	f.Close()
	data, err := os.ReadFile("/data/log.txt")
	if err != nil {
		panic(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	fmt.Printf("read back %d lines, first %q\n", len(lines), lines[0])
	entries, err := os.ReadDir("/data")
	if err != nil {
		panic(err)
	}
	for _, e := range entries {
		info, _ := e.Info()
		fmt.Printf("dir entry %s %d bytes\n", e.Name(), info.Size())
	}
}

//go:noinline
func explode(n int) {
	panic(fmt.Sprintf("the ledger is corrupt at entry %d", n))
}

//go:noinline
func spin() {
	x := uint64(1)
	for {
		x = x*6364136223846793005 + 1
		if x == 0 {
			break
		}
	}
	fmt.Println(x)
}
