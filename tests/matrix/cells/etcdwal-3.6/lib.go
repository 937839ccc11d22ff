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
func openWAL(dir string) (*WAL, error)   { return wal.Open(zap.NewNop(), dir, walpb.Snapshot{}) }
func repairWAL(dir string) bool          { return wal.Repair(zap.NewNop(), dir) }

func readAll(w *WAL) ([]record, error) {
	_, _, ents, err := w.ReadAll()
	recs := make([]record, len(ents))
	for i, e := range ents {
		recs[i] = record{e.Index, e.Data}
	}
	return recs, err
}

func save(w *WAL, i uint64, data []byte) error {
	return w.Save(raftpb.HardState{Term: 1, Commit: i}, []raftpb.Entry{{Term: 1, Index: i, Data: data}})
}
