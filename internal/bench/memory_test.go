package bench_test

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/membrane/membrane/internal/bench"
)

func TestParseProcesses(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []bench.Process
		err  bool
	}{
		{in: "server=12,neo4j=345", want: []bench.Process{{"server", 12}, {"neo4j", 345}}},
		{in: " server = 12 , ", want: []bench.Process{{"server", 12}}},
		{in: "", want: nil},
		{in: "server", err: true},
		{in: "=12", err: true},
		{in: "server=x", err: true},
		{in: "server=0", err: true},
		{in: "server=-3", err: true},
	} {
		got, err := bench.ParseProcesses(tc.in)
		if (err != nil) != tc.err || !slices.Equal(got, tc.want) {
			t.Errorf("ParseProcesses(%q) = %v, %v; want %v, error %v", tc.in, got, err, tc.want, tc.err)
		}
	}
}

func TestParseParent(t *testing.T) {
	for _, tc := range []struct {
		stat string
		want int
		ok   bool
	}{
		{"123 (java) S 45 123 45 0 -1", 45, true},
		{"7 (a (b) c) R 1 7 7 0", 1, true}, // comm with spaces and parentheses
		{"7 (x)", 0, false},
		{"garbage", 0, false},
		{"7 (x) S notanumber", 0, false},
	} {
		got, ok := bench.ParseParent([]byte(tc.stat))
		if got != tc.want || ok != tc.ok {
			t.Errorf("ParseParent(%q) = %d, %v; want %d, %v", tc.stat, got, ok, tc.want, tc.ok)
		}
	}
}

func TestParseVmRSS(t *testing.T) {
	for _, tc := range []struct {
		status string
		want   int64
		ok     bool
	}{
		{"Name:\tjava\nVmPeak:\t 9 kB\nVmRSS:\t  2048 kB\nThreads: 3\n", 2048 * 1024, true},
		{"Name:\tkthreadd\nThreads: 1\n", 0, false},
		{"VmRSS:\t12 MB\n", 0, false},
		{"VmRSS:\tx kB\n", 0, false},
	} {
		got, ok := bench.ParseVmRSS([]byte(tc.status))
		if got != tc.want || ok != tc.ok {
			t.Errorf("ParseVmRSS(%q) = %d, %v; want %d, %v", tc.status, got, ok, tc.want, tc.ok)
		}
	}
}

func TestDescendants(t *testing.T) {
	parents := map[int]int{1: 0, 10: 1, 11: 10, 12: 10, 13: 11, 20: 1, 21: 20}
	got := bench.Descendants(parents, 10)
	slices.Sort(got)
	if want := []int{10, 11, 12, 13}; !slices.Equal(got, want) {
		t.Errorf("Descendants(10) = %v, want %v", got, want)
	}
	if got := bench.Descendants(parents, 13); !slices.Equal(got, []int{13}) {
		t.Errorf("Descendants(13) = %v, want [13]", got)
	}
}

// fakeProc writes a /proc with processes pid -> (ppid, rss kB).
func fakeProc(t *testing.T, procs map[int][2]int) bench.ProcFS {
	root := t.TempDir()
	for pid, p := range procs {
		dir := filepath.Join(root, strconv.Itoa(pid))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		stat := strconv.Itoa(pid) + " (p) S " + strconv.Itoa(p[0]) + " 0 0\n"
		status := "Name:\tp\nVmRSS:\t" + strconv.Itoa(p[1]) + " kB\n"
		if err := os.WriteFile(filepath.Join(dir, "stat"), []byte(stat), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "status"), []byte(status), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Entries that are not processes are skipped.
	if err := os.WriteFile(filepath.Join(root, "meminfo"), []byte("MemTotal: 1 kB\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return bench.ProcFS(root)
}

func TestResident(t *testing.T) {
	fs := fakeProc(t, map[int][2]int{1: {0, 1}, 100: {1, 1000}, 101: {100, 500}, 200: {1, 300}})
	got, err := fs.Resident([]int{100, 200})
	if err != nil {
		t.Fatal(err)
	}
	if want := []int64{1500 * 1024, 300 * 1024}; !slices.Equal(got, want) {
		t.Errorf("Resident = %v, want %v", got, want)
	}
	if _, err := fs.Resident([]int{999}); err == nil {
		t.Error("Resident of a process that does not exist: no error")
	}
}

// TestWatchMemoryReport: the report gives each process's start, end and
// peak and the peak of their sum, from the real /proc (this test's own
// process).
func TestWatchMemoryReport(t *testing.T) {
	w, err := bench.WatchMemory("/proc", []bench.Process{{Name: "self", PID: os.Getpid()}}, time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := w.Stop(&out); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3 || !strings.Contains(lines[1], "self") || !strings.Contains(lines[1], "pid "+strconv.Itoa(os.Getpid())) ||
		!strings.HasPrefix(strings.TrimSpace(lines[2]), "all") || strings.Contains(out.String(), " 0 MB") {
		t.Errorf("report:\n%s", out.String())
	}
	if _, err := bench.WatchMemory("/proc", []bench.Process{{Name: "gone", PID: 1 << 30}}, time.Second); err == nil {
		t.Error("WatchMemory of a process that does not exist: no error")
	}
}
