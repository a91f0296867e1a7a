package tcp

import (
	"time"

	"github.com/cclab/cclab/core/clock"
)

// Linux 6.18's receive window (Config.LinuxReceiveWindow): the receive
// buffer's autotuning and the growth of the window within it, as far as
// they decide when the receiver acknowledges. Linux acknowledges every
// data segment that raises rcv_ssthresh (tcp_grow_window sets
// icsk_ack.quick |= 1, and __tcp_ack_snd_check sends at once in quick-ACK
// mode); rcv_ssthresh grows by two segments per segment up to the window
// clamp, and autotuning raises the clamp once per receiver RTT while the
// application reads more than it did the RTT before (tcp_rcv_space_adjust,
// tcp_rcvbuf_grow). Through slow start the clamp stays ahead, so the
// receiver acknowledges (nearly) every segment there, which is what lets
// CUBIC's HyStart see ACK trains; once the sender stops growing, the window
// reaches its clamp and ACKs go back to every second segment.
//
// Sources: net/ipv4/tcp_input.c (tcp_event_data_recv, tcp_grow_window,
// tcp_measure_rcv_mss, tcp_rcv_rtt_measure_ts, tcp_rcv_rtt_update,
// tcp_rcv_space_adjust, tcp_rcvbuf_grow with 6.18's "tcp: fix too slow
// tcp_rcvbuf_grow() action", tcp_init_buffer_space, tcp_data_queue_ofo),
// net/ipv4/tcp_output.c (tcp_select_initial_window), net/ipv4/tcp.c
// (tcp_set_window_clamp), include/net/tcp.h (tcp_win_from_space,
// TCP_DEFAULT_SCALING_RATIO), with Linux's defaults: tcp_rmem[1] 131072
// bytes, tcp_moderate_rcvbuf 1, tcp_app_win 31, timestamps on.
//
// Every ACK advertises the window Linux would (tcp_select_window), and the
// sender keeps new data within it (tcp_snd_wnd_test): autotuning is one
// receiver RTT late, so a window can hold a sender back in slow start, as
// the kernel's tcpi_rwnd_limited shows on a cellular trace.
//
// What is left out: memory pressure, the
// window-based RTT estimate without timestamps (tcp_rcv_rtt_measure),
// which only lowers the estimate, and PSH-driven immediate ACKs
// (ICSK_ACK_PUSHED), which depend on the sender application's writes. An
// application that reads at once is assumed: nothing waits in the receive
// queue, so tcp_space is the buffer less the out-of-order data.

const (
	// linuxRmemDefault is tcp_rmem[1], the receive buffer a socket starts
	// with.
	linuxRmemDefault = 131072
	// linuxRmemMax is tcp_rmem[2], the most autotuning gives (6.18's
	// default, 32 MiB).
	linuxRmemMax = 32 << 20
	// linuxDefaultScalingRatio is TCP_DEFAULT_SCALING_RATIO: the window is
	// half the buffer until a full-sized segment is measured.
	linuxDefaultScalingRatio = 128
	// linuxSkbOverhead is what a received segment's skb->truesize adds to
	// its payload. 868 bytes makes the ratio of a 1448-byte segment
	// 1448*256/2316 = 160, the scaling_ratio the emulator's kernel showed
	// (its tcp:tcp_rcvbuf_grow tracepoint gave a window clamp of 81,920
	// bytes, 131072 * 160 / 256, before the first growth).
	linuxSkbOverhead = 868
	// linuxInitCwnd is TCP_INIT_CWND.
	linuxInitCwnd = 10
	// linuxMSSDefault is TCP_MSS_DEFAULT, which bounds the first rcv_mss
	// guess (tcp_initialize_rcv_mss).
	linuxMSSDefault = 536
)

// rcvWindow is the receiver's state for Config.LinuxReceiveWindow, in
// bytes unless noted; the names are Linux's.
type rcvWindow struct {
	established bool
	ratio       int64 // scaling_ratio, window bytes per 256 buffer bytes
	advmss      int64 // the MSS (tp->advmss less the timestamp option)
	rcvMSS      int64 // icsk_ack.rcv_mss
	rcvbuf      int64 // sk_rcvbuf
	clamp       int64 // window_clamp
	ssthresh    int64 // rcv_ssthresh
	rcvWnd      int64 // rcv_wnd, the initial window (tcp_set_window_clamp reads it)
	space       int64 // rcvq_space.space: bytes read in the last measured RTT
	spaceSeq    int64 // rcvq_space.seq
	spaceTime   clock.Time
	wnd         int64 // rcv_wnd: the window last advertised, from wup
	wup         int64 // rcv_wup: rcv_nxt when it was advertised
	unread      int64 // bytes in the receive queue: in order, not yet read (appRead)
	firstUnread int64 // of which the first segment's
	readT       clock.Timer
	rttUs8      int64 // rcv_rtt_est.rtt_us: the receiver's RTT in µs, times 8
	lastTsecr   clock.Time
	// Grows counts the times autotuning raised the window clamp, for tests.
	grows int
}

