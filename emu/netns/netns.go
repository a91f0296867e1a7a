// Package netns creates the emulator's network namespaces and TUN devices
// and removes them again, also after a crash.
//
// Every namespace is named cclab-<pid>-<role>, with the pid of the process
// that made it. The next start (or `cclab emu --clean`) removes only those
// whose process is dead, so concurrent cclab processes (tests, other runs)
// never delete each other's namespaces. Namespaces are bind-mounted under
// /run/netns by iproute2's `ip netns add`, so `ip netns` lists them and
// `ip netns exec` can inspect a live run.
//
// Code enters a namespace with Do, which runs a function on a fresh OS
// thread switched into the namespace and then discards the thread: sockets
// and TUN file descriptors opened there stay in the namespace for their whole
// life, whichever goroutine uses them later, while the rest of the process
// stays in the root namespace.
package netns

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// Prefix starts the name of every namespace cclab creates.
const Prefix = "cclab-"

// runDir is where iproute2 keeps named namespaces.
const runDir = "/run/netns"

// NS is a named network namespace.
type NS struct {
	// Name is the namespace's name under /run/netns.
	Name string
}

// Check reports what the emulator lacks on this machine: root (or
// CAP_NET_ADMIN), /dev/net/tun and iproute2's ip command. The error says
// what is missing and how to get it.
func Check() error {
	var missing []string
	if os.Geteuid() != 0 {
		missing = append(missing, "root privileges (or CAP_NET_ADMIN): run as root")
	}
	if _, err := os.Stat("/dev/net/tun"); err != nil {
		missing = append(missing, "/dev/net/tun (load the tun module: modprobe tun)")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		missing = append(missing, "the ip command (install iproute2)")
	}
	if len(missing) > 0 {
		return fmt.Errorf("the emulator needs %s", strings.Join(missing, "; "))
	}
	return nil
}

// Name returns the namespace name for role in this process.
func Name(role string) string {
	return fmt.Sprintf("%s%d-%s", Prefix, os.Getpid(), role)
}

// Create makes a namespace with its loopback up and IPv6 off (no router
// solicitations or other stray traffic on the emulated link). An existing
// namespace of the same name (a recycled pid) is replaced.
func Create(name string) (*NS, error) {
	if !strings.HasPrefix(name, Prefix) {
		return nil, fmt.Errorf("netns: name %q lacks the %q prefix", name, Prefix)
	}
	if _, err := os.Stat(filepath.Join(runDir, name)); err == nil {
		if err := ip("netns", "del", name); err != nil {
			return nil, err
		}
	}
	if err := ip("netns", "add", name); err != nil {
		return nil, err
	}
	n := &NS{Name: name}
	if err := n.IP("link", "set", "lo", "up"); err != nil {
		n.Delete()
		return nil, err
	}
	if err := n.Do(func() error {
		// Writable only from inside the namespace; missing when the
		// kernel has no IPv6, which is just as good.
		_ = os.WriteFile("/proc/sys/net/ipv6/conf/all/disable_ipv6", []byte("1"), 0)
		_ = os.WriteFile("/proc/sys/net/ipv6/conf/default/disable_ipv6", []byte("1"), 0)
		return nil
	}); err != nil {
		n.Delete()
		return nil, err
	}
	return n, nil
}

// Sysctl sets /proc/sys/<key> (dots as separators) inside the namespace.
func (n *NS) Sysctl(key, value string) error {
	return n.Do(func() error {
		p := "/proc/sys/" + strings.ReplaceAll(key, ".", "/")
		if err := os.WriteFile(p, []byte(value), 0); err != nil {
			return fmt.Errorf("netns %s: sysctl %s=%s: %w", n.Name, key, value, err)
		}
		return nil
	})
}

// IP runs `ip -n NAME args...`.
func (n *NS) IP(args ...string) error {
	return ip(append([]string{"-n", n.Name}, args...)...)
}

// Delete removes the namespace and with it every device inside.
func (n *NS) Delete() error {
	if n == nil {
		return nil
	}
	return ip("netns", "del", n.Name)
}

