// go-mmap: syscall.Mmap, Msync, Munmap and Flock as the storage overlay
// gives them on wasip1 (this guest builds only with "storage": true). Each
// mode prints what it observes; after a crash and restart, what the disk
// kept.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"syscall"
	"time"
)

func must(err error) {
	if err != nil {
		panic(err)
	}
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func syncDir(p string) {
	d, err := os.Open(p)
	must(err)
	must(d.Sync())
	d.Close()
}

func main() {
	mode := flag.String("mode", "mmap", "mmap | flock | statfs")
	flag.Parse()
	switch *mode {
	case "mmap":
		mmapMode()
	case "flock":
		flockMode()
	case "statfs":
		statfsMode()
	}
}

// statfsMode prints the disk's size and free space, in blocks, before and
// after writing 64 KiB and syncing it, and once more 100 ms later (a
// disk_full fault in the test's schedule may hold the free space at 0).
func statfsMode() {
	show := func(when string) {
		var st syscall.Statfs_t
		must(syscall.Statfs("/", &st))
		fmt.Printf("statfs %s: bsize=%d blocks=%d free=%d avail=%d\n", when, st.Bsize, st.Blocks, st.Bfree, st.Bavail)
	}
	show("empty")
	f, err := os.Create("/big")
	must(err)
	_, err = f.Write(make([]byte, 64<<10))
	must(err)
	must(f.Sync())
	show("after 64KiB")
	time.Sleep(100 * time.Millisecond)
	show("later")
}

func mmapMode() {
	if exists("/m") {
		b, _ := os.ReadFile("/m")
		fmt.Printf("after crash: %q\n", string(b))
		return
	}
	f, err := os.OpenFile("/m", os.O_CREATE|os.O_RDWR, 0o644)
	must(err)
	syncDir("/")
	_, err = f.WriteAt([]byte("aaaa"), 0)
	must(err)
	must(f.Sync())
	ro, err := syscall.Mmap(int(f.Fd()), 0, 8, syscall.PROT_READ, syscall.MAP_SHARED)
	must(err)
	fmt.Printf("read-only mapping: %q\n", string(ro))
	_, err = f.WriteAt([]byte("bb"), 2)
	must(err)
	fmt.Printf("after pwrite: %q\n", string(ro))
	// The file grows; a new mapping of the larger size sees all of it.
	_, err = f.WriteAt([]byte("cccc"), 4)
	must(err)
	must(syscall.Munmap(ro))
	ro, err = syscall.Mmap(int(f.Fd()), 0, 8, syscall.PROT_READ, syscall.MAP_SHARED)
	must(err)
	fmt.Printf("remapped after growing: %q\n", string(ro))
	must(syscall.Munmap(ro))
	must(f.Sync())
	// A shared writable mapping: its writes reach the file at msync.
	rw, err := syscall.Mmap(int(f.Fd()), 0, 8, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	must(err)
	copy(rw[0:2], "XX")
	b := make([]byte, 8)
	f.ReadAt(b, 0)
	fmt.Printf("file before msync: %q\n", string(b))
	must(syscall.Msync(rw, syscall.MS_SYNC))
	f.ReadAt(b, 0)
	fmt.Printf("file after msync: %q\n", string(b))
	// Written to the mapping and never synced: a crash loses it.
	copy(rw[6:8], "YY")
	fmt.Println("mapping holds an unsynced change")
	time.Sleep(time.Hour)
}

func flockMode() {
	if exists("/lock") {
		f, err := os.OpenFile("/lock", os.O_RDWR, 0)
		must(err)
		fmt.Printf("after crash: exclusive lock %v\n", syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB))
		return
	}
	a, err := os.OpenFile("/lock", os.O_CREATE|os.O_RDWR, 0o644)
	must(err)
	must(a.Sync())
	syncDir("/")
	b, err := os.OpenFile("/lock", os.O_RDWR, 0)
	must(err)
	fmt.Printf("a exclusive: %v\n", syscall.Flock(int(a.Fd()), syscall.LOCK_EX|syscall.LOCK_NB))
	fmt.Printf("a again: %v\n", syscall.Flock(int(a.Fd()), syscall.LOCK_EX|syscall.LOCK_NB))
	err = syscall.Flock(int(b.Fd()), syscall.LOCK_SH|syscall.LOCK_NB)
	fmt.Printf("b shared: %v (would block: %v)\n", err, errors.Is(err, syscall.EWOULDBLOCK))
	must(syscall.Flock(int(a.Fd()), syscall.LOCK_UN))
	fmt.Printf("b shared after unlock: %v\n", syscall.Flock(int(b.Fd()), syscall.LOCK_SH|syscall.LOCK_NB))
	fmt.Printf("a exclusive while b shares: %v\n", syscall.Flock(int(a.Fd()), syscall.LOCK_EX|syscall.LOCK_NB))
	var lk syscall.Flock_t
	lk.Type = syscall.F_WRLCK
	fmt.Printf("fcntl lock: %v\n", syscall.FcntlFlock(a.Fd(), syscall.F_SETLK, &lk))
	fmt.Println("holding b's lock")
	time.Sleep(time.Hour)
}