func winFromSpace(ratio, space int64) int64 { return space * ratio >> 8 }
func spaceFromWin(ratio, win int64) int64   { return win << 8 / ratio }

// rcvWindowEstablish sets the window a passive opener has when the
// connection is established: tcp_openreq_init_rwin and
// tcp_select_initial_window (the SYN-ACK's window: the buffer's window
// rounded down to whole segments), then tcp_init_buffer_space (the clamp
// one segment below the buffer's window, tcp_app_win's reservation;
// rcvq_space.space = min(rcv_ssthresh, rcv_wnd, 10 segments), from now).
func (r *Receiver) rcvWindowEstablish(now clock.Time) {
	w := r.rw
	w.established = true
	w.ratio = linuxDefaultScalingRatio
	w.rcvbuf = linuxRmemDefault
	full := winFromSpace(w.ratio, w.rcvbuf)
	w.rcvWnd = full
	if full > w.advmss {
		w.rcvWnd = full / w.advmss * w.advmss
	}
	w.ssthresh = w.rcvWnd
	w.rcvMSS = max(min(w.advmss, w.rcvWnd/2, linuxMSSDefault), 88) // TCP_MIN_MSS
	w.clamp = full
	if w.clamp > 2*w.advmss && w.clamp+w.advmss > full {
		w.clamp = max(2*w.advmss, full-w.advmss)
	}
	w.ssthresh = min(w.ssthresh, w.clamp)
	w.space = min(w.ssthresh, w.rcvWnd, linuxInitCwnd*w.advmss)
	w.wnd, w.wup = w.rcvWnd, r.rcvNxt
	w.spaceSeq = r.rcvNxt
	w.spaceTime = now
	w.lastTsecr = clock.Never
}

// linuxWscaleUnit is 1 << rcv_wscale, the granularity of a scaled window:
// tcp_select_initial_window scales for the most the buffer may grow to
// (tcp_rmem[2], 32 MiB: ilog2(2^25) - 15 = 10).
const linuxWscaleUnit = 1 << 10

// synAckWindow is the window a SYN-ACK advertises: the initial window of
// rcvWindowEstablish (the buffer's window at the default scaling ratio,
// rounded down to whole segments), never scaled on a SYN, so at most 65,535
// bytes (tcp_make_synack).
func synAckWindow(advmss int64) int64 {
	full := winFromSpace(linuxDefaultScalingRatio, linuxRmemDefault)
	if full > advmss {
		full = full / advmss * advmss
	}
	return min(full, 65535)
}

// advertise is tcp_select_window for an ACK, with unread bytes in the
// receive queue (the application reads at the end of the instant,
// appRead): the free space (tcp_space: the buffer's window less what waits
// in it and the out-of-order data), held to rcv_ssthresh, rounded up to
// the window scale, and never less than what the last advertisement still
// offers (Linux does not shrink the window). When the free space falls
// below half the buffer and below a sixteenth of it or a segment, the
// window would close; an application that reads every instant gets there
// only if the out-of-order queue fills the buffer.
func (r *Receiver) advertise(unread int64) int64 {
	w := r.rw
	if !w.established {
		return synAckWindow(w.advmss)
	}
	full := winFromSpace(w.ratio, w.rcvbuf) // tcp_full_space
	free := full - unread - r.oooSpan()
	fullSpace := min(w.clamp, full)
	var win int64
	closed := false
	if free < fullSpace>>1 {
		free = max(free, 0) &^ (linuxWscaleUnit - 1)
		closed = free < full>>4 || free < min(w.rcvMSS, fullSpace)
	}
	if !closed {
		win = alignUp(min(free, w.ssthresh), linuxWscaleUnit)
	}
	if cur := w.wup + w.wnd - r.rcvNxt; win < cur {
		win = alignUp(cur, linuxWscaleUnit)
	}
	w.wnd, w.wup = win, r.rcvNxt
	return win
}

func alignUp(x, unit int64) int64 { return (x + unit - 1) &^ (unit - 1) }

// rcvWindowOnData runs what Linux does for every data segment before
// queueing it: tcp_measure_rcv_mss (a full-sized segment of a new size
// measures scaling_ratio, and the clamp follows the buffer's window,
// tcp_set_window_clamp) and tcp_rcv_rtt_measure_ts (the receiver's RTT
// from the echo of its own timestamp, in whole milliseconds as TCP's
// timestamp clock ticks).
func (r *Receiver) rcvWindowOnData(now clock.Time, n int64, tsecr clock.Time) {
	w := r.rw
	if !w.established {
		r.rcvWindowEstablish(now)
	}
	l := n
	if l >= w.rcvMSS {
		if l != w.rcvMSS {
			w.ratio = max(l<<8/(l+linuxSkbOverhead), 1)
			clamp := max(winFromSpace(w.ratio, w.rcvbuf), 2304/2) // SOCK_MIN_RCVBUF / 2
			if clamp > w.clamp {
				w.ssthresh = max(min(w.rcvWnd, clamp), w.ssthresh)
			} else {
				w.ssthresh = min(w.ssthresh, clamp)
			}
			w.clamp = clamp
			w.space = min(w.space, w.clamp)
		}
		w.rcvMSS = min(l, w.advmss)
	}
	if tsecr != w.lastTsecr {
		w.lastTsecr = tsecr
		d := int64(now/clock.Time(time.Millisecond) - tsecr/clock.Time(time.Millisecond))
		if l >= w.rcvMSS && d > 0 {
			r.rcvRTTUpdate(d * 1000)
		}
	}
}

