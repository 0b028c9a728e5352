package headtohead

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// clockTicks is Linux's USER_HZ, the unit of /proc/<pid>/stat's CPU times.
const clockTicks = 100

// cpuSeconds is the user and system CPU time the process has used.
func cpuSeconds(pid int) (float64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("reading the controller's CPU time: %w", err)
	}
	// The fields after the command (in parentheses, which may hold spaces):
	// state ppid ... utime (the 12th) stime (the 13th).
	end := strings.LastIndexByte(string(data), ')')
	f := strings.Fields(string(data[end+1:]))
	if end < 0 || len(f) < 13 {
		return 0, fmt.Errorf("reading the controller's CPU time: /proc/%d/stat is %q", pid, data)
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("reading the controller's CPU time: /proc/%d/stat is %q", pid, data)
	}
	return float64(utime+stime) / clockTicks, nil
}

// resetPeakRSS makes the kernel forget the process's peak resident set
// (VmHWM), so that peakRSSMiB measures one phase.
func resetPeakRSS(pid int) error {
	if err := os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0); err != nil {
		return fmt.Errorf("resetting the controller's peak memory: %w", err)
	}
	return nil
}

// peakRSSMiB is the process's peak resident set since it started or since
// resetPeakRSS, in MiB.
func peakRSSMiB(pid int) (float64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, fmt.Errorf("reading the controller's peak memory: %w", err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kib, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("reading the controller's peak memory: VmHWM is %q", v)
			}
			return float64(kib) / 1024, nil
		}
	}
	return 0, fmt.Errorf("reading the controller's peak memory: /proc/%d/status has no VmHWM", pid)
}
