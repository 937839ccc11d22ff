// unix_seedfall_wasip1.go is added to golang.org/x/sys/unix by the storage
// overlay (a `go` recipe with "storage": true). x/sys/unix has no files for
// wasip1 at all, so a library importing it does not build there; this file
// gives it the subset the supported storage libraries call (docs/sdk-go.md
// lists them), on top of the storage additions to package syscall.
//
// In this repository the file is kept out of every build by the constraint
// below; the overlay turns it into "wasip1" in the copy it uses.

//go:build ignore

package unix

import "syscall"

type Errno = syscall.Errno
type Flock_t = syscall.Flock_t

const (
	LOCK_SH = syscall.LOCK_SH
	LOCK_EX = syscall.LOCK_EX
	LOCK_NB = syscall.LOCK_NB
	LOCK_UN = syscall.LOCK_UN

	PROT_NONE  = syscall.PROT_NONE
	PROT_READ  = syscall.PROT_READ
	PROT_WRITE = syscall.PROT_WRITE
	PROT_EXEC  = syscall.PROT_EXEC

	MAP_SHARED    = syscall.MAP_SHARED
	MAP_PRIVATE   = syscall.MAP_PRIVATE
	MAP_FIXED     = syscall.MAP_FIXED
	MAP_ANON      = syscall.MAP_ANON
	MAP_ANONYMOUS = syscall.MAP_ANONYMOUS
	MAP_POPULATE  = syscall.MAP_POPULATE

	MADV_NORMAL     = syscall.MADV_NORMAL
	MADV_RANDOM     = syscall.MADV_RANDOM
	MADV_SEQUENTIAL = syscall.MADV_SEQUENTIAL
	MADV_WILLNEED   = syscall.MADV_WILLNEED
	MADV_DONTNEED   = syscall.MADV_DONTNEED

	MS_ASYNC      = syscall.MS_ASYNC
	MS_INVALIDATE = syscall.MS_INVALIDATE
	MS_SYNC       = syscall.MS_SYNC

	F_RDLCK  = syscall.F_RDLCK
	F_WRLCK  = syscall.F_WRLCK
	F_UNLCK  = syscall.F_UNLCK
	F_GETLK  = syscall.F_GETLK
	F_SETLK  = syscall.F_SETLK
	F_SETLKW = syscall.F_SETLKW

	O_RDONLY = syscall.O_RDONLY
	O_WRONLY = syscall.O_WRONLY
	O_RDWR   = syscall.O_RDWR
	O_CREAT  = syscall.O_CREAT
	O_TRUNC  = syscall.O_TRUNC
	O_APPEND = syscall.O_APPEND
	O_EXCL   = syscall.O_EXCL
	O_SYNC   = syscall.O_SYNC
	// wasip1 has one synchronous-write flag; a data-only sync is the same here.
	O_DSYNC = syscall.O_SYNC

	EAGAIN      = syscall.EAGAIN
	EWOULDBLOCK = syscall.EWOULDBLOCK
	EINTR       = syscall.EINTR
	EINVAL      = syscall.EINVAL
	ENOENT      = syscall.ENOENT
	ENOSYS      = syscall.ENOSYS
	ENOTSUP     = syscall.ENOTSUP
	EEXIST      = syscall.EEXIST
	EBADF       = syscall.EBADF
	EIO         = syscall.EIO
	ENOMEM      = syscall.ENOMEM
	ENOSPC      = syscall.ENOSPC
	EPERM       = syscall.EPERM
	EACCES      = syscall.EACCES
	ENOTEMPTY   = syscall.ENOTEMPTY
)

type Statfs_t = syscall.Statfs_t

func Statfs(path string, buf *Statfs_t) error { return syscall.Statfs(path, buf) }

// Major and Minor split a device number as Linux does.
func Major(dev uint64) uint32 { return uint32(((dev >> 8) & 0xfff) | ((dev >> 32) & 0xfffff000)) }
func Minor(dev uint64) uint32 { return uint32((dev & 0xff) | ((dev >> 12) & 0xffffff00)) }

func Mmap(fd int, offset int64, length int, prot int, flags int) ([]byte, error) {
	return syscall.Mmap(fd, offset, length, prot, flags)
}

func Munmap(b []byte) error              { return syscall.Munmap(b) }
func Msync(b []byte, flags int) error    { return syscall.Msync(b, flags) }
func Madvise(b []byte, advice int) error { return syscall.Madvise(b, advice) }
func Mlock(b []byte) error               { return syscall.Mlock(b) }
func Munlock(b []byte) error             { return syscall.Munlock(b) }
func Flock(fd int, how int) error        { return syscall.Flock(fd, how) }
func Fdatasync(fd int) error             { return syscall.Fdatasync(fd) }
func Fsync(fd int) error                 { return syscall.Fsync(fd) }
func Ftruncate(fd int, length int64) error {
	return syscall.Ftruncate(fd, length)
}
func FcntlFlock(fd uintptr, cmd int, lk *Flock_t) error {
	return syscall.FcntlFlock(fd, cmd, lk)
}
// Getpagesize is the page size mappings are aligned to (Linux's, not wasm's 64 KiB).
func Getpagesize() int { return 4096 }
