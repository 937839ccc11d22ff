// go-etcdwal: etcd's write-ahead log (go.etcd.io/etcd/server/v3/storage/wal),
// unmodified, on the simulated disk (built with the storage overlay). Each
// boot opens (or creates) the log, repairs a torn tail as etcd's server
// does, checks that every entry it acknowledged before a crash reads back, appends more with a synced Save, and checks
// again before it exits.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"

	"go.etcd.io/etcd/server/v3/storage/wal"
	"go.etcd.io/etcd/server/v3/storage/wal/walpb"
	"go.etcd.io/raft/v3/raftpb"
	"go.uber.org/zap"
	"seedfall.dev/sdk/sim"
)

const dir = "/data/wal"

func recallAcked() uint64 {
	raw, ok := sim.Recall("acked/" + os.Getenv("SEEDFALL_NODE"))
	if !ok {
		return 0
	}
	n, _ := strconv.ParseUint(string(raw), 10, 64)
	return n
}

func check(ents []raftpb.Entry, acked uint64, when string) {
	ok := uint64(len(ents)) >= acked
	for i := uint64(0); ok && i < acked; i++ {
		ok = ents[i].Index == i+1 && string(ents[i].Data) == fmt.Sprintf("entry-%d", i+1)
	}
	sim.Always(ok, "acknowledged WAL entries survive crashes", map[string]any{"acknowledged": acked, "read": len(ents), "when": when})
}

func main() {
	total := flag.Uint64("entries", 40, "entries to append in all")
	flag.Parse()
	lg := zap.NewNop()
	if err := os.MkdirAll("/data", 0o755); err != nil {
		panic(err)
	}
	var w *wal.WAL
	var ents []raftpb.Entry
	if wal.Exist(dir) {
		var err error
		w, err = wal.Open(lg, dir, walpb.Snapshot{})
		if err != nil {
			panic(err)
		}
		_, _, ents, err = w.ReadAll()
		if errors.Is(err, io.ErrUnexpectedEOF) {
			// A torn last record: repair once, as etcd's server does at
			// start (etcdserver's readWAL), and read again.
			w.Close()
			if !wal.Repair(lg, dir) {
				panic("the WAL's torn tail cannot be repaired")
			}
			fmt.Println("repaired the WAL's torn tail")
			if w, err = wal.Open(lg, dir, walpb.Snapshot{}); err != nil {
				panic(err)
			}
			_, _, ents, err = w.ReadAll()
		}
		if err != nil {
			panic(fmt.Sprintf("reading the WAL back: %v", err))
		}
	} else {
		var err error
		w, err = wal.Create(lg, dir, []byte("seedfall"))
		if err != nil {
			panic(err)
		}
	}
	acked := recallAcked()
	check(ents, acked, "after open")
	fmt.Printf("opened with %d entries, %d acknowledged\n", len(ents), acked)
	next := uint64(len(ents)) + 1
	for ; next <= *total; next++ {
		e := raftpb.Entry{Term: 1, Index: next, Type: raftpb.EntryNormal, Data: []byte(fmt.Sprintf("entry-%d", next))}
		st := raftpb.HardState{Term: 1, Commit: next}
		if err := w.Save(st, []raftpb.Entry{e}); err != nil {
			panic(err)
		}
		sim.Remember("acked/"+os.Getenv("SEEDFALL_NODE"), []byte(strconv.FormatUint(next, 10)))
	}
	if err := w.Close(); err != nil {
		panic(err)
	}
	w, err := wal.Open(lg, dir, walpb.Snapshot{})
	if err != nil {
		panic(err)
	}
	_, _, ents, err = w.ReadAll()
	if err != nil {
		panic(err)
	}
	check(ents, *total, "before exit")
	fmt.Printf("done: %d entries\n", len(ents))
	w.Close()
}
