package history

import (
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

// fakeClock makes a history whose clock the test sets by hand.
func fakeClock(h *History) *int64 {
	var t int64
	h.clock = func() int64 { return t }
	return &t
}

func TestSequentialHistoryIsLinearizable(t *testing.T) {
	h := New("seq")
	now := fakeClock(h)
	*now = 1
	op := h.Call(0, Put("x", "1"))
	*now = 2
	op.Return(Value(""))
	*now = 3
	op = h.Call(1, Get("x"))
	*now = 4
	op.Return(Value("1"))
	r := h.Check(KV(), time.Second)
	if r.Outcome != porcupine.Ok || r.Ops != 2 || r.Pending != 0 || r.Partitions != 1 {
		t.Fatalf("%+v", r)
	}
}

func TestConcurrentReadMaySeeEitherValue(t *testing.T) {
	for _, seen := range []string{"", "1"} {
		h := New("concurrent")
		now := fakeClock(h)
		*now = 1
		w := h.Call(0, Put("x", "1"))
		*now = 2
		rd := h.Call(1, Get("x"))
		*now = 3
		rd.Return(Value(seen))
		*now = 4
		w.Return(Value(""))
		if r := h.Verify(KV(), time.Second); r.Outcome != porcupine.Ok {
			t.Fatalf("read of %q concurrent with the put: %+v", seen, r)
		}
	}
}

func TestStaleReadIsCaught(t *testing.T) {
	h := New("stale")
	now := fakeClock(h)
	*now = 10
	op := h.Call(0, Put("x", "1"))
	*now = 20
	op.Return(Value(""))
	// Another key, linearizable, to check the failing partition is the one reported.
	*now = 21
	h.Call(2, Put("y", "a")).Return(Value(""))
	*now = 30
	op = h.Call(1, Get("x"))
	*now = 40
	op.Return(Value("")) // the put finished before this read began
	r := h.Verify(KV(), time.Second)
	if r.Outcome != porcupine.Illegal || r.Illegal != 1 || r.Partitions != 2 {
		t.Fatalf("stale read not caught: %+v", r)
	}
	if got := r.Details["failing partition size"]; got != 2 {
		t.Fatalf("smallest failing partition: %v", got)
	}
	first, _ := r.Details["first unexplained"].(string)
	if !strings.Contains(first, `get("x") -> ""`) || !strings.Contains(first, "client 1") {
		t.Fatalf("first unexplained: %q", first)
	}
	around, _ := r.Details["ops up to it"].([]string)
	if len(around) != 2 || !strings.Contains(around[0], `put("x", "1")`) {
		t.Fatalf("ops up to it: %q", around)
	}
	if !strings.Contains(r.String(), "Illegal") {
		t.Fatal(r.String())
	}
}

func TestPendingWriteMayTakeEffectLateOrNever(t *testing.T) {
	for _, seen := range []string{"", "1"} {
		h := New("pending")
		now := fakeClock(h)
		*now = 1
		h.Call(0, Put("x", "1")) // timed out: never returns
		*now = 50
		rd := h.Call(1, Get("x"))
		*now = 60
		rd.Return(Value(seen))
		r := h.Verify(KV(), time.Second)
		if r.Outcome != porcupine.Ok || r.Pending != 1 {
			t.Fatalf("read %q after a pending put: %+v", seen, r)
		}
	}
	// But a pending write cannot un-happen a later one.
	h := New("pending-order")
	now := fakeClock(h)
	*now = 1
	h.Call(0, Put("x", "1"))
	*now = 2
	h.Call(1, Put("x", "2")).Return(Value(""))
	*now = 3
	h.Call(1, Get("x")).Return(Value("2"))
	*now = 4
	h.Call(1, Get("x")).Return(Value("2"))
	*now = 5
	h.Call(2, Get("x")).Return(Value("1")) // the pending put landed late: fine
	*now = 6
	h.Call(2, Get("x")).Return(Value("2")) // 2 again after 1: no write explains it
	if r := h.Verify(KV(), time.Second); r.Outcome != porcupine.Illegal {
		t.Fatalf("value flipped back without a write: %+v", r)
	}
}

func TestAppend(t *testing.T) {
	h := New("append")
	now := fakeClock(h)
	*now = 1
	h.Call(0, Append("l", "a")).Return(Value(""))
	*now = 2
	h.Call(0, Append("l", "b")).Return(Value(""))
	*now = 3
	h.Call(1, Get("l")).Return(Value("ab"))
	if r := h.Verify(KV(), 0); r.Outcome != porcupine.Ok {
		t.Fatalf("%+v", r)
	}
	*now = 4
	h.Call(1, Get("l")).Return(Value("ba"))
	if r := h.Verify(KV(), 0); r.Outcome != porcupine.Illegal {
		t.Fatalf("%+v", r)
	}
}

func TestFullHistoryRefusesCalls(t *testing.T) {
	h := NewWithLimits("small", Limits{MaxOps: 2})
	if h.Call(0, Put("x", "1")) == nil || h.Call(0, Get("x")) == nil {
		t.Fatal("refused below the limit")
	}
	if !h.Full() || h.Len() != 2 {
		t.Fatalf("full %v len %d", h.Full(), h.Len())
	}
	op := h.Call(0, Put("x", "2"))
	if op != nil {
		t.Fatal("a full history accepted a call")
	}
	op.Return(Value("")) // a nil Op's Return does nothing
	r := h.Verify(KV(), 0)
	if r.Refused != 1 || r.Ops != 2 || r.Pending != 2 || r.Details["refused calls"] != 1 {
		t.Fatalf("%+v", r)
	}
}

func TestReturnTwiceKeepsTheFirst(t *testing.T) {
	h := New("twice")
	now := fakeClock(h)
	op := h.Call(0, Get("x"))
	*now = 5
	op.Return(Value(""))
	*now = 9
	op.Return(Value("other"))
	ops := h.Operations()
	if ops[0].Return != 5 || ops[0].Output.(KVOutput).Value != "" {
		t.Fatalf("%+v", ops[0])
	}
}

func TestPendingOperationsReturnAtInfinity(t *testing.T) {
	h := New("inf")
	h.Call(3, Put("x", "1"))
	ops := h.Operations()
	if ops[0].Return != math.MaxInt64 || ops[0].Output != nil || ops[0].ClientId != 3 || ops[0].Metadata != "pending" {
		t.Fatalf("%+v", ops[0])
	}
}

func TestDetailsStayBounded(t *testing.T) {
	h := NewWithLimits("big", Limits{MaxReported: 1000})
	now := fakeClock(h)
	long := strings.Repeat("v", 500)
	for i := 0; i < 200; i++ {
		*now = int64(10 * i)
		h.Call(0, Put("x", long)).Return(Value(""))
	}
	*now = 5000
	h.Call(1, Get("x")).Return(Value("nope"))
	r := h.Verify(KV(), 0)
	around := r.Details["ops up to it"].([]string)
	if r.Outcome != porcupine.Illegal || len(around) == 0 || len(around) >= 201 {
		t.Fatalf("%v, %d ops listed", r.Outcome, len(around))
	}
	if !strings.Contains(around[len(around)-1], "nope") {
		t.Fatalf("the list ends at the unexplained op: %q", around[len(around)-1])
	}
}

func TestRealClockAndGoroutines(t *testing.T) {
	h := New("real")
	var mu sync.Mutex
	value := ""
	var wg sync.WaitGroup
	for c := 0; c < 4; c++ {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				if i%2 == 0 {
					v := string(rune('a'+c)) + string(rune('0'+i%10))
					op := h.Call(c, Put("k", v))
					mu.Lock()
					value = v
					mu.Unlock()
					op.Return(Value(""))
				} else {
					op := h.Call(c, Get("k"))
					mu.Lock()
					v := value
					mu.Unlock()
					op.Return(Value(v))
				}
			}
		}(c)
	}
	wg.Wait()
	r := h.Check(KV(), 10*time.Second)
	if r.Outcome != porcupine.Ok || r.Ops != 200 {
		t.Fatalf("a store under one mutex is linearizable: %+v", r)
	}
}
