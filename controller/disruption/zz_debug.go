package disruption

import (
	"fmt"
	"os"
	"sync"
	"time"
)

var dbgMu sync.Mutex
var dbgCounts = map[string]int{}

func dbg(now time.Time, what string) {
	if os.Getenv("STOWAGE_DEBUG_PROBES") == "" {
		return
	}
	dbgMu.Lock()
	defer dbgMu.Unlock()
	dbgCounts[fmt.Sprintf("%02d %s", now.Hour(), what)]++
}

// DumpDebug prints the counts.
func DumpDebug() {
	dbgMu.Lock()
	defer dbgMu.Unlock()
	for k, v := range dbgCounts {
		fmt.Fprintln(os.Stderr, "PROBES", k, v)
	}
}