// Do runs f on an OS thread that has entered the namespace. The thread is
// discarded afterwards (the goroutine exits locked), so no other goroutine
// ever runs in the namespace by accident.
func (n *NS) Do(f func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		// No UnlockOSThread: the runtime then terminates this thread.
		fd, err := unix.Open(filepath.Join(runDir, n.Name), unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			errc <- fmt.Errorf("netns %s: %w", n.Name, err)
			return
		}
		err = unix.Setns(fd, unix.CLONE_NEWNET)
		unix.Close(fd)
		if err != nil {
			errc <- fmt.Errorf("netns %s: setns: %w", n.Name, err)
			return
		}
		errc <- f()
	}()
	return <-errc
}

// OpenTUN creates a TUN device (IPv4 packets without a packet-information
// header) inside the namespace and returns its non-blocking descriptor.
func (n *NS) OpenTUN(dev string) (int, error) {
	fd := -1
	err := n.Do(func() error {
		var err error
		fd, err = unix.Open("/dev/net/tun", unix.O_RDWR|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
		if err != nil {
			return fmt.Errorf("open /dev/net/tun: %w", err)
		}
		ifr, err := unix.NewIfreq(dev)
		if err != nil {
			unix.Close(fd)
			return err
		}
		ifr.SetUint16(unix.IFF_TUN | unix.IFF_NO_PI)
		if err := unix.IoctlIfreq(fd, unix.TUNSETIFF, ifr); err != nil {
			unix.Close(fd)
			return fmt.Errorf("TUNSETIFF %s: %w", dev, err)
		}
		return nil
	})
	if err != nil {
		return -1, fmt.Errorf("netns %s: %w", n.Name, err)
	}
	return fd, nil
}

// ip runs iproute2 and turns its stderr into the error.
func ip(args ...string) error {
	cmd := exec.Command("ip", args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		return fmt.Errorf("ip %s: %s", strings.Join(args, " "), msg)
	}
	return nil
}

// Owner parses the pid out of a cclab namespace name; ok is false for
// names cclab did not make.
func Owner(name string) (pid int, ok bool) {
	rest, found := strings.CutPrefix(name, Prefix)
	if !found {
		return 0, false
	}
	num, _, found := strings.Cut(rest, "-")
	if !found {
		return 0, false
	}
	// Only the decimal form Name writes: "cclab-01-x" or "cclab-+1-x" is
	// someone else's namespace, not pid 1's, and must not be cleaned up
	// as cclab's when that pid is gone.
	pid, err := strconv.Atoi(num)
	if err != nil || pid <= 0 || strconv.Itoa(pid) != num {
		return 0, false
	}
	return pid, true
}

// alive reports whether a process exists (EPERM still means it does). A
// zombie is dead: a killed run whose parent has not reaped it (or whose
// reaper is a container's init that never reaps) holds its pid but
// nothing else.
func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	if err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true // no procfs: trust kill
	}
	// The state follows the command name, which is in parentheses and
	// may itself contain spaces or parentheses.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return true
	}
	return b[i+2] != 'Z' && b[i+2] != 'X'
}

// List returns the names of every cclab namespace on the machine.
func List() ([]string, error) {
	ents, err := os.ReadDir(runDir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		if _, ok := Owner(e.Name()); ok {
			out = append(out, e.Name())
		}
	}
	return out, nil
}

// CleanStale removes the cclab namespaces whose creating process is dead
// (a crashed or killed run) and returns their names (those another
// process removed meanwhile among them), and the names of the cclab
// namespaces it left alone because their process is alive.
func CleanStale() (removed, live []string, err error) {
	names, err := List()
	if err != nil {
		return nil, nil, err
	}
	var errs []error
	for _, name := range names {
		pid, _ := Owner(name)
		if alive(pid) {
			live = append(live, name)
			continue
		}
		if err := delStale(name); err != nil {
			// Another process cleaning at the same time (a second run,
			// test packages run in parallel) may have removed it first:
			// gone is what was asked for.
			if _, serr := os.Stat(filepath.Join(runDir, name)); !errors.Is(serr, os.ErrNotExist) {
				errs = append(errs, err)
				continue
			}
		}
		removed = append(removed, name)
	}
	return removed, live, errors.Join(errs...)
}

// delStale removes a stale namespace; a variable so that a test can have
// another cleaner remove it first.
var delStale = func(name string) error { return ip("netns", "del", name) }