// rcvRTTUpdate is tcp_rcv_rtt_update for a timestamp sample (win_dep 0)
// since 6.16's "tcp: always seek for minimal rtt": a lower sample is taken
// at once, a higher one smoothed by 1/8.
func (r *Receiver) rcvRTTUpdate(us int64) {
	w := r.rw
	if m := us << 3; w.rttUs8 == 0 || m < w.rttUs8 {
		w.rttUs8 = m
		return
	}
	w.rttUs8 += us - w.rttUs8>>3
}

// growWindow is tcp_grow_window for a segment of n payload bytes: while
// rcv_ssthresh is below both the clamp and the free space, raise it by
// two segments (at least twice the segment) and acknowledge at once.
// The free space is the buffer's window less the out-of-order data and
// what waits in the receive queue, the segment included.
func (r *Receiver) growWindow(n int64) {
	w := r.rw
	if n < 128 {
		return
	}
	free := winFromSpace(w.ratio, w.rcvbuf) - w.unread - r.oooSpan()
	room := min(w.clamp, free) - w.ssthresh
	if room <= 0 {
		return
	}
	w.ssthresh += min(room, max(2*w.advmss, 2*n))
	r.qa.quick |= 1
}

// queue puts the n bytes that a segment made readable (n > 0; more than
// the segment when it fills a hole) in the receive queue, first of which
// the segment's own, and has the application read them at the end of
// the instant.
func (r *Receiver) queue(now clock.Time, first, n int64) {
	w := r.rw
	if w.unread == 0 {
		w.firstUnread = first
	}
	w.unread += n
	if !w.readT.Armed() {
		w.readT.Reset(now)
	}
}

// appRead is the application's read of everything queued, once per
// instant: a trace link delivers several segments in one instant, and an
// application woken by the first finds the others queued behind it, as
// the kernel's receiving application in the emulator does. tcp_recvmsg
// copies the queued segments one by one and runs tcp_rcv_space_adjust
// after each: once a receiver RTT has passed since the last measurement,
// if more was read in it than in the one before, less what is still
// queued (copied -= inq, since 6.16), the buffer grows (tcp_rcvbuf_grow).
// The time since the measurement is the same for every segment of one
// read (tcp_mstamp is the last arrival's), so only the first can close
// it, and the next measurement starts after that first segment.
func (r *Receiver) appRead(now clock.Time) {
	w := r.rw
	if w.unread == 0 {
		return
	}
	copiedSeq := r.rcvNxt - w.unread + w.firstUnread
	inq := r.rcvNxt - copiedSeq
	w.unread, w.firstUnread = 0, 0
	if w.rttUs8 == 0 || now.Sub(w.spaceTime).Microseconds() < w.rttUs8>>3 {
		return
	}
	if copied := copiedSeq - w.spaceSeq - inq; copied > w.space {
		r.rcvbufGrow(copied)
	}
	w.spaceSeq = copiedSeq
	w.spaceTime = now
}

// rcvbufGrow is 6.18's tcp_rcvbuf_grow: twice what was read in the last
// RTT ("DRS is always one RTT late"), plus four times its growth over the
// RTT before relative to it (slow start doubling), plus the out-of-order
// span; the clamp follows the buffer (tcp_win_from_space). Growing
// rcv_ssthresh up to the new clamp is left to growWindow, segment by
// segment.
func (r *Receiver) rcvbufGrow(newval int64) {
	w := r.rw
	old := w.space
	w.space = newval
	win := newval << 1
	if old > 0 {
		win += (win * (newval - old) / old) << 1
	}
	win += r.oooSpan()
	if buf := min(spaceFromWin(w.ratio, win), linuxRmemMax); buf > w.rcvbuf {
		w.rcvbuf = buf
		w.clamp = winFromSpace(w.ratio, buf)
		w.grows++
	}
}

// oooSpan is the out-of-order data as the window's accounting here counts
// it: the sequence space from rcvNxt to the end of the highest
// out-of-order block, 0 without one.
func (r *Receiver) oooSpan() int64 {
	if len(r.ooo) == 0 {
		return 0
	}
	return r.ooo[len(r.ooo)-1].End - r.rcvNxt
}
