package main

// A full disk (seedfall.full.json): the service keeps a ballast file, space
// held back for when the disk fills, as operators do. With -retry a put whose
// write fails is refused (never acknowledged) and tried again, after removing
// the ballast on ENOSPC; without it a failed write panics, a clean stop.

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/rosedblabs/wal"
)

const ballast = "/data/ballast"

var (
	segment = flag.Int64("segment", segmentSize, "segment file size in bytes")
	retry   = flag.Bool("retry", false, "on a failed write, refuse the put, free the ballast file on ENOSPC, and try again")
	reopen  = flag.Bool("reopen", false, "with -retry: after a failed write, close the log and open it again (the -fixed start-up cut repairs its tail)")
)

// ballasted writes the ballast file when the log is first created (with
// -retry), and returns the options unchanged.
func ballasted(o wal.Options) wal.Options {
	if _, err := os.Stat(dir); err == nil || !*retry {
		return o
	}
	f, err := os.OpenFile(ballast, os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		panic(err)
	}
	if _, err := f.Write(make([]byte, 4096)); err != nil {
		panic(err)
	}
	if err := f.Sync(); err != nil {
		panic(err)
	}
	f.Close()
	syncDir("/data")
	return o
}

// refused handles a write wal.Write failed: the put is not acknowledged.
func (s *service) refused(key string, version int, err error) {
	if !*retry {
		panic(err)
	}
	fmt.Printf("put %s=%d refused: %v\n", key, version, err)
	if errors.Is(err, syscall.ENOSPC) {
		if os.Remove(ballast) == nil {
			syncDir("/data")
			fmt.Printf("removed the ballast file\n")
		}
	}
	time.Sleep(5 * time.Millisecond)
	if *reopen {
		s.log.Close()
		n := open(s.fixed)
		s.log, s.data, s.segment = n.log, n.data, n.segment
	}
}
