// The raft log family of the storage matrix: github.com/hashicorp/raft's
// LogStore as raft-boltdb v1 and v2 and raft-wal implement it. Each cell's
// lib.go says how its library opens a log store in a folder.
package main

import (
	"errors"

	"github.com/hashicorp/raft"
	"seedfall.dev/tests/matrix/harness"
)

type logStore struct {
	s     raft.LogStore
	close func() error
}

func (l logStore) Put(i uint64, v []byte) error {
	// A crash may have left records past the last acknowledged one: raft
	// deletes a conflicting tail before it appends, and so does this.
	last, err := l.s.LastIndex()
	if err != nil {
		return err
	}
	if last >= i {
		if err := l.s.DeleteRange(i, last); err != nil {
			return err
		}
	}
	return l.s.StoreLog(&raft.Log{Index: i, Term: 1, Type: raft.LogCommand, Data: v})
}

func (l logStore) Get(i uint64) ([]byte, bool, error) {
	var log raft.Log
	err := l.s.GetLog(i, &log)
	if errors.Is(err, raft.ErrLogNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return log.Data, true, nil
}

func (l logStore) Close() error { return l.close() }

func main() {
	harness.Run(func(dir string) (harness.Store, error) {
		s, closer, err := openLogStore(dir)
		if err != nil {
			return nil, err
		}
		return logStore{s, closer}, nil
	})
}
