package gym

import (
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"sync"
	"syscall"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/cclab/cclab/rpc/gym/gympb"
)

// A shared-memory step lane (OpenSharedLane) carries one vector's steps
// between a client and the server on one machine: the client writes the
// actions and a sequence number into a memory-mapped file and writes one
// byte to a Unix-domain socket; the lane's goroutine, blocked reading that
// socket, steps the vector exactly as StepStream does (Server.step, then
// encodeBatch), copies the packed results into the file and writes one
// byte back. Neither side spins: both block in read(2).
//
// The file is shared with another process, so the server trusts nothing
// in it: it reads only the header's request fields and the action region,
// at offsets it computed itself, checks the header's fixed fields and the
// sequence number, copies the actions out before decoding them (the client
// may be writing them still), and touches the mapping only with
// SetPanicOnFault on, so a file truncated under it is an error, not a
// crash.

const (
	laneMagic   = 0x4E4C4343 // "CCLN" little-endian
	laneVersion = 1
	laneHeader  = 128
	// laneMaxKeys and laneKeysSize bound the info keys a lane carries;
	// cclab's environments emit a handful.
	laneMaxKeys  = 64
	laneKeysSize = 4096
	laneMsgSize  = 1024
	// laneAccept is how long an opened lane waits for its client.
	laneAccept = 30 * time.Second

	// Header offsets.
	hMagic, hVersion, hNumEnvs, hActDim, hObsDim = 0, 4, 8, 12, 16
	hReqSeq, hAutoreset, hRespSeq, hStatus       = 24, 32, 40, 48
	hMsgLen, hKeyCount, hKeyGen                  = 52, 56, 60
)

// laneLayout is where each region of a lane file lies.
type laneLayout struct {
	n, actDim, obsDim                           int
	act, obs, rew, term, trunc, vals, pres, key int
	msg, size                                   int
}

func align8(x int) int { return (x + 7) &^ 7 }

func newLaneLayout(n, actDim, obsDim int) laneLayout {
	l := laneLayout{n: n, actDim: actDim, obsDim: obsDim}
	off := laneHeader
	next := func(size int) int {
		at := off
		off = align8(off + size)
		return at
	}
	l.act = next(4 * n * actDim)
	l.obs = next(4 * n * obsDim)
	l.rew = next(8 * n)
	l.term = next(n)
	l.trunc = next(n)
	l.vals = next(8 * n * laneMaxKeys)
	l.pres = next(n * laneMaxKeys)
	l.key = next(laneKeysSize)
	l.msg = next(laneMsgSize)
	l.size = off
	return l
}

// laneRequest is one step's request as read from a lane's header.
type laneRequest struct {
	seq       uint64
	autoreset bool
}

// parseLaneRequest checks a lane file's header against its layout and the
// sequence number the server expects, and copies the actions into acts
// (len 4 x n x action dim). It never reads outside buf.
func parseLaneRequest(buf []byte, l *laneLayout, wantSeq uint64, acts []byte) (laneRequest, error) {
	if len(buf) < l.size {
		return laneRequest{}, fmt.Errorf("lane file is %d bytes, want %d (truncated?)", len(buf), l.size)
	}
	le := binary.LittleEndian
	for _, f := range []struct {
		name      string
		off       int
		got, want uint32
	}{
		{"magic", hMagic, le.Uint32(buf[hMagic:]), laneMagic},
		{"version", hVersion, le.Uint32(buf[hVersion:]), laneVersion},
		{"num_envs", hNumEnvs, le.Uint32(buf[hNumEnvs:]), uint32(l.n)},
		{"action dim", hActDim, le.Uint32(buf[hActDim:]), uint32(l.actDim)},
		{"observation dim", hObsDim, le.Uint32(buf[hObsDim:]), uint32(l.obsDim)},
	} {
		if f.got != f.want {
			return laneRequest{}, fmt.Errorf("lane header: %s (offset %d) is %#x, want %#x (the file was overwritten)", f.name, f.off, f.got, f.want)
		}
	}
	r := laneRequest{seq: le.Uint64(buf[hReqSeq:])}
	if r.seq != wantSeq {
		return laneRequest{}, fmt.Errorf("lane header: request sequence is %d, want %d (one step per doorbell)", r.seq, wantSeq)
	}
	switch a := le.Uint32(buf[hAutoreset:]); a {
	case 0, 1:
		r.autoreset = a == 1
	default:
		return laneRequest{}, fmt.Errorf("lane header: autoreset is %d, want 0 or 1", a)
	}
	if len(acts) != 4*l.n*l.actDim {
		return laneRequest{}, fmt.Errorf("lane: action buffer of %d bytes, want %d", len(acts), 4*l.n*l.actDim)
	}
	copy(acts, buf[l.act:l.act+len(acts)])
	return r, nil
}

