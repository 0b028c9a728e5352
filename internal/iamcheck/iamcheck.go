// Package iamcheck lets a second IAM evaluator vote on the AWS emulator's
// authorization decisions: a test package's TestMain runs its tests through
// Main, which records every decision any emulator of the process makes (the
// request, its context and the policies in force) and afterwards replays
// them through @cloud-copilot/iam-simulate, which AWS's own authorization
// data drives. A disagreement fails the package. iam-simulate is AGPL-3.0:
// it runs as its own node process (replay.mjs), installed by make tools
// into the cache, and nothing of it is linked into Stowage.
package iamcheck

import (
	"bufio"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"

	"github.com/stowage-dev/stowage/internal/awsemu"
)

// Log collects decisions once each, writing them as JSON lines (see
// replay.mjs) with each policy document written once.
type Log struct {
	mu       sync.Mutex
	w        *bufio.Writer
	f        *os.File
	err      error
	policies map[string]int      // document -> id
	seen     map[[32]byte]bool   // decisions already written
	total    int                 // decisions heard, repeats included
	distinct int                 // decisions written
	byAction map[string]struct{} // actions heard
}

// NewLog writes a log to a new file at path.
func NewLog(path string) (*Log, error) {
	f, err := os.Create(path) //nolint:gosec // a temporary file of the test
	if err != nil {
		return nil, err
	}
	return &Log{f: f, w: bufio.NewWriter(f), policies: map[string]int{}, seen: map[[32]byte]bool{}, byAction: map[string]struct{}{}}, nil
}

// record is one decision as replay.mjs reads it.
type record struct {
	Principal      string              `json:"principal"`
	Account        string              `json:"account"`
	Action         string              `json:"action"`
	Resource       string              `json:"resource"`
	Context        map[string][]string `json:"context"`
	Identity       []int               `json:"identity"`
	ResourcePolicy *int                `json:"resourcePolicy,omitempty"`
	Decision       string              `json:"decision"`
}

// clockKeys change with every request and matter to no policy the tests
// use: decisions that differ only in them are replayed once.
var clockKeys = map[string]bool{"aws:currenttime": true, "aws:epochtime": true}

// Add logs a decision, unless the same one was logged already.
func (l *Log) Add(a awsemu.Authorization) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.total++
	l.byAction[a.Action] = struct{}{}
	r := record{Principal: a.Principal, Account: a.Account, Action: a.Action, Resource: a.Resource, Decision: a.Decision,
		Context: map[string][]string{}}
	for _, doc := range a.Identity {
		r.Identity = append(r.Identity, l.policyLocked(doc))
	}
	if a.ResourcePolicy != "" {
		id := l.policyLocked(a.ResourcePolicy)
		r.ResourcePolicy = &id
	}
	key := sha256.New()
	fmt.Fprintf(key, "%s\x00%s\x00%s\x00%s\x00%v\x00%v", r.Principal, r.Action, r.Resource, r.Decision, r.Identity, r.ResourcePolicy)
	keys := make([]string, 0, len(a.Context))
	for k := range a.Context {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		r.Context[k] = a.Context[k]
		if !clockKeys[k] {
			fmt.Fprintf(key, "\x00%s=%s", k, strings.Join(a.Context[k], "\x01"))
		}
	}
	var sum [32]byte
	copy(sum[:], key.Sum(nil))
	if l.seen[sum] {
		return
	}
	l.seen[sum] = true
	l.distinct++
	l.writeLocked(r)
}

func (l *Log) policyLocked(doc string) int {
	if id, ok := l.policies[doc]; ok {
		return id
	}
	id := len(l.policies)
	l.policies[doc] = id
	l.writeLocked(struct {
		Policy int    `json:"policy"`
		Doc    string `json:"doc"`
	}{id, doc})
	return id
}

func (l *Log) writeLocked(v any) {
	b, err := json.Marshal(v)
	if err == nil {
		b = append(b, '\n')
		_, err = l.w.Write(b)
	}
	if err != nil && l.err == nil {
		l.err = err
	}
}

// Close flushes the log and reports how many decisions it heard and how
// many distinct ones it wrote.
func (l *Log) Close() (total, distinct int, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.w.Flush(); err != nil && l.err == nil {
		l.err = err
	}
	if err := l.f.Close(); err != nil && l.err == nil {
		l.err = err
	}
	return l.total, l.distinct, l.err
}
