// walkv is a small key-value service on github.com/rosedblabs/wal, used as
// its README shows: every Put is one wal.Write with Options.Sync set, so the
// library fsyncs the segment before Write returns, and the service
// acknowledges the Put only then. When it starts it replays the log with
// wal.NewReader until io.EOF and rebuilds its table.
//
// The checker keeps what the client was told in seedfall's oracle
// (sim.Remember / sim.Recall), which survives crashes, and after every
// restart checks that every acknowledged write is readable again.
//
// With -fixed the service does two things the library leaves to its caller:
// it cuts a segment back to the end of its last whole chunk before writing
// after a restart, and it fsyncs the directory when the library starts a new
// segment file. See README.md for why each is needed.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/rosedblabs/wal"
	"seedfall.dev/sdk/sim"
)

const (
	dir = "/data/wal"
	// Small segments, so a run starts new segment files and exercises the
	// library's rotation as well as its appends.
	segmentSize = 4 * 1024
	// blockSize is the library's block size (segment.go): a chunk position
	// is BlockNumber*blockSize + ChunkOffset bytes into its segment.
	blockSize = 32 * 1024
	ext       = ".SEG"
)

type service struct {
	log     *wal.WAL
	data    map[string]int
	fixed   bool
	segment wal.SegmentID
}

func options() wal.Options {
	return ballasted(wal.Options{DirPath: dir, SegmentSize: *segment, SegmentFileExt: ext, Sync: true})
}

func syncDir(path string) {
	d, err := os.Open(path)
	if err != nil {
		panic(err)
	}
	if err := d.Sync(); err != nil {
		panic(err)
	}
	d.Close()
}

// replay reads the whole log into the table. It stops at the first chunk the
// library cannot read (a write torn by a crash) and returns where that chunk
// starts, as the library's reader leaves no way past it.
func (s *service) replay() (records int, stop *wal.ChunkPosition, err error) {
	r := s.log.NewReader()
	for {
		data, _, e := r.Next()
		if e == io.EOF {
			return records, nil, nil
		}
		if e != nil {
			return records, r.CurrentChunkPosition(), e
		}
		key, version, ok := parse(string(data))
		if !ok {
			return records, r.CurrentChunkPosition(), fmt.Errorf("unparseable record %q", data)
		}
		s.data[key] = version
		records++
	}
}

func open(fixed bool) *service {
	if _, err := os.Stat("/data"); err != nil {
		if err := os.Mkdir("/data", 0o755); err != nil {
			panic(err)
		}
		syncDir("/")
	}
	created := false
	if _, err := os.Stat(dir); err != nil {
		created = true
	}
	log, err := wal.Open(options())
	if err != nil {
		panic(err)
	}
	if created && fixed {
		// wal.Open made the directory and its first segment: make both durable.
		syncDir("/data")
		syncDir(dir)
	}
	s := &service{log: log, data: map[string]int{}, fixed: fixed}
	records, stop, replayErr := s.replay()
	if replayErr != nil {
		fmt.Printf("replay stopped at segment %d block %d offset %d: %v\n",
			stop.SegmentId, stop.BlockNumber, stop.ChunkOffset, replayErr)
		if fixed {
			s.cut(stop)
			records, stop, replayErr = s.replay()
			if replayErr != nil {
				panic(fmt.Sprintf("replay after the cut stopped at %+v: %v", stop, replayErr))
			}
		}
	}
	s.segment = s.log.ActiveSegmentID()
	fmt.Printf("recovered %d records from %d segment(s)\n", records, s.segment)
	return s
}

// cut truncates the damaged segment at the start of its first unreadable
// chunk and drops any later segment, then reopens the log, so the next write
// is appended where the reader can reach it.
func (s *service) cut(at *wal.ChunkPosition) {
	if err := s.log.Close(); err != nil {
		panic(err)
	}
	offset := int64(at.BlockNumber)*blockSize + int64(at.ChunkOffset)
	name := wal.SegmentFileName(dir, ext, at.SegmentId)
	if err := os.Truncate(name, offset); err != nil {
		panic(err)
	}
	f, err := os.OpenFile(name, os.O_RDWR, 0)
	if err != nil {
		panic(err)
	}
	if err := f.Sync(); err != nil {
		panic(err)
	}
	f.Close()
	for id := at.SegmentId + 1; ; id++ {
		later := wal.SegmentFileName(dir, ext, id)
		if _, err := os.Stat(later); err != nil {
			break
		}
		if err := os.Remove(later); err != nil {
			panic(err)
		}
	}
	syncDir(dir)
	fmt.Printf("cut segment %d at byte %d\n", at.SegmentId, offset)
	sim.Reachable("a torn chunk was cut before writing again", map[string]any{"segment": at.SegmentId, "offset": offset})
	log, err := wal.Open(options())
	if err != nil {
		panic(err)
	}
	s.log = log
	s.data = map[string]int{}
}

func record(key string, version int) string { return fmt.Sprintf("%s=%d", key, version) }

func parse(text string) (string, int, bool) {
	key, v, ok := strings.Cut(text, "=")
	version, err := strconv.Atoi(v)
	return key, version, ok && err == nil
}

// put is acknowledged when it returns: wal.Write has fsynced the segment.
func (s *service) put(key string, version int) {
	for _, err := s.log.Write([]byte(record(key, version))); err != nil; _, err = s.log.Write([]byte(record(key, version))) {
		s.refused(key, version, err)
	}
	if id := s.log.ActiveSegmentID(); id != s.segment {
		// The library rotated to a new segment file inside Write.
		if s.fixed {
			syncDir(dir)
		}
		s.segment = id
	}
	s.data[key] = version
}

func main() {
	fixed := flag.Bool("fixed", false, "cut torn chunks before writing and fsync the directory on rotation")
	ops := flag.Int("ops", 400, "writes the client makes in all")
	flag.Parse()

	s := open(*fixed)
	// The client's memory: writes 1..acked were acknowledged, write n set
	// key k<n%8> to n.
	acked := 0
	if raw, ok := sim.Recall("acked"); ok {
		acked, _ = strconv.Atoi(string(raw))
	}
	missing, first := 0, 0
	for key := 0; key < 8; key++ {
		// The newest acknowledged write of this key.
		want := acked - ((acked - key + 8) % 8)
		if want <= 0 {
			continue
		}
		k := fmt.Sprintf("k%d", key)
		if s.data[k] < want {
			missing++
			if first == 0 || want < first {
				first = want
			}
		}
	}
	sim.Always(missing == 0, "acknowledged writes are readable after a restart",
		map[string]any{"acknowledged": acked, "keys_behind": missing, "oldest_lost_write": first})
	sim.SetupComplete(nil)

	for next := acked + 1; next <= *ops; next++ {
		key := fmt.Sprintf("k%d", next%8)
		s.put(key, next)
		sim.Remember("acked", []byte(strconv.Itoa(next)))
		time.Sleep(time.Duration(1+sim.RandomIntN(3)) * time.Millisecond)
	}
	sim.Reachable("the client finished its writes", nil)
	fmt.Printf("done: %d writes acknowledged\n", *ops)
}