// lane is one open lane's server side.
type lane struct {
	s      *Server
	handle uint64
	dir    string
	lis    *net.UnixListener
	mem    []byte
	lay    laneLayout
	done   chan struct{}

	mu     sync.Mutex
	conn   net.Conn
	closed bool

	// Reused from step to step.
	req   gympb.StepRequest
	out   stepOut
	batch gympb.StepBatch
	keys  []string
	bell  [1]byte
	// The info keys the file holds, and their generation.
	fileKeys []string
	keyGen   uint32
}

// laneDir picks where lanes live: tmpfs at /dev/shm (no writeback to a
// disk) when there is one, else the temporary directory.
func laneDir(dir string) string {
	if dir != "" {
		return dir
	}
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		if f, err := os.CreateTemp("/dev/shm", "cclab-probe-"); err == nil {
			f.Close()
			os.Remove(f.Name())
			return "/dev/shm"
		}
	}
	return os.TempDir()
}

// OpenSharedLane implements gympb.GymServer.
func (s *Server) OpenSharedLane(_ context.Context, req *gympb.OpenLaneRequest) (*gympb.OpenLaneResponse, error) {
	if errNoLanes != nil {
		return nil, status.Error(codes.Unimplemented, errNoLanes.Error())
	}
	v, err := s.vec(req.GetHandle())
	if err != nil {
		return nil, err
	}
	lay := newLaneLayout(len(v.envs), v.act.Dim(), v.obsDim)
	v.mu.Unlock()
	parent := laneDir(req.GetDir())
	dir, err := os.MkdirTemp(parent, "cclab-lane-") // mode 0700
	if err != nil {
		return nil, status.Errorf(codes.FailedPrecondition, "dir: cannot create a lane directory in %s: %v", parent, err)
	}
	l := &lane{s: s, handle: req.GetHandle(), dir: dir, lay: lay, done: make(chan struct{})}
	if err := l.create(); err != nil {
		l.release()
		return nil, status.Errorf(codes.FailedPrecondition, "dir: cannot create a lane in %s: %v", dir, err)
	}
	s.mu.Lock()
	if s.lanesClosed {
		s.mu.Unlock()
		l.release()
		return nil, status.Error(codes.Unavailable, "the server is stopping")
	}
	if s.vecs[l.handle] == nil {
		err := s.missing(l.handle)
		s.mu.Unlock()
		l.release()
		return nil, err
	}
	if s.lanes == nil {
		s.lanes = map[uint64]*lane{}
	}
	old := s.lanes[l.handle]
	s.lanes[l.handle] = l
	s.mu.Unlock()
	if old != nil {
		old.close()
	}
	go l.run()
	return &gympb.OpenLaneResponse{
		Path: filepath.Join(dir, "lane"), Socket: filepath.Join(dir, "bell.sock"),
		Size: uint64(lay.size), Version: laneVersion,
		ActionsOffset: uint64(lay.act), ObservationsOffset: uint64(lay.obs), RewardsOffset: uint64(lay.rew),
		TerminatedOffset: uint64(lay.term), TruncatedOffset: uint64(lay.trunc),
		InfoValuesOffset: uint64(lay.vals), InfoPresentOffset: uint64(lay.pres),
		InfoKeysOffset: uint64(lay.key), MaxInfoKeys: laneMaxKeys, InfoKeysSize: laneKeysSize,
		MessageOffset: uint64(lay.msg), MessageSize: laneMsgSize,
		AcceptTimeoutMs: uint32(laneAccept / time.Millisecond),
	}, nil
}

