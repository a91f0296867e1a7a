//go:build unix

package sweep

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// lockHelperEnv makes the test binary, run as a child, try a lock and say
// how it went (TestLockHelperProcess).
const lockHelperEnv = "CCLAB_SWEEP_LOCK_HELPER"

// TestLockHelperProcess is the child's side of the tests below: it takes
// lockDir's or fcntlLock's lock on the path in lockHelperEnv ("dir:PATH"
// or "fcntl:PATH") and prints "locked" or "refused".
func TestLockHelperProcess(t *testing.T) {
	spec := os.Getenv(lockHelperEnv)
	if spec == "" {
		return
	}
	kind, path, _ := strings.Cut(spec, ":")
	var err error
	switch kind {
	case "dir":
		var unlock func()
		if unlock, err = lockDir(path); err == nil {
			unlock()
		} else if strings.Contains(err.Error(), "another cclab sweep") {
			err = errLocked
		}
	case "fcntl":
		var f *os.File
		if f, err = os.OpenFile(path, os.O_RDWR, 0); err == nil {
			err = fcntlLock(f)
			f.Close()
		}
	}
	switch {
	case err == nil:
		os.Stdout.WriteString("locked\n")
	case errors.Is(err, errLocked):
		os.Stdout.WriteString("refused\n")
	default:
		os.Stdout.WriteString("error: " + err.Error() + "\n")
	}
	os.Exit(0)
}

// tryInChild runs TestLockHelperProcess in a new process.
func tryInChild(t *testing.T, spec string) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestLockHelperProcess$")
	cmd.Env = append(os.Environ(), lockHelperEnv+"="+spec)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("child: %v (%s)", err, out)
	}
	return strings.TrimSpace(string(out))
}

// TestLockDirExcludesAnotherProcess: the operating system's lock
// (flock(2) here) keeps a second process off a directory a sweep holds,
// and lets it on once the first lets go.
func TestLockDirExcludesAnotherProcess(t *testing.T) {
	dir := t.TempDir()
	unlock, err := lockDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	if got := tryInChild(t, "dir:"+dir); got != "refused" {
		t.Errorf("while held: the other process %s", got)
	}
	unlock()
	if got := tryInChild(t, "dir:"+dir); got != "locked" {
		t.Errorf("after release: the other process %s", got)
	}
}

// TestFcntlLockExcludesAnotherProcess: the record lock that Solaris,
// illumos and AIX use instead of flock(2), checked here on Linux.
func TestFcntlLockExcludesAnotherProcess(t *testing.T) {
	path := filepath.Join(t.TempDir(), LockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := fcntlLock(f); err != nil {
		t.Fatal(err)
	}
	if got := tryInChild(t, "fcntl:"+path); got != "refused" {
		t.Errorf("while held: the other process %s", got)
	}
	fcntlUnlock(f)
	if got := tryInChild(t, "fcntl:"+path); got != "locked" {
		t.Errorf("after release: the other process %s", got)
	}
}

// TestLockDirSameProcessAnotherPath: a second lock in this process,
// through a symbolic link to the held directory, is refused whatever the
// system's lock would say (a record lock would grant it).
func TestLockDirSameProcessAnotherPath(t *testing.T) {
	dir := t.TempDir()
	link := filepath.Join(t.TempDir(), "out")
	if err := os.Symlink(dir, link); err != nil {
		t.Skip(err)
	}
	unlock, err := lockDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lockDir(link); err == nil || !strings.Contains(err.Error(), "another cclab sweep") {
		t.Errorf("through the link: %v", err)
	}
	unlock()
	again, err := lockDir(link)
	if err != nil {
		t.Fatalf("after release: %v", err)
	}
	again()
}

// TestHeldCoversWhatRecordLocksGrant: a record lock is granted twice in
// one process (so on Solaris, illumos and AIX only lockDir's set of held
// files refuses the second sweep), and the set refuses a second open file
// of the same lock file.
func TestHeldCoversWhatRecordLocksGrant(t *testing.T) {
	path := filepath.Join(t.TempDir(), LockFile)
	var files [2]*os.File
	var infos [2]os.FileInfo
	for i := range files {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := fcntlLock(f); err != nil {
			t.Fatalf("record lock %d in one process: %v", i, err)
		}
		if infos[i], err = f.Stat(); err != nil {
			t.Fatal(err)
		}
		files[i] = f
	}
	fcntlUnlock(files[0])
	var s lockSet
	if !s.add(infos[0], files[0]) {
		t.Fatal("first add refused")
	}
	if s.add(infos[1], files[1]) {
		t.Error("the same file through a second descriptor was added again")
	}
	s.remove(infos[1])
	if !s.add(infos[0], files[0]) {
		t.Error("refused after remove")
	}
}

// TestLockOutlivesADroppedUnlock: a lock whose unlock function is dropped
// without a call stays held through garbage collections. Its file used to
// be closed by the runtime's finalizer, which released the system's lock
// (flock here) while the process's set still listed the file, and once
// the folder was removed a new lock file given the same inode number was
// refused as held (seen when a test failed between lock and unlock).
func TestLockOutlivesADroppedUnlock(t *testing.T) {
	dir := t.TempDir()
	if _, err := lockDir(dir); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, LockFile)
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { // let go of it, as its unlock would have
		if f := held.remove(st); f != nil {
			f.Close()
		}
	})
	probe, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer probe.Close()
	for range 20 {
		runtime.GC()
		time.Sleep(5 * time.Millisecond) // finalizers run on their own goroutine
		// Another open file of the same lock file conflicts with a
		// held flock in the same process too.
		if err := lockFile(probe); !errors.Is(err, errLocked) {
			t.Fatalf("after a collection the lock was free (%v)", err)
		}
	}
}

// TestUnlockTwice: a second call of unlock does nothing (it used to
// unlock and close again).
func TestUnlockTwice(t *testing.T) {
	dir := t.TempDir()
	unlock, err := lockDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	unlock()
	again, err := lockDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer again()
	unlock()
	// The system's lock (flock) would still refuse a third; the set,
	// which is all there is against one on Solaris, illumos and AIX,
	// must still list the new holder.
	st, err := os.Stat(filepath.Join(dir, LockFile))
	if err != nil {
		t.Fatal(err)
	}
	held.mu.Lock()
	listed := slices.ContainsFunc(held.locks, func(h heldLock) bool { return os.SameFile(h.st, st) })
	held.mu.Unlock()
	if !listed {
		t.Error("the second unlock took the new holder's lock off the set")
	}
}
