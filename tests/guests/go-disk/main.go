// go-disk exercises the simulated disk and the fault model on real Go. Each
// mode writes something, waits to be crashed by a schedule the test gives,
// and, when restarted, prints what the disk kept.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"syscall"
	"time"
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

func main() {
	mode := flag.String("mode", "unsynced", "unsynced | rename | torn | eio | osync | pause | skew | jump")
	flag.Parse()
	switch *mode {
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
