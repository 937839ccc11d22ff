// check.go owns running porcupine over a history, one partition at a time
// within a time budget, and reporting the outcome as a seedfall property.

package history

import (
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/anishathalye/porcupine"
	"seedfall.dev/sdk/sim"
)

// Result is the outcome of a check.
type Result struct {
	Name       string
	Outcome    porcupine.CheckResult // Ok, Illegal, or Unknown (the budget ran out first)
	Ops        int                   // operations checked
	Pending    int                   // of which never returned
	Refused    int                   // calls refused because the history was full
	Partitions int                   // independent parts the model split the history into
	Illegal    int                   // partitions that are not linearizable
	Unchecked  int                   // partitions the budget did not reach or finish
	Took       time.Duration         // virtual time the check took
	// Details describe the smallest partition that is not linearizable
	// (empty when every partition is): its size, how many of its operations
	// porcupine could order, the first one it could not, and the operations
	// called just before it.
	Details map[string]any
}

// String is one line for a program's output.
func (r Result) String() string {
	s := fmt.Sprintf("history %s: %d ops (%d pending), %d partitions: %s in %v", r.Name, r.Ops, r.Pending, r.Partitions, r.Outcome, r.Took)
	if r.Illegal > 0 {
		s += fmt.Sprintf(", %d not linearizable", r.Illegal)
	}
	if r.Unchecked > 0 {
		s += fmt.Sprintf(", %d unchecked", r.Unchecked)
	}
	return s
}

// Check verifies the history against model within budget (virtual time; 0
// means no limit) and reports it as the property
// sim.Always(result is not Illegal, "history is linearizable", details). A
// check that runs out of budget is Unknown: it does not fail the property,
// and its Result says how many partitions went unchecked.
//
// Under GOOS=wasip1 Go does not preempt goroutines, so the budget is looked
// at between partitions: one partition's check always runs to its end. Bound
// the work with the history's size (and with a model that partitions it), and
// remember that seedfall's watchdog (limits.watchdog_instructions) counts the
// check's instructions like any other.
func (h *History) Check(model porcupine.Model, budget time.Duration) Result {
	r := h.Verify(model, budget)
	details := map[string]any{"history": r.Name, "ops": r.Ops, "pending": r.Pending, "partitions": r.Partitions, "outcome": string(r.Outcome)}
	for k, v := range r.Details {
		details[k] = v
	}
	sim.Always(r.Outcome != porcupine.Illegal, "history is linearizable", details)
	return r
}

// Verify is [History.Check] without the property: it only computes the
// Result.
func (h *History) Verify(model porcupine.Model, budget time.Duration) Result {
	began := time.Now()
	ops := h.Operations()
	h.mu.Lock()
	refused := h.refused
	h.mu.Unlock()
	r := Result{Name: h.name, Ops: len(ops), Refused: refused, Outcome: porcupine.Ok}
	for _, op := range ops {
		if op.Return == math.MaxInt64 {
			r.Pending++
		}
	}
	parts := [][]porcupine.Operation{ops}
	if model.Partition != nil {
		parts = model.Partition(ops)
	}
	r.Partitions = len(parts)
	single := model
	single.Partition, single.PartitionEvent = nil, nil
	var smallest []porcupine.Operation
	for _, part := range parts {
		timeout := time.Duration(0)
		if budget > 0 {
			timeout = budget - time.Since(began)
			if timeout <= 0 {
				r.Unchecked++
				continue
			}
		}
		switch porcupine.CheckOperationsTimeout(single, part, timeout) {
		case porcupine.Illegal:
			r.Illegal++
			if smallest == nil || len(part) < len(smallest) {
				smallest = part
			}
		case porcupine.Unknown:
			r.Unchecked++
		}
	}
	switch {
	case r.Illegal > 0:
		r.Outcome = porcupine.Illegal
		r.Details = h.explain(single, smallest)
	case r.Unchecked > 0:
		r.Outcome = porcupine.Unknown
		r.Details = map[string]any{"unchecked partitions": r.Unchecked}
	}
	if r.Refused > 0 {
		if r.Details == nil {
			r.Details = map[string]any{}
		}
		r.Details["refused calls"] = r.Refused
	}
	r.Took = time.Since(began)
	return r
}

// explain describes a partition that is not linearizable: the longest order
// porcupine found, the earliest-called operation outside it, and the
// operations called up to it, bounded by MaxReported and the host's 8 KiB of
// details.
func (h *History) explain(model porcupine.Model, part []porcupine.Operation) map[string]any {
	_, info := porcupine.CheckOperationsVerbose(model, part, 0)
	var longest []int
	if lins := info.PartialLinearizations(); len(lins) > 0 {
		for _, l := range lins[0] {
			if len(l) > len(longest) {
				longest = l
			}
		}
	}
	ordered := map[int]bool{}
	for _, id := range longest {
		ordered[id] = true
	}
	// Porcupine numbers a partition's operations by their position in it.
	idx := make([]int, len(part))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return part[idx[a]].Call < part[idx[b]].Call })
	culprit := len(idx) - 1
	for pos, i := range idx {
		if !ordered[i] && part[i].Return != math.MaxInt64 {
			culprit = pos
			break
		}
	}
	describe := func(op porcupine.Operation) string {
		text := fmt.Sprintf("%v", op.Input)
		if model.DescribeOperation != nil {
			text = model.DescribeOperation(op.Input, op.Output)
		}
		if len(text) > 160 {
			text = text[:160] + "..."
		}
		ret := "pending"
		if op.Return != math.MaxInt64 {
			ret = time.Duration(op.Return).String()
		}
		return fmt.Sprintf("client %d [%v, %s] %s", op.ClientId, time.Duration(op.Call), ret, text)
	}
	d := map[string]any{
		"failing partition size": len(part),
		"linearized":             len(longest),
		"first unexplained":      describe(part[idx[culprit]]),
	}
	// Walk back from the culprit while the list fits MaxReported entries and
	// about 6 KB (the host keeps 8 KiB of details).
	var around []string
	size := 0
	for pos := culprit; pos >= 0 && len(around) < h.limits.MaxReported; pos-- {
		text := describe(part[idx[pos]])
		if size+len(text)+8 > 6000 && len(around) > 0 {
			break
		}
		size += len(text) + 8
		around = append(around, text)
	}
	for i, j := 0, len(around)-1; i < j; i, j = i+1, j-1 {
		around[i], around[j] = around[j], around[i]
	}
	d["ops up to it"] = around
	return d
}