// create makes the lane's file, maps it and listens on its doorbell.
func (l *lane) create() error {
	f, err := os.OpenFile(filepath.Join(l.dir, "lane"), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := f.Truncate(int64(l.lay.size)); err != nil {
		return err
	}
	mem, err := mapShared(f, l.lay.size)
	if err != nil {
		return err
	}
	l.mem = mem
	le := binary.LittleEndian
	le.PutUint32(mem[hMagic:], laneMagic)
	le.PutUint32(mem[hVersion:], laneVersion)
	le.PutUint32(mem[hNumEnvs:], uint32(l.lay.n))
	le.PutUint32(mem[hActDim:], uint32(l.lay.actDim))
	le.PutUint32(mem[hObsDim:], uint32(l.lay.obsDim))
	lis, err := net.ListenUnix("unix", &net.UnixAddr{Name: filepath.Join(l.dir, "bell.sock"), Net: "unix"})
	if err != nil {
		return err
	}
	lis.SetUnlinkOnClose(false) // release removes the whole directory
	l.lis = lis
	l.req.Handle = l.handle
	l.req.Actions = make([]byte, 4*l.lay.n*l.lay.actDim)
	l.batch.Infos = &gympb.InfoTable{}
	l.bell[0] = 1
	return nil
}

// release unmaps the file and removes the lane's directory.
func (l *lane) release() {
	if l.lis != nil {
		l.lis.Close()
	}
	if l.mem != nil {
		unmapShared(l.mem)
		l.mem = nil
	}
	os.RemoveAll(l.dir)
}

// close ends the lane and waits until its files are gone.
func (l *lane) close() {
	l.mu.Lock()
	l.closed = true
	if l.conn != nil {
		l.conn.Close()
	}
	l.mu.Unlock()
	l.lis.Close()
	<-l.done
}

// run accepts the lane's one client, removes the lane's files (the client
// has mapped the file and connected, so neither is needed by name again,
// and a server killed later leaves nothing behind), then serves steps
// until the client hangs up or the lane closes.
func (l *lane) run() {
	defer close(l.done)
	defer l.release()
	defer l.forget()
	l.lis.SetDeadline(time.Now().Add(laneAccept))
	conn, err := l.lis.Accept()
	if err != nil {
		return
	}
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		conn.Close()
		return
	}
	l.conn = conn
	l.mu.Unlock()
	defer conn.Close()
	l.lis.Close()
	os.RemoveAll(l.dir)
	rc, err := conn.(*net.UnixConn).SyscallConn()
	if err != nil {
		return
	}
	// The doorbell's reads and writes are raw non-blocking system calls,
	// waited for by the runtime's poller: a plain conn.Read or Write
	// enters the runtime's syscall path, which wakes its sysmon thread out
	// of the deep sleep it falls into whenever the server idles between
	// two steps, a thread wake-up per step (~13% of a MARLIN lane's
	// server CPU in perf).
	d := &doorbell{}
	read, write := d.read, d.write
	for seq := uint64(1); ; seq++ {
		if err := rc.Read(read); err != nil || d.err != 0 || d.n == 0 {
			return
		}
		fatal := l.serve(seq)
		if err := rc.Write(write); err != nil || d.err != 0 || fatal {
			return
		}
	}
}

// doorbell reads and writes one byte on the lane's non-blocking socket;
// its methods (one file per system) are syscall.RawConn callbacks, bound
// once. n and err are the last call's outcome.
type doorbell struct {
	b   [1]byte
	n   uintptr
	err syscall.Errno
}

// forget drops the lane from the server's table if it is still there.
func (l *lane) forget() {
	l.s.mu.Lock()
	if l.s.lanes[l.handle] == l {
		delete(l.s.lanes, l.handle)
	}
	l.s.mu.Unlock()
}

