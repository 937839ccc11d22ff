// syscall_seedfall_wasip1.go is added to the standard library's package
// syscall by the storage overlay (a `go` recipe with "storage": true), so
// that storage libraries written for Unix find on wasip1 the calls wasip1
// lacks: Mmap, Munmap, Madvise, Msync, Flock, FcntlFlock, Fdatasync and
// their constants (with Linux's values). See docs/sdk-go.md#storage.
//
// A mapping is a copy in the guest's memory kept coherent by seedfall's
// host (the `seedfall` import module): filled at Mmap, updated by every
// write to the file, written back at Msync, Munmap and fsync. docs/disk.md
// says exactly what a guest can observe.
//
// In this repository the file is kept out of every build by the constraint
// below; the overlay turns it into "wasip1" in the copy it uses.

//go:build ignore

package syscall

import (
	"runtime"
	"sync"
	"unsafe"
)

const (
	LOCK_SH = 0x1
	LOCK_EX = 0x2
	LOCK_NB = 0x4
	LOCK_UN = 0x8

	PROT_NONE  = 0x0
	PROT_READ  = 0x1
	PROT_WRITE = 0x2
	PROT_EXEC  = 0x4

	MAP_SHARED    = 0x1
	MAP_PRIVATE   = 0x2
	MAP_FIXED     = 0x10
	MAP_ANON      = 0x20
	MAP_ANONYMOUS = 0x20
	MAP_POPULATE  = 0x8000

	MADV_NORMAL     = 0x0
	MADV_RANDOM     = 0x1
	MADV_SEQUENTIAL = 0x2
	MADV_WILLNEED   = 0x3
	MADV_DONTNEED   = 0x4

	MS_ASYNC      = 0x1
	MS_INVALIDATE = 0x2
	MS_SYNC       = 0x4

	// F_GETLK, F_SETLK, F_SETLKW and F_RDLCK, F_WRLCK, F_UNLCK are
	// package syscall's own on wasip1.

	EWOULDBLOCK Errno = EAGAIN
)

// Flock_t is struct flock, as FcntlFlock takes it.
type Flock_t struct {
	Type   int16
	Whence int16
	Start  int64
	Len    int64
	Pid    int32
}

//go:wasmimport seedfall mmap
func seedfallMmap(fd int32, offset int64, length int32, addr unsafe.Pointer, prot int32, flags int32) Errno

//go:wasmimport seedfall munmap
func seedfallMunmap(addr unsafe.Pointer, length int32) Errno

//go:wasmimport seedfall msync
func seedfallMsync(addr unsafe.Pointer, length int32, flags int32) Errno

//go:wasmimport seedfall flock
func seedfallFlock(fd int32, how int32) Errno

//go:wasmimport seedfall statfs
func seedfallStatfs(out unsafe.Pointer) Errno

// The mappings' memory, kept alive until Munmap (Go's heap never moves, so
// the host's copy of an address stays right).
var (
	seedfallMappingsMu sync.Mutex
	seedfallMappings   = map[*byte][]byte{}
)

func Mmap(fd int, offset int64, length int, prot int, flags int) ([]byte, error) {
	if length <= 0 || length > 1<<31-1 || offset < 0 {
		return nil, EINVAL
	}
	b := make([]byte, length)
	if flags&MAP_ANON == 0 {
		if errno := seedfallMmap(int32(fd), offset, int32(length), unsafe.Pointer(&b[0]), int32(prot), int32(flags)); errno != 0 {
			return nil, errno
		}
	}
	seedfallMappingsMu.Lock()
	seedfallMappings[&b[0]] = b
	seedfallMappingsMu.Unlock()
	return b, nil
}

func Munmap(b []byte) error {
	if len(b) == 0 {
		return EINVAL
	}
	seedfallMappingsMu.Lock()
	full, ok := seedfallMappings[&b[0]]
	delete(seedfallMappings, &b[0])
	seedfallMappingsMu.Unlock()
	if !ok {
		return EINVAL
	}
	if errno := seedfallMunmap(unsafe.Pointer(&full[0]), int32(len(full))); errno != 0 && errno != EINVAL {
		return errno
	}
	return nil
}

// Msync writes a shared mapping's changes back to its file; with MS_SYNC
// they are durable when it returns.
func Msync(b []byte, flags int) error {
	if len(b) == 0 {
		return nil
	}
	if errno := seedfallMsync(unsafe.Pointer(&b[0]), int32(len(b)), int32(flags)); errno != 0 {
		if errno == ENOMEM {
			// Not a file mapping (anonymous memory): nothing to write.
			return nil
		}
		return errno
	}
	return nil
}

// Madvise is advice: seedfall's disk has no page cache to tune.
func Madvise(b []byte, advice int) error { return nil }

// Mlock and Munlock: nothing is ever paged out.
func Mlock(b []byte) error   { return nil }
func Munlock(b []byte) error { return nil }

func Flock(fd int, how int) error {
	if errno := seedfallFlock(int32(fd), int32(how)); errno != 0 {
		return errno
	}
	return nil
}

// FcntlFlock: POSIX record locks belong to the process, and a node is one
// process, so its own requests always succeed and F_GETLK finds no holder.
func FcntlFlock(fd uintptr, cmd int, lk *Flock_t) error {
	switch cmd {
	case F_GETLK:
		lk.Type = F_UNLCK
		return nil
	case F_SETLK, F_SETLKW:
		return nil
	}
	return EINVAL
}

func Fdatasync(fd int) error { return Fsync(fd) }

// Fsync lets the program's other goroutines run first, then syncs. On
// Linux a goroutine blocked in fsync hands its processor to the others, so
// they run while the disk works; a wasip1 program runs one goroutine at a
// time and would switch only when the syncing one blocks on something
// else. Without this, a server that answers from one goroutine while
// another syncs its log could never answer before the sync (etcd issue
// 14370). The overlay renames wasip1's own Fsync to hostFsync.
func Fsync(fd int) error {
	runtime.Gosched()
	return hostFsync(fd)
}

// Statfs_t is Linux's struct statfs.
type Statfs_t struct {
	Type    int64
	Bsize   int64
	Blocks  uint64
	Bfree   uint64
	Bavail  uint64
	Files   uint64
	Ffree   uint64
	Fsid    struct{ Val [2]int32 }
	Namelen int64
	Frsize  int64
	Flags   int64
	Spare   [4]int64
}

// Statfs reports the simulated disk as an ext4 file system (its magic
// number) in 4 KiB blocks, of the node's disk.capacity (or 2 GiB, seedfall's
// bound on a disk's data), with the free space the disk has now: 0 while a
// disk_full fault holds.
func Statfs(path string, buf *Statfs_t) error {
	var st Stat_t
	if err := Stat(path, &st); err != nil {
		return err
	}
	var space [2]uint64
	if errno := seedfallStatfs(unsafe.Pointer(&space)); errno != 0 {
		return errno
	}
	const block = 4096
	total, free := space[0]/block, space[1]/block
	*buf = Statfs_t{Type: 0xEF53, Bsize: block, Blocks: total, Bfree: free, Bavail: free, Files: 1 << 20, Ffree: 1 << 20, Namelen: 255, Frsize: block}
	return nil
}
