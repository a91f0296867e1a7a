package emu

import (
	"fmt"
	"sort"
	"strings"
	"sync"
)

// A stack makes the endpoints of flows whose scenario entry says
// `stack: NAME` (other than kernel). Stacks register themselves from
// packages above emu (cclab's UDP transport needs the agents of rpc/,
// which emu cannot import); the cclab command links them in.
var (
	stacksMu sync.RWMutex
	stacks   = map[string]func(FlowSpec) (Endpoints, error){}
)

// RegisterStack adds a named endpoint stack. It panics on a duplicate.
func RegisterStack(name string, make func(FlowSpec) (Endpoints, error)) {
	stacksMu.Lock()
	defer stacksMu.Unlock()
	if _, dup := stacks[name]; dup || name == "kernel" || name == "" {
		panic("emu: duplicate stack " + name)
	}
	stacks[name] = make
}

func lookupStack(name string) (func(FlowSpec) (Endpoints, error), error) {
	stacksMu.RLock()
	defer stacksMu.RUnlock()
	if f, ok := stacks[name]; ok {
		return f, nil
	}
	names := []string{"kernel"}
	for n := range stacks {
		names = append(names, n)
	}
	sort.Strings(names)
	return nil, fmt.Errorf("stack %q is not available in this program (available: %s)", name, strings.Join(names, ", "))
}