// serve runs request seq from the file and writes its answer; it reports
// whether the lane is unusable (a corrupted header or file), after writing
// the error into the file if it still can.
func (l *lane) serve(seq uint64) (fatal bool) {
	old := debug.SetPanicOnFault(true)
	defer debug.SetPanicOnFault(old)
	defer func() {
		if p := recover(); p != nil {
			fatal = true // the mapping faulted: the file was truncated
		}
	}()
	r, err := parseLaneRequest(l.mem, &l.lay, seq, l.req.Actions)
	if err != nil {
		l.answer(seq, codes.InvalidArgument, err.Error())
		return true
	}
	l.req.Autoreset = r.autoreset
	v, err := l.s.step(&l.req, &l.out)
	if err != nil {
		st, _ := status.FromError(err)
		l.answer(seq, st.Code(), st.Message())
		return false
	}
	l.keys = encodeBatch(&l.batch, &l.out, l.keys)
	l.s.release(v)
	if err := l.write(); err != nil {
		l.answer(seq, codes.ResourceExhausted, err.Error())
		return false
	}
	l.answer(seq, codes.OK, "")
	return false
}

// write copies the encoded step into the file.
func (l *lane) write() error {
	m, lay, b := l.mem, &l.lay, &l.batch
	t := b.Infos
	nk := len(t.Keys)
	if nk > laneMaxKeys {
		return fmt.Errorf("infos: %d keys, more than a lane carries (%d); step over StepStream instead", nk, laneMaxKeys)
	}
	if !slices.Equal(t.Keys, l.fileKeys) {
		k := m[lay.key : lay.key+laneKeysSize]
		at := 0
		for _, key := range t.Keys {
			if at+2+len(key) > len(k) || len(key) > 0xFFFF {
				return fmt.Errorf("infos: keys longer than a lane carries (%d bytes); step over StepStream instead", laneKeysSize)
			}
			binary.LittleEndian.PutUint16(k[at:], uint16(len(key)))
			at += 2 + copy(k[at+2:], key)
		}
		l.fileKeys = append(l.fileKeys[:0], t.Keys...)
		l.keyGen++
		binary.LittleEndian.PutUint32(m[hKeyCount:], uint32(nk))
		binary.LittleEndian.PutUint32(m[hKeyGen:], l.keyGen)
	}
	copy(m[lay.obs:lay.obs+4*lay.n*lay.obsDim], b.Observations)
	copy(m[lay.rew:lay.rew+8*lay.n], b.Rewards)
	copy(m[lay.term:lay.term+lay.n], b.Terminated)
	copy(m[lay.trunc:lay.trunc+lay.n], b.Truncated)
	copy(m[lay.vals:lay.vals+8*lay.n*nk], t.Values)
	pres := m[lay.pres : lay.pres+lay.n*nk]
	if len(t.Present) == 0 {
		for i := range pres {
			pres[i] = 1
		}
	} else {
		copy(pres, t.Present)
	}
	return nil
}

// answer writes the answer's sequence number and status.
func (l *lane) answer(seq uint64, code codes.Code, msg string) {
	m, lay := l.mem, &l.lay
	if len(m) < lay.size {
		return
	}
	n := copy(m[lay.msg:lay.msg+laneMsgSize], msg)
	binary.LittleEndian.PutUint32(m[hMsgLen:], uint32(n))
	binary.LittleEndian.PutUint32(m[hStatus:], uint32(code))
	binary.LittleEndian.PutUint64(m[hRespSeq:], seq)
}

// closeLane closes vector h's lane, if it has one.
func (s *Server) closeLane(h uint64) {
	s.mu.Lock()
	l := s.lanes[h]
	s.mu.Unlock()
	if l != nil {
		l.close()
	}
}

// CloseLanes closes every open lane and removes their files, and refuses
// new ones; Serve calls it when the server stops.
func (s *Server) CloseLanes() {
	s.mu.Lock()
	s.lanesClosed = true // a lane opened from now on would outlive the server
	var ls []*lane
	for _, l := range s.lanes {
		ls = append(ls, l)
	}
	s.mu.Unlock()
	for _, l := range ls {
		l.close()
	}
}
