// go-disk exercises the simulated disk and the fault model on real Go. Each
// mode writes something, waits to be crashed by a schedule the test gives,
// and, when restarted, prints what the disk kept.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"seedfall.dev/sdk/sim"
)

func must(err error) {
	if err != nil {
		panic(err)
	}
}

func syncDir() {
	d, err := os.Open("/")
	must(err)
	must(d.Sync())
	d.Close()
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func syncPath(p string) {
	d, err := os.Open(p)
	must(err)
	must(d.Sync())
	d.Close()
}

func writeFile(p, content string, sync bool) {
	f, err := os.Create(p)
	must(err)
	_, err = f.WriteString(content)
	must(err)
	if sync {
		must(f.Sync())
	}
	must(f.Close())
}

// tree lists every file under dir as path=content, in name order.
func tree(dir string) string {
	var out []string
	filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return nil
		}
		if info.IsDir() {
			out = append(out, p+"/")
		} else {
			b, _ := os.ReadFile(p)
			out = append(out, p+"="+string(b))
		}
		return nil
	})
	sort.Strings(out)
	if len(out) == 0 {
		return "(none)"
	}
	return strings.Join(out, " ")
}

// booted says whether this is a restart: the marker is made durable under
// every model (fsync of the file and of its folder) before anything else.
func booted() bool {
	if exists("/marker") {
		return true
	}
	writeFile("/marker", "", true)
	syncPath("/")
	return false
}

// steps makes group k of disk operations at 20ms*k, so a crash at
// 20ms*k+10ms lands after step k; after the restart it prints what survived.
func steps() {
	if booted() {
		fmt.Printf("survived: %s\n", tree("/d"))
		return
	}
	start := time.Now()
	step := func(k int, f func()) {
		time.Sleep(time.Until(start.Add(time.Duration(k) * 20 * time.Millisecond)))
		f()
		fmt.Printf("step %d done\n", k)
	}
	step(1, func() { must(os.Mkdir("/d", 0o755)); syncPath("/") })
	step(2, func() { writeFile("/d/a", "a1", true) })
	step(3, func() { writeFile("/d/b.tmp", "b1", true); must(os.Rename("/d/b.tmp", "/d/b")) })
	step(4, func() { syncPath("/d") })
	step(5, func() { writeFile("/d/c", "c1", false); must(os.Rename("/d/a", "/d/a2")) })
	step(6, func() { f, err := os.OpenFile("/d/b", os.O_RDWR, 0); must(err); must(f.Sync()); f.Close() })
	step(7, func() { must(os.Remove("/d/b")) })
	time.Sleep(time.Hour)
}

