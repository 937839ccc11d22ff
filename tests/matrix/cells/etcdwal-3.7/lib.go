// What the etcdwal family's main.go needs from this cell's release.
package main

import (
	"go.etcd.io/etcd/server/v3/storage/wal"
	"go.etcd.io/etcd/server/v3/storage/wal/walpb"
	"go.etcd.io/raft/v3/raftpb"
	"go.uber.org/zap"
)

type WAL = wal.WAL

var walExists = wal.Exist

func createWAL(dir string) (*WAL, error) { return wal.Create(zap.NewNop(), dir, nil) }
func openWAL(dir string) (*WAL, error)   { return wal.Open(zap.NewNop(), dir, &walpb.Snapshot{}) }
func repairWAL(dir string) bool          { return wal.Repair(zap.NewNop(), dir) }

func readAll(w *WAL) ([]record, error) {
	_, _, ents, err := w.ReadAll()
	recs := make([]record, len(ents))
	for i, e := range ents {
		recs[i] = record{e.GetIndex(), e.GetData()}
	}
	return recs, err
}

func save(w *WAL, i uint64, data []byte) error {
	// v3.7's raft messages hold their numbers by pointer.
	term := uint64(1)
	return w.Save(&raftpb.HardState{Term: &term, Commit: &i}, []*raftpb.Entry{{Term: &term, Index: &i, Data: data}})
}
