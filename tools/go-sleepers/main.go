// go-sleepers: Go's side of thread-perf's "million sleepers" row. n goroutines each wait on a
// one-hour timer or a channel (as a coroutine in thread_usleep waits for its deadline or an
// interrupt); once all are waiting, they are released and waited for. Prints, per round, the
// seconds to create them until all wait, the seconds to release and end them, and the RSS and
// page tables each holds while waiting (from /proc/self/status), then the medians.
//
//	go run ./tools/go-sleepers -n 1000000 -rounds 3   # GOMAXPROCS=1 unless -procs says more
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// statusKiB reads a "Key:   N kB" line of /proc/self/status.
func statusKiB(key string) int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return -1
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		line := s.Text()
		if strings.HasPrefix(line, key+":") {
			fields := strings.Fields(line[len(key)+1:])
			if len(fields) > 0 {
				v, _ := strconv.ParseInt(fields[0], 10, 64)
				return v
			}
		}
	}
	return -1
}

type round struct{ create, teardown, rss, pte float64 }

func oneRound(n int) round {
	runtime.GC()
	debug.FreeOSMemory()
	rss0, pte0 := statusKiB("VmRSS"), statusKiB("VmPTE")
	var waiting, ended sync.WaitGroup
	waiting.Add(n)
	ended.Add(n)
	stop := make(chan struct{})
	t0 := time.Now()
	for i := 0; i < n; i++ {
		go func() {
			t := time.NewTimer(time.Hour)
			waiting.Done()
			select {
			case <-stop:
				t.Stop()
			case <-t.C:
			}
			ended.Done()
		}()
	}
	waiting.Wait()
	var r round
	r.create = time.Since(t0).Seconds()
	r.rss = float64(statusKiB("VmRSS")-rss0) * 1024 / float64(n)
	r.pte = float64(statusKiB("VmPTE")-pte0) * 1024 / float64(n)
	t1 := time.Now()
	close(stop)
	ended.Wait()
	r.teardown = time.Since(t1).Seconds()
	return r
}

func median(v []float64) float64 {
	sort.Float64s(v)
	return v[len(v)/2]
}

func main() {
	n := flag.Int("n", 1000000, "goroutines")
	rounds := flag.Int("rounds", 3, "rounds")
	procs := flag.Int("procs", 1, "GOMAXPROCS")
	flag.Parse()
	if *n < 1 || *rounds < 1 || *procs < 1 {
		fmt.Fprintln(os.Stderr, "go-sleepers: -n, -rounds and -procs must be positive")
		os.Exit(2)
	}
	runtime.GOMAXPROCS(*procs)
	var create, teardown, rss, pte []float64
	for i := 0; i < *rounds; i++ {
		r := oneRound(*n)
		fmt.Printf("round %d: create %.2f s, teardown %.2f s, RSS %.0f B and page tables %.0f B each\n",
			i+1, r.create, r.teardown, r.rss, r.pte)
		create = append(create, r.create)
		teardown = append(teardown, r.teardown)
		rss = append(rss, r.rss)
		pte = append(pte, r.pte)
	}
	fmt.Printf("-- %d goroutines (%s, GOMAXPROCS %d), medians of %d rounds: create %.2f s, "+
		"teardown %.2f s, RSS %.0f B, page tables %.0f B per goroutine\n",
		*n, runtime.Version(), *procs, *rounds, median(create), median(teardown), median(rss),
		median(pte))
}
