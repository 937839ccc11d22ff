// ledger is a tiny bank: tellers (goroutines) move money between accounts
// and keep a journal on disk. Each teller checks the balance, then writes
// the journal entry, then debits: a check-then-act across a blocking call.
// Most interleavings are fine; a few let two tellers spend the same money.
// This is an ordinary Go program: it does not know it is simulated.
package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"sync"
	"time"
)

type bank struct {
	mu       sync.Mutex
	balances []int
	journal  *os.File
}

func (b *bank) transfer(teller, from, to, amount int) {
	b.mu.Lock()
	ok := b.balances[from] >= amount
	b.mu.Unlock()
	if !ok {
		return
	}
	// Writing the journal usually is instant, but now and then the disk is
	// slow and other tellers run meanwhile.
	fmt.Fprintf(b.journal, "teller %d: %d -> %d: %d\n", teller, from, to, amount)
	fmt.Printf("teller %d moves %d from account %d to %d\n", teller, amount, from, to)
	if rand.IntN(12) == 0 {
		time.Sleep(time.Duration(1+rand.IntN(3)) * time.Millisecond)
	}

	b.mu.Lock()
	defer b.mu.Unlock()
	b.balances[from] -= amount
	b.balances[to] += amount
	if b.balances[from] < 0 {
		panic(fmt.Sprintf("account %d overdrawn: balance %d after teller %d moved %d", from, b.balances[from], teller, amount))
	}
}

func main() {
	journal, err := os.Create("/journal.log")
	if err != nil {
		panic(err)
	}
	defer journal.Close()
	b := &bank{balances: []int{100, 100, 100}, journal: journal}

	var wg sync.WaitGroup
	for teller := 1; teller <= 3; teller++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 5; i++ {
				from := rand.IntN(3)
				to := (from + 1 + rand.IntN(2)) % 3
				b.transfer(teller, from, to, 30+rand.IntN(50))
				time.Sleep(time.Duration(1+rand.IntN(10)) * time.Millisecond)
			}
		}()
	}
	wg.Wait()
	total := 0
	for _, v := range b.balances {
		total += v
	}
	fmt.Printf("balances %v, total %d\n", b.balances, total)
}
