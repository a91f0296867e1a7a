package gym

import (
	"errors"
	"os"
	"runtime"
	"syscall"
)

// errNoLanes is why OpenSharedLane fails here (Unimplemented); the
// Python client then steps through StepStream, which works everywhere.
var errNoLanes = errors.New("shared-memory step lanes need a Unix system (memory-mapped files and Unix-domain sockets with raw reads); this server runs on " + runtime.GOOS + ": step through StepStream")

func mapShared(*os.File, int) ([]byte, error) { return nil, errNoLanes }

func unmapShared([]byte) {}

// The doorbell is never rung where no lane opens (mapShared fails first).

func (d *doorbell) read(uintptr) bool  { d.err = syscall.EWINDOWS; return true }
func (d *doorbell) write(uintptr) bool { d.err = syscall.EWINDOWS; return true }
