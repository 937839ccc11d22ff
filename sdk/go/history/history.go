// history.go owns recording a history of operations (calls and returns
// stamped with the run's virtual time) and checking it with porcupine.

// Package history records what a workload's clients asked of a system and
// what it answered, and checks that the answers are linearizable: that some
// order of the operations, each taking effect at one instant between its call
// and its return, explains every answer under a sequential model. The check
// is github.com/anishathalye/porcupine; [KV] is a ready-made key-value model
// for it.
//
//	h := history.New("kv")
//	op := h.Call(client, history.Put("x", "1")) // before sending the request
//	...                                         // send it, wait for the answer
//	op.Return(history.Value(""))                // once it is known to have happened
//	...
//	h.Check(history.KV(), 10*time.Second)       // sim.Always("history is linearizable")
//
// Times come from time.Now, which inside seedfall is the run's virtual clock,
// so a history replays with its seed. They are stamped as seedfall's trace
// stamps events (virtual time since the run began; see [runTime]), so an
// operation's [call, return] in a failure's details lines up with
// `seedfall inspect`. Outside seedfall they count from [New].
//
// An operation whose outcome is unknown (a timeout, a reset connection, a
// server that crashed while answering) must never get a Return: it stays
// pending, and the check lets it take effect at any instant after its call,
// or never. Returning it with a guessed answer makes the check wrong.
//
// The history lives in the memory of the node that records it. Keep that
// node out of the crash faults (list only the servers in
// faults.crash.nodes): a crash of the recording node loses its history.
//
// Every buffer is bounded: a history holds at most [Limits.MaxOps]
// operations. When it is full, [History.Call] returns nil and records
// nothing, and the caller must not perform the operation (a write performed
// but not recorded could explain nothing and would fail the check); a nil
// *Op's Return does nothing, and [History.Full] tells a workload to stop.
// Failure details list at most [Limits.MaxReported] operations.
package history

import (
	"math"
	"sync"
	"time"

	"github.com/anishathalye/porcupine"
)

// Limits bound a history.
type Limits struct {
	// MaxOps is the most operations the history holds (default 10,000).
	MaxOps int
	// MaxReported is the most operations a failure's details list
	// (default 16); details are also kept under the host's 8 KiB.
	MaxReported int
}

// DefaultLimits are the limits of [New].
var DefaultLimits = Limits{MaxOps: 10_000, MaxReported: 16}

// A History is a concurrent log of operations. Its methods are safe for use
// by many goroutines.
type History struct {
	name   string
	limits Limits
	start  time.Time

	clock func() int64 // virtual ns since start; tests replace it

	mu      sync.Mutex
	ops     []record
	refused int
}

type record struct {
	client   int
	input    any
	call     int64
	output   any
	ret      int64
	returned bool
}

// New returns an empty history named name (the name appears in the check's
// details and output), with [DefaultLimits].
func New(name string) *History {
	return NewWithLimits(name, DefaultLimits)
}

// NewWithLimits is [New] with explicit limits; a zero field takes its default.
func NewWithLimits(name string, limits Limits) *History {
	if limits.MaxOps <= 0 {
		limits.MaxOps = DefaultLimits.MaxOps
	}
	if limits.MaxReported <= 0 {
		limits.MaxReported = DefaultLimits.MaxReported
	}
	h := &History{name: name, limits: limits, start: time.Now()}
	base := runTime(h.start)
	h.clock = func() int64 { return base + time.Since(h.start).Nanoseconds() }
	return h
}

// An Op is one recorded call. Return records its answer.
type Op struct {
	h *History
	i int
}

// Call records that client (a small number naming one sequential client,
// from 0) invokes an operation with input, now. Call it before the request
// leaves. It returns nil, recording nothing, when the history is full: then
// do not perform the operation.
func (h *History) Call(client int, input any) *Op {
	now := h.now()
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.ops) >= h.limits.MaxOps {
		h.refused++
		return nil
	}
	h.ops = append(h.ops, record{client: client, input: input, call: now})
	return &Op{h: h, i: len(h.ops) - 1}
}

// Return records the operation's output, now. Call it only once the outcome
// is certain; an operation that never returns stays pending. A second Return
// and a Return on a nil Op do nothing.
func (o *Op) Return(output any) {
	if o == nil {
		return
	}
	now := o.h.now()
	o.h.mu.Lock()
	defer o.h.mu.Unlock()
	r := &o.h.ops[o.i]
	if r.returned {
		return
	}
	r.output, r.ret, r.returned = output, now, true
}

// Full reports whether the history holds MaxOps operations.
func (h *History) Full() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.ops) >= h.limits.MaxOps
}

// Len returns how many operations the history holds, pending ones included.
func (h *History) Len() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.ops)
}

// Operations returns the history in porcupine's form. A pending operation
// has a nil Output and returns at math.MaxInt64: it may take effect at any
// time after its call. Metadata holds "pending" for those.
func (h *History) Operations() []porcupine.Operation {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]porcupine.Operation, 0, len(h.ops))
	for _, r := range h.ops {
		op := porcupine.Operation{ClientId: r.client, Input: r.input, Call: r.call, Output: r.output, Return: r.ret}
		if !r.returned {
			op.Output, op.Return, op.Metadata = nil, math.MaxInt64, "pending"
		}
		out = append(out, op)
	}
	return out
}

// now is the run's virtual time in nanoseconds, as seedfall's trace shows
// it (outside seedfall: since the history began); monotonic.
func (h *History) now() int64 {
	return h.clock()
}
