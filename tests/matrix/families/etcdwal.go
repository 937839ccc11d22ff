// The etcd WAL family of the storage matrix: etcd's write-ahead log in each
// server release line. Each cell's lib.go names its release's WAL and says
// how it tells, creates, opens, repairs, reads and appends to a log.
package main

import (
	"errors"
	"io"

	"seedfall.dev/tests/matrix/harness"
)

// record is one entry as the cell's release reads it.
type record struct {
	index uint64
	data  []byte
}

type walStore struct {
	w *WAL
	// What the log holds, by index: read back once at open, kept after.
	ents map[uint64][]byte
}

func (s *walStore) Put(i uint64, v []byte) error {
	// Save syncs a batch with entries in it before it returns.
	if err := save(s.w, i, v); err != nil {
		return err
	}
	for j := range s.ents {
		if j > i {
			delete(s.ents, j) // a later index is truncated, as raft overwrites
		}
	}
	s.ents[i] = v
	return nil
}

func (s *walStore) Get(i uint64) ([]byte, bool, error) {
	v, ok := s.ents[i]
	return v, ok, nil
}

func (s *walStore) Close() error { return s.w.Close() }

// open opens the log and reads it back as etcd's server does: a torn tail
// (io.ErrUnexpectedEOF) is repaired once, and the log opened again.
func open(dir string) (harness.Store, error) {
	dir += "/wal"
	s := &walStore{ents: map[uint64][]byte{}}
	if !walExists(dir) {
		w, err := createWAL(dir)
		s.w = w
		return s, err
	}
	for repaired := false; ; repaired = true {
		w, err := openWAL(dir)
		if err != nil {
			return nil, err
		}
		recs, err := readAll(w)
		if err == nil {
			for _, r := range recs {
				s.ents[r.index] = r.data
			}
			s.w = w
			return s, nil
		}
		w.Close()
		if repaired || !errors.Is(err, io.ErrUnexpectedEOF) || !repairWAL(dir) {
			return nil, err
		}
	}
}

func main() { harness.Run(open) }
