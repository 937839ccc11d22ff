// Package workload is what an etcd user testing crash recovery of the
// write-ahead log would write, without knowing any bug: the member's start
// (open the WAL, read it all, repair a torn tail once, as etcd's own
// etcdserver.readWAL does), then appends with synced Saves, each
// acknowledged in seedfall's oracle once Save returns. Its properties are
// about the user's data: the member starts again after a crash, and every
// acknowledged entry is there.
//
// The same code runs against the affected release (../affected, etcd
// v3.5.6) and the fixed one (../fixed, v3.5.7); only the go.mod differs.
package workload

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"go.etcd.io/etcd/raft/v3/raftpb"
	"go.etcd.io/etcd/server/v3/wal"
	"go.etcd.io/etcd/server/v3/wal/walpb"
	"go.uber.org/zap"
	"seedfall.dev/sdk/sim"
)

const dir = "/data/member/wal"

func recallAcked() uint64 {
	raw, ok := sim.Recall("acked")
	if !ok {
		return 0
	}
	n, _ := strconv.ParseUint(string(raw), 10, 64)
	return n
}

func payload(i uint64, size int) []byte {
	head := fmt.Sprintf("entry-%d:", i)
	return []byte(head + strings.Repeat("x", max(0, size-len(head))))
}

// open is the member's start: the WAL read back whole, with at most one
// repair of a torn tail (etcd repairs only io.ErrUnexpectedEOF, and never
// twice).
func open(lg *zap.Logger) (*wal.WAL, []raftpb.Entry, error) {
	repaired := false
	for {
		w, err := wal.Open(lg, dir, walpb.Snapshot{})
		if err != nil {
			return nil, nil, fmt.Errorf("opening the WAL: %w", err)
		}
		_, _, ents, err := w.ReadAll()
		if err == nil {
			return w, ents, nil
		}
		w.Close()
		if repaired || !errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, nil, fmt.Errorf("reading the WAL, cannot be repaired: %w", err)
		}
		if !wal.Repair(lg, dir) {
			return nil, nil, fmt.Errorf("repairing the WAL failed: %w", err)
		}
		fmt.Println("repaired the WAL's torn tail")
		repaired = true
	}
}

// Main runs one boot of the member.
func Main() {
	total := flag.Uint64("entries", 600, "entries to append in all")
	size := flag.Int("entry-bytes", 1000, "bytes of each entry's data")
	segment := flag.Int64("segment-bytes", 64*1024, "wal.SegmentSizeBytes: a segment's preallocated size")
	flag.Parse()
	// 64 MB segments would need 64 MB of writes before the WAL first cuts to
	// a new segment; a small segment makes every run cross several, as
	// etcd's own WAL tests do.
	wal.SegmentSizeBytes = *segment
	lg := zap.NewNop()
	if err := os.MkdirAll("/data/member", 0o755); err != nil {
		panic(err)
	}
	acked := recallAcked()
	var w *wal.WAL
	var ents []raftpb.Entry
	if wal.Exist(dir) {
		var err error
		w, ents, err = open(lg)
		sim.Always(err == nil, "the member starts after a crash", map[string]any{"acknowledged": acked, "error": fmt.Sprint(err)})
		if err != nil {
			fmt.Println(err)
			os.Exit(1)
		}
	} else {
		var err error
		w, err = wal.Create(lg, dir, []byte("seedfall"))
		if err != nil {
			panic(err)
		}
	}
	check(ents, acked, *size, "after start")
	fmt.Printf("started with %d entries, %d acknowledged\n", len(ents), acked)
	for next := uint64(len(ents)) + 1; next <= *total; next++ {
		e := raftpb.Entry{Term: 1, Index: next, Type: raftpb.EntryNormal, Data: payload(next, *size)}
		if err := w.Save(raftpb.HardState{Term: 1, Commit: next}, []raftpb.Entry{e}); err != nil {
			panic(err)
		}
		sim.Remember("acked", []byte(strconv.FormatUint(next, 10)))
	}
	w.Close()
	sim.Reachable("every entry acknowledged", map[string]any{"entries": *total})
}

func check(ents []raftpb.Entry, acked uint64, size int, when string) {
	ok := uint64(len(ents)) >= acked
	for i := uint64(0); ok && i < acked; i++ {
		ok = ents[i].Index == i+1 && string(ents[i].Data) == string(payload(i+1, size))
	}
	sim.Always(ok, "acknowledged entries survive crashes", map[string]any{"acknowledged": acked, "read": len(ents), "when": when})
}
