// go-fulldisk exercises seedfall's full-disk and write-error faults (a small
// disk.capacity, write_error, disk_full) with a durable append-only log.
//
// -mode handle copes with them: on ENOSPC, a short write or EIO it cuts the
// segment back to its last good record, frees the oldest segment when the
// disk is full, and retries the same record. -mode ignore is the same log
// written carelessly, one write whose count and error are dropped, so a full
// disk leaves an acked record short or missing, and the periodic check (or
// the next start's recovery) panics naming it.
package main

import (
	"bytes"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

const (
	segMax  = 16 << 10
	maxRec  = 8 + 499 // the longest record: what one torn append can leave
	total   = 400
	maxFail = 1000
)

type ack struct {
	n   uint64
	seg int
}

var (
	dir       string
	segs      []int    // segment numbers on disk, oldest first
	cur       *os.File // the last segment, nil before the first exists
	end       int64    // end of cur's last good record
	tailDirty bool     // a cut back failed: cur may hold bytes past end
	acked     []ack    // acked by this process and not retired, in order
)

func segName(k int) string { return fmt.Sprintf("seg-%06d", k) }
func segPath(k int) string { return filepath.Join(dir, segName(k)) }

func payload(n uint64) []byte {
	p := make([]byte, 100+n*37%400)
	for i := range p {
		p[i] = byte((n*31 + uint64(i)) % 251)
	}
	binary.LittleEndian.PutUint64(p, n) // so recovery knows where to go on
	return p
}

func record(n uint64) []byte {
	p := payload(n)
	r := make([]byte, 8, 8+len(p))
	binary.LittleEndian.PutUint32(r, uint32(len(p)))
	binary.LittleEndian.PutUint32(r[4:], crc32.ChecksumIEEE(p))
	return append(r, p...)
}

// parse reads the record at the start of b, if it is whole and intact. A
// record follows from its number, so a fresh copy checks length, CRC and bytes.
func parse(b []byte) (uint64, int, bool) {
	if len(b) < 16 {
		return 0, 0, false
	}
	n := binary.LittleEndian.Uint64(b[8:])
	r := record(n)
	return n, len(r), bytes.HasPrefix(b, r)
}

func listSegs() []int {
	entries, err := os.ReadDir(dir)
	if err != nil {
		panic(fmt.Sprintf("list %s: %v", dir, err))
	}
	var ks []int
	for _, e := range entries {
		if k, err := strconv.Atoi(strings.TrimPrefix(e.Name(), "seg-")); err == nil && strings.HasPrefix(e.Name(), "seg-") {
			ks = append(ks, k)
		}
	}
	sort.Ints(ks)
	return ks
}

// scan reads every segment and panics on corruption. Only the tail of the
// last segment may be bad, and only as much of it as one unsynced append.
func scan() (found map[uint64]int, ks []int, lastEnd int64) {
	found, ks = map[uint64]int{}, listSegs()
	var prev uint64
	for i, k := range ks {
		data, err := os.ReadFile(segPath(k))
		if err != nil {
			panic(fmt.Sprintf("read %s: %v", segName(k), err))
		}
		off := 0
		for off < len(data) {
			n, size, ok := parse(data[off:])
			if !ok {
				if i == len(ks)-1 && len(data)-off <= maxRec {
					break
				}
				which := "first record"
				if prev > 0 {
					which = fmt.Sprintf("record %d", prev+1)
				}
				panic(fmt.Sprintf("%s in %s is corrupt (offset %d of %d)", which, segName(k), off, len(data)))
			}
			found[n], prev, off = k, n, off+size
		}
		lastEnd = int64(off)
	}
	return found, ks, lastEnd
}

func verify() {
	found, _, _ := scan()
	for _, a := range acked {
		if _, ok := found[a.n]; !ok {
			panic(fmt.Sprintf("acked record %d missing from %s", a.n, segName(a.seg)))
		}
	}
}

func syncDir(p string) error {
	d, err := os.Open(p)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// cutBack drops what a failed append left past the last good record, and
// makes that durable so the space counts as free again.
// If it fails, the next attempt to append tries it again first.
func cutBack() error {
	err := cur.Truncate(end)
	if err == nil {
		err = cur.Sync()
	}
	tailDirty = err != nil
	return err
}

func nextSeg() int {
	if len(segs) == 0 {
		return 1
	}
	return segs[len(segs)-1] + 1
}

func tryAppend(rec []byte) error {
	if tailDirty {
		if err := cutBack(); err != nil {
			return err
		}
	}
	if cur == nil || end+int64(len(rec)) > segMax {
		k := nextSeg()
		f, err := os.OpenFile(segPath(k), os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			return err
		}
		if err := syncDir(dir); err != nil {
			f.Close() // the retry opens it again
			return err
		}
		cur.Close()
		cur, end, segs = f, 0, append(segs, k)
	}
	if _, err := cur.Seek(end, io.SeekStart); err != nil {
		return err
	}
	if _, err := cur.Write(rec); err != nil {
		return err // a short write comes back as ENOSPC or io.ErrShortWrite
	}
	if err := cur.Sync(); err != nil {
		return err // the dirty pages are gone: the record must be written again
	}
	end += int64(len(rec))
	return nil
}

// retire frees the oldest segment; the caller makes sure it is not cur.
func retire() {
	k := segs[0]
	if err := os.Remove(segPath(k)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return // the next attempt fails again and retries this
	}
	segs = segs[1:]
	kept := acked[:0]
	for _, a := range acked {
		if a.seg != k {
			kept = append(kept, a)
		}
	}
	acked = kept
	fmt.Printf("retired seg %d\n", k)
	// Removed space is free only once the removal is durable.
	if syncDir(dir) == nil {
		fmt.Println("freed")
	}
}

func appendHandled(rec []byte) {
	for fails := 0; ; fails++ {
		if fails == maxFail {
			fmt.Println("giving up")
			os.Exit(0)
		}
		err := tryAppend(rec)
		if err == nil {
			return
		}
		if cur != nil {
			cutBack()
		}
		full := errors.Is(err, syscall.ENOSPC) || errors.Is(err, io.ErrShortWrite) || errors.Is(err, io.ErrUnexpectedEOF)
		switch {
		case full && len(segs) < 2:
			time.Sleep(5 * time.Millisecond) // nothing to free: wait for space
		case full:
			retire()
		case errors.Is(err, syscall.EIO):
			fmt.Println("write error EIO, retrying")
			time.Sleep(time.Millisecond)
		default:
			fmt.Printf("write error %v, retrying\n", err)
			time.Sleep(time.Millisecond)
		}
	}
}

// appendCareless is the bug under test: nothing it does is checked.
func appendCareless(rec []byte) {
	if cur == nil || end+int64(len(rec)) > segMax {
		cur.Close()
		k := nextSeg()
		cur, _ = os.OpenFile(segPath(k), os.O_RDWR|os.O_CREATE, 0o644)
		syncDir(dir)
		segs, end = append(segs, k), 0
	}
	cur.Write(rec)
	cur.Sync()
	end += int64(len(rec))
}

func main() {
	mode := flag.String("mode", "handle", "handle or ignore write errors")
	flag.StringVar(&dir, "dir", "/data", "the log's folder")
	flag.Parse()
	if *mode != "handle" && *mode != "ignore" {
		panic("-mode must be handle or ignore, not " + *mode)
	}
	// Setting up is not under test: wait out a full disk here in both modes.
	for os.MkdirAll(dir, 0o755) != nil || syncDir(filepath.Dir(dir)) != nil {
		time.Sleep(5 * time.Millisecond)
	}

	found, ks, lastEnd := scan()
	segs = ks
	next := uint64(1)
	for n := range found {
		next = max(next, n+1)
	}
	if len(segs) > 0 {
		f, err := os.OpenFile(segPath(segs[len(segs)-1]), os.O_RDWR, 0)
		if err != nil {
			panic(fmt.Sprintf("open %s: %v", segName(segs[len(segs)-1]), err))
		}
		// A torn tail after a crash is normal; cut it so appends follow good data.
		cur, end = f, lastEnd
		cutBack()
		f.Seek(end, io.SeekStart)
	}
	fmt.Printf("recovered %d records, next %d\n", len(found), next)

	for n := next; n < next+total; n++ {
		rec := record(n)
		if *mode == "handle" {
			appendHandled(rec)
		} else {
			appendCareless(rec)
		}
		acked = append(acked, ack{n, segs[len(segs)-1]})
		fmt.Printf("acked %d\n", n)
		if (n-next+1)%25 == 0 {
			verify()
		}
		time.Sleep(time.Millisecond)
	}
}