// ack writes a record, acknowledges it in the test oracle, and after a
// restart checks that every acknowledged record is still there.
func ack(fsyncFile bool) {
	if raw, ok := sim.Recall("acked"); ok {
		for _, name := range strings.Fields(string(raw)) {
			sim.AlwaysOrUnreachable(exists("/"+name), "acknowledged records survive a crash", map[string]any{"record": name})
		}
		return
	}
	var acked []string
	for i := 0; i < 3; i++ {
		name := fmt.Sprintf("rec%d", i)
		writeFile("/"+name, "payload", fsyncFile)
		acked = append(acked, name)
		sim.Remember("acked", []byte(strings.Join(acked, " ")))
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(time.Hour)
}

func main() {
	mode := flag.String("mode", "unsynced", "unsynced | rename | torn | eio | osync | pause | skew | jump | steps | ack-nodirsync | ack-nofsync | media | seeded | needsdir")
	flag.Parse()
	switch *mode {
	case "steps":
		steps()
	case "ack-nodirsync":
		// fsync of each file, never of the folder: durable under ext4 only.
		ack(true)
	case "ack-nofsync":
		// no fsync at all: lost under every model.
		ack(false)
	case "media":
		media()
	case "seeded":
		b, err := os.ReadFile("/etc/app.conf")
		must(err)
		fmt.Printf("app.conf: %q; /var/lib/app is a folder: %v\n", string(b), isDir("/var/lib/app"))
	case "needsdir":
		// A service that expects its data folder to exist.
		f, err := os.OpenFile("/var/lib/db/wal", os.O_CREATE|os.O_RDWR, 0o644)
		must(err)
		f.Close()
	case "unsynced":
		if exists("/f") {
			b, _ := os.ReadFile("/f")
			fmt.Printf("after crash: %q\n", string(b))
			return
		}
		f, err := os.Create("/f")
		must(err)
		syncDir()
		f.WriteString("synced")
		must(f.Sync())
		f.WriteString(" unsynced")
		fmt.Println("written")
		time.Sleep(time.Hour)
	case "rename":
		if exists("/marker") {
			fmt.Printf("after crash: final=%v tmp=%v\n", exists("/final"), exists("/tmp"))
			return
		}
		m, _ := os.Create("/marker")
		m.Sync()
		f, _ := os.Create("/tmp")
		f.WriteString("v2")
		must(f.Sync())
		syncDir()
		must(os.Rename("/tmp", "/final"))
		fmt.Println("renamed without a directory fsync")
		time.Sleep(time.Hour)
	case "torn":
		if exists("/t") {
			b, _ := os.ReadFile("/t")
			var kept []string
			for s := 0; s < 8; s++ {
				if s*512 < len(b) && b[s*512] == 'x' {
					kept = append(kept, fmt.Sprint(s))
				}
			}
			fmt.Printf("after crash: %d bytes, sectors kept [%s]\n", len(b), strings.Join(kept, " "))
			return
		}
		f, _ := os.Create("/t")
		f.Sync()
		syncDir()
		f.Write([]byte(strings.Repeat("x", 8*512)))
		fmt.Println("wrote 8 sectors")
		time.Sleep(time.Hour)
	case "eio":
		if exists("/e") {
			b, _ := os.ReadFile("/e")
			fmt.Printf("after crash: %q\n", string(b))
			return
		}
		f, _ := os.Create("/e")
		f.Sync()
		syncDir()
		f.WriteString("data")
		err := f.Sync()
		fmt.Printf("first fsync: %v (EIO: %v)\n", err, errors.Is(err, syscall.EIO))
		b, _ := os.ReadFile("/e")
		fmt.Printf("cache shows %q\n", string(b))
		fmt.Printf("second fsync: %v\n", f.Sync())
		time.Sleep(time.Hour)
	case "osync":
		if exists("/log") {
			b, _ := os.ReadFile("/log")
			fmt.Printf("after crash: %d records\n", strings.Count(string(b), "\n"))
			return
		}
		f, err := os.OpenFile("/log", os.O_CREATE|os.O_WRONLY|os.O_APPEND|os.O_SYNC, 0o644)
		must(err)
		syncDir()
		for i := 0; i < 20; i++ {
			fmt.Fprintf(f, "record %d\n", i)
		}
		fmt.Println("wrote 20 records")
		time.Sleep(time.Hour)
	case "pause", "skew":
		start := time.Now()
		for i := 0; i < 5; i++ {
			time.Sleep(20 * time.Millisecond)
		}
		fmt.Printf("node saw %dms pass\n", time.Since(start).Milliseconds())
	case "jump":
		before := time.Now()
		time.Sleep(50 * time.Millisecond)
		after := time.Now()
		fmt.Printf("wall clock moved %ds, monotonic %dms\n", after.Round(0).Unix()-before.Round(0).Unix(), after.Sub(before).Milliseconds())
	}
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

// media writes 16 sectors of known data durably, reads them back sector by
// sector and reports what the medium did: reads that failed, sectors whose
// data came back wrong; after a restart, the same for what the disk kept.
func media() {
	want := func(s int) byte { return byte('a' + s) }
	check := func(when string) {
		f, err := os.Open("/m")
		must(err)
		var failed, wrong []string
		buf := make([]byte, 512)
		for s := 0; s < 16; s++ {
			n, err := f.ReadAt(buf, int64(s*512))
			if err != nil {
				failed = append(failed, fmt.Sprintf("%d:%v", s, errors.Is(err, syscall.EIO)))
				continue
			}
			for i := 0; i < n; i++ {
				if buf[i] != want(s) {
					wrong = append(wrong, fmt.Sprint(s))
					break
				}
			}
		}
		f.Close()
		fmt.Printf("%s: eio [%s] wrong [%s]\n", when, strings.Join(failed, " "), strings.Join(wrong, " "))
	}
	if exists("/m") {
		check("after crash")
		return
	}
	f, err := os.Create("/m")
	must(err)
	for s := 0; s < 16; s++ {
		_, err := f.Write([]byte(strings.Repeat(string(want(s)), 512)))
		must(err)
	}
	must(f.Sync())
	f.Close()
	syncPath("/")
	check("first read")
	// Rewriting sector 3 remaps it if it went bad.
	f, err = os.OpenFile("/m", os.O_RDWR, 0)
	must(err)
	_, err = f.WriteAt([]byte(strings.Repeat(string(want(3)), 512)), 3*512)
	must(err)
	must(f.Sync())
	f.Close()
	check("after rewrite")
	time.Sleep(time.Hour)
}
