// The golang.org/x/sys family of the storage matrix: a file of fixed-size
// records through the x/sys/unix calls storage libraries make (Flock,
// Fdatasync, Mmap, Munmap), so each pinned x/sys release is built with the
// storage overlay's unix file and run. Cells differ only in their go.mod.
package main

import (
	"bytes"
	"os"
	"time"

	"golang.org/x/sys/unix"
	"seedfall.dev/tests/matrix/harness"
)

const recordSize = 32

type fileStore struct{ f *os.File }

func (s fileStore) Put(i uint64, v []byte) error {
	// A record every few milliseconds, as a service writes: these writes
	// alone take microseconds, and crashes would fall after the last.
	time.Sleep(3 * time.Millisecond)
	rec := make([]byte, recordSize)
	copy(rec, v)
	if _, err := s.f.WriteAt(rec, int64(i-1)*recordSize); err != nil {
		return err
	}
	return unix.Fdatasync(int(s.f.Fd()))
}

func (s fileStore) Get(i uint64) ([]byte, bool, error) {
	st, err := s.f.Stat()
	if err != nil {
		return nil, false, err
	}
	end := int64(i) * recordSize
	if st.Size() < end {
		return nil, false, nil
	}
	m, err := unix.Mmap(int(s.f.Fd()), 0, int(st.Size()), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, false, err
	}
	rec := bytes.TrimRight(m[end-recordSize:end], "\x00")
	out := append([]byte(nil), rec...)
	return out, len(out) > 0, unix.Munmap(m)
}

func (s fileStore) Close() error { return s.f.Close() }

func main() {
	harness.Run(func(dir string) (harness.Store, error) {
		f, err := os.OpenFile(dir+"/records", os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			return nil, err
		}
		if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
			return nil, err
		}
		return fileStore{f}, nil
	})
}
