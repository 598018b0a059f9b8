package eval

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Memory is what a process (or a tree of them) holds in RAM, in bytes.
type Memory struct {
	// RSS counts every resident page, shared ones in full; PSS divides each shared page among
	// the processes sharing it, so PSS of a tree sums to what the tree really uses (PostgreSQL's
	// backends share shared_buffers).
	RSS int64 `json:"rss_bytes"`
	PSS int64 `json:"pss_bytes"`
	// Peak is the largest RSS the process reached (VmHWM); for a tree, the sum of the peaks.
	Peak int64 `json:"peak_rss_bytes"`
}

// ProcessMemory reads /proc for one process. It fails on systems without /proc.
func ProcessMemory(pid int) (Memory, error) {
	var m Memory
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
	if err != nil {
		return m, err
	}
	m.RSS = kbField(b, "Rss:")
	m.PSS = kbField(b, "Pss:")
	if st, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid)); err == nil {
		m.Peak = kbField(st, "VmHWM:")
	}
	return m, nil
}

// TreeMemory sums ProcessMemory over a process and all its descendants.
func TreeMemory(root int) (Memory, error) {
	children := map[int][]int{}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return Memory{}, err
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// The command name in parentheses may hold spaces: the fields after it are fixed.
		i := bytes.LastIndexByte(stat, ')')
		fields := strings.Fields(string(stat[i+1:]))
		if len(fields) < 2 {
			continue
		}
		ppid, _ := strconv.Atoi(fields[1])
		children[ppid] = append(children[ppid], pid)
	}
	total, err := ProcessMemory(root)
	if err != nil {
		return total, err
	}
	queue := children[root]
	for len(queue) > 0 {
		pid := queue[0]
		queue = append(queue[1:], children[pid]...)
		m, err := ProcessMemory(pid)
		if err != nil {
			continue // it exited meanwhile
		}
		total.RSS += m.RSS
		total.PSS += m.PSS
		total.Peak += m.Peak
	}
	return total, nil
}

// PostmasterPID reads the server's process id from postmaster.pid in its data directory.
func PostmasterPID(dataDir string) (int, error) {
	f, err := os.Open(filepath.Join(dataDir, "postmaster.pid"))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	if !sc.Scan() {
		return 0, fmt.Errorf("%s/postmaster.pid is empty", dataDir)
	}
	return strconv.Atoi(strings.TrimSpace(sc.Text()))
}

func kbField(b []byte, name string) int64 {
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, name); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// DirSize is the bytes of the files under dir.
func DirSize(dir string) (int64, error) {
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			info, err := d.Info()
			if err != nil {
				return err
			}
			n += info.Size()
		}
		return nil
	})
	return n, err
}
