package bench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Process is a process whose resident memory a run reports: the server or
// Neo4j, counted with its descendants (a launcher and the JVM it starts).
type Process struct {
	Name string
	PID  int
}

// ParseProcesses parses the bench's -rss flag: NAME=PID pairs separated by
// commas ("server=123,neo4j=456").
func ParseProcesses(s string) ([]Process, error) {
	var out []Process
	for _, part := range strings.Split(s, ",") {
		if part = strings.TrimSpace(part); part == "" {
			continue
		}
		name, pid, ok := strings.Cut(part, "=")
		n, err := strconv.Atoi(strings.TrimSpace(pid))
		if !ok || strings.TrimSpace(name) == "" || err != nil || n <= 0 {
			return nil, fmt.Errorf("%q is not NAME=PID", part)
		}
		out = append(out, Process{Name: strings.TrimSpace(name), PID: n})
	}
	return out, nil
}

// ProcFS reads processes from a /proc file system mounted at its path.
type ProcFS string

// Resident returns the resident memory (VmRSS) in bytes of each of roots
// and its descendants together, in the order of roots. A process that ends
// while it is read counts nothing; a root that does not exist is an error.
func (fs ProcFS) Resident(roots []int) ([]int64, error) {
	parents, err := fs.parents()
	if err != nil {
		return nil, err
	}
	out := make([]int64, len(roots))
	for i, root := range roots {
		if _, ok := parents[root]; !ok {
			return nil, fmt.Errorf("no process %d", root)
		}
		for _, pid := range Descendants(parents, root) {
			status, err := os.ReadFile(filepath.Join(string(fs), strconv.Itoa(pid), "status"))
			if err != nil {
				continue // it ended in between
			}
			if rss, ok := ParseVmRSS(status); ok {
				out[i] += rss
			}
		}
	}
	return out, nil
}

// parents maps every process to its parent.
func (fs ProcFS) parents() (map[int]int, error) {
	entries, err := os.ReadDir(string(fs))
	if err != nil {
		return nil, err
	}
	parents := map[int]int{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join(string(fs), e.Name(), "stat"))
		if err != nil {
			continue
		}
		if ppid, ok := ParseParent(stat); ok {
			parents[pid] = ppid
		}
	}
	return parents, nil
}

// Descendants returns root and every process below it in parents (a
// process's parent), root first.
func Descendants(parents map[int]int, root int) []int {
	children := map[int][]int{}
	for pid, ppid := range parents {
		children[ppid] = append(children[ppid], pid)
	}
	out := []int{root}
	for i := 0; i < len(out); i++ {
		for _, c := range children[out[i]] {
			if c != root {
				out = append(out, c)
			}
		}
	}
	return out
}

// ParseParent returns the parent pid from the contents of /proc/PID/stat:
// "pid (comm) state ppid …", where comm may hold spaces and parentheses,
// so the fields are counted from its last closing parenthesis.
func ParseParent(stat []byte) (int, bool) {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(string(stat[i+1:]))
	if len(f) < 2 {
		return 0, false
	}
	ppid, err := strconv.Atoi(f[1])
	return ppid, err == nil
}

// ParseVmRSS returns the VmRSS line of /proc/PID/status in bytes (the
// kernel writes it in kB); false for a process without one (a zombie, a
// kernel thread).
func ParseVmRSS(status []byte) (int64, bool) {
	for _, line := range strings.Split(string(status), "\n") {
		rest, ok := strings.CutPrefix(line, "VmRSS:")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) != 2 || f[1] != "kB" {
			return 0, false
		}
		kb, err := strconv.ParseInt(f[0], 10, 64)
		return kb * 1024, err == nil
	}
	return 0, false
}

// MemoryWatch samples the resident memory of processes while a run goes
// on: at the start, at every tick, and at the end.
type MemoryWatch struct {
	fs    ProcFS
	procs []Process
	pids  []int
	stop  context.CancelFunc
	done  chan struct{}

	mu               sync.Mutex
	start, last, max []int64
	maxTotal         int64
	err              error
}

// WatchMemory reads procs' resident memory now and then every interval
// until Stop. It fails when a process cannot be read at the start.
func WatchMemory(fs ProcFS, procs []Process, interval time.Duration) (*MemoryWatch, error) {
	w := &MemoryWatch{fs: fs, procs: procs, done: make(chan struct{})}
	for _, p := range procs {
		w.pids = append(w.pids, p.PID)
	}
	first, err := fs.Resident(w.pids)
	if err != nil {
		return nil, err
	}
	w.start = first
	w.record(first)
	ctx, cancel := context.WithCancel(context.Background())
	w.stop = cancel
	go func() {
		defer close(w.done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				w.sample()
			}
		}
	}()
	return w, nil
}

func (w *MemoryWatch) sample() {
	rss, err := w.fs.Resident(w.pids)
	w.mu.Lock()
	defer w.mu.Unlock()
	if err != nil {
		if w.err == nil {
			w.err = err
		}
		return
	}
	w.record(rss)
}

// record keeps rss as the last sample and raises the maxima; w.mu held or
// not yet shared.
func (w *MemoryWatch) record(rss []int64) {
	if w.max == nil {
		w.max = make([]int64, len(rss))
	}
	var total int64
	for i, v := range rss {
		w.max[i] = max(w.max[i], v)
		total += v
	}
	w.last, w.maxTotal = rss, max(w.maxTotal, total)
}

// Stop takes a last sample, stops the sampling and writes the start, end
// and peak of each process and of their sum to out.
func (w *MemoryWatch) Stop(out io.Writer) error {
	w.stop()
	<-w.done
	w.sample()
	w.mu.Lock()
	defer w.mu.Unlock()
	mb := func(b int64) string { return fmt.Sprintf("%.0f MB", float64(b)/(1<<20)) }
	fmt.Fprintln(out, "resident memory (VmRSS, each process with its children): start / end / peak")
	var start, end int64
	for i, p := range w.procs {
		fmt.Fprintf(out, "  %-8s pid %-7d %s / %s / %s\n", p.Name, p.PID, mb(w.start[i]), mb(w.last[i]), mb(w.max[i]))
		start, end = start+w.start[i], end+w.last[i]
	}
	fmt.Fprintf(out, "  %-20s %s / %s / %s (peak of the sum)\n", "all", mb(start), mb(end), mb(w.maxTotal))
	return w.err
}
