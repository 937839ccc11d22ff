// explore-coverage: a door with two locks, each opened by a 1-in-400 draw.
//
// An ordinary Go program: it imports nothing from seedfall and declares no
// properties. Each lock is decided by crypto/rand at the moment it is
// tried (under wasip1 every crypto/rand read is a WASI random_get call,
// which seedfall answers from its `random` stream). Both locks open in about
// one run in 160,000; then the program panics, and a panic fails the run.
//
// The only trace of progress is which functions ran: stageOne is entered
// only after the first lucky draw, stageTwo only after the second. That is
// what function-entry coverage gives `seedfall explore` to climb on.
package main

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"time"
)

// odds of each lock opening: 1 in odds.
const odds = 400

// draw returns a fresh random number in [0, n), read from crypto/rand now.
func draw(n uint64) uint64 {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err)
	}
	return binary.LittleEndian.Uint64(b[:]) % n
}

func main() {
	// Walking up to the door takes a moment.
	time.Sleep(2 * time.Millisecond)
	if draw(odds) == 0 {
		stageOne()
	}
	// Walking away again: the run ends a few milliseconds later.
	time.Sleep(5 * time.Millisecond)
}

// stageOne runs only when the first lock opened.
//
//go:noinline
func stageOne() {
	fmt.Println("stage one: the first lock opened")
	// Reaching for the second lock takes a few milliseconds: a branch from
	// just after the first lock opened re-rolls the draw below.
	time.Sleep(3 * time.Millisecond)
	if draw(odds) == 0 {
		stageTwo()
	}
}

// stageTwo runs only when both locks opened.
//
//go:noinline
func stageTwo() {
	time.Sleep(1 * time.Millisecond)
	breach()
}

//go:noinline
func breach() {
	panic("both locks opened: the door is breached")
}
