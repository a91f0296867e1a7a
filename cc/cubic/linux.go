package cubic

import (
	"math"
	"time"

	"github.com/cclab/cclab/cc"
	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/core/units"
)

// This file is CUBIC's congestion avoidance as Linux computes it
// (net/ipv4/tcp_cubic.c bictcp_update, cubictcp_recalc_ssthresh and
// tcp_cong_avoid_ai), selected by the "linux" parameter. It differs from
// RFC 9438's fractional window (cubic.go) in ways that matter at small
// windows, where the Reno-friendly estimate sets the pace:
//
//   - windows are whole segments: ssthresh = cwnd*717/1024 truncated, and
//     growth credit (snd_cwnd_cnt) is dropped at every reduction;
//   - the Reno-friendly estimate (ca->tcp_cwnd) grows by one segment per
//     cwnd*beta_scale/8 segments acknowledged and cwnd follows it at most
//     one segment per cwnd/(tcp_cwnd-cwnd) acknowledged, a round behind;
//     it never switches to Reno's slope once it passes the previous
//     window (RFC 9438 §4.3's alpha_cubic = 1);
//   - the curve's time runs in jiffies plus the minimum delay, and ca->cnt
//     is recomputed at most once per jiffy, or per HZ/32 while cwnd holds.
//
// Measured against the kernel through cclab emu (docs/fidelity.md): one
// CUBIC flow at 2.8% random loss on a 10 Mbit/s, 50 ms path.

// linuxCubic is the state of struct bictcp plus the connection's
// snd_cwnd_cnt, in Linux's units: segments, jiffies, and the curve's time
// in 1/1024 s.
type linuxCubic struct {
	linuxParams

	cnt         uint32 // increase cwnd by one segment per cnt acknowledged
	lastMaxCwnd uint32
	lastCwnd    uint32
	lastTime    int64 // jiffies
	originPoint uint32
	bicK        uint64 // 1/1024 s
	inEpoch     bool
	epochStart  int64 // jiffies
	ackCnt      uint32
	tcpCwnd     uint32 // the Reno-friendly estimate
	cwndCnt     uint32 // snd_cwnd_cnt
	ackedRem    units.Bytes
}

// linuxParams are the module's settings and the constants it derives from
// them at load time; a reset keeps them.
type linuxParams struct {
	hz           int64  // kernel CONFIG_HZ
	betaInt      uint32 // beta scaled by 1024 (717)
	betaScale    uint32 // 8*(1024+beta)/3/(1024-beta), integer as Linux computes it
	cubeRTTScale uint64 // bic_scale*10
	cubeFactor   uint64 // 2^40 / cube_rtt_scale
}

func newLinuxCubic(beta, c float64, hz int64) linuxCubic {
	l := linuxCubic{linuxParams: linuxParams{hz: hz}}
	l.setBeta(beta)
	l.setC(c)
	return l
}

func (l *linuxCubic) setBeta(beta float64) {
	l.betaInt = uint32(math.Round(beta * 1024))
	l.betaScale = 8 * (1024 + l.betaInt) / 3 / (1024 - l.betaInt)
}

// setC derives Linux's bic_scale (C*1024/10, 41 for C = 0.4) and the
// constants computed from it at module load.
func (l *linuxCubic) setC(c float64) {
	bicScale := max(uint64(math.Round(c*1024/10)), 1)
	l.cubeRTTScale = bicScale * 10
	l.cubeFactor = (1 << 40) / l.cubeRTTScale
}

func (l *linuxCubic) jiffies(now clock.Time) int64 { return cc.HZ(l.hz).Jiffies(now) }

func (l *linuxCubic) usecsToJiffies(d time.Duration) int64 { return cc.HZ(l.hz).FromDuration(d) }

// segments converts acknowledged bytes to whole segments, carrying the
// remainder, since Linux counts packets.
func (l *linuxCubic) segments(acked, mss units.Bytes) uint32 {
	acked += l.ackedRem
	n := acked / mss
	l.ackedRem = acked - n*mss
	return uint32(n)
}

// ssthresh is cubictcp_recalc_ssthresh: it ends the epoch, remembers the
// plateau (with fast convergence) and returns the new threshold, segments.
func (l *linuxCubic) ssthresh(cwnd uint32, fastConvergence bool) uint32 {
	l.inEpoch = false
	if cwnd < l.lastMaxCwnd && fastConvergence {
		l.lastMaxCwnd = cwnd * (1024 + l.betaInt) / (2 * 1024)
	} else {
		l.lastMaxCwnd = cwnd
	}
	return max(cwnd*l.betaInt/1024, 2)
}

// reset is bictcp_reset, run when the connection enters the loss state.
func (l *linuxCubic) reset() { *l = linuxCubic{linuxParams: l.linuxParams} }

// update is bictcp_update: it sets cnt for the window cwnd after acked more
// segments.
func (l *linuxCubic) update(now clock.Time, cwnd, acked uint32, delayMin time.Duration, renoFriendly bool) {
	l.ackCnt += acked
	j := l.jiffies(now)
	if l.lastCwnd == cwnd && j-l.lastTime <= l.hz/32 {
		return
	}
	if !(l.inEpoch && j == l.lastTime) {
		l.lastCwnd = cwnd
		l.lastTime = j
		if !l.inEpoch {
			l.inEpoch = true
			l.epochStart = j
			l.ackCnt = acked
			l.tcpCwnd = cwnd
			if l.lastMaxCwnd <= cwnd {
				l.bicK = 0
				l.originPoint = cwnd
			} else {
				l.bicK = cubicRoot(l.cubeFactor * uint64(l.lastMaxCwnd-cwnd))
				l.originPoint = l.lastMaxCwnd
			}
		}
		t := uint64(j-l.epochStart+l.usecsToJiffies(delayMin)) << 10 / uint64(l.hz)
		var offs uint64
		if t < l.bicK {
			offs = l.bicK - t
		} else {
			offs = t - l.bicK
		}
		delta := uint32((l.cubeRTTScale * offs * offs * offs) >> 40)
		var target uint32
		if t < l.bicK {
			target = l.originPoint - delta
		} else {
			target = l.originPoint + delta
		}
		if target > cwnd {
			l.cnt = cwnd / (target - cwnd)
		} else {
			l.cnt = 100 * cwnd
		}
		if l.lastMaxCwnd == 0 && l.cnt > 20 {
			l.cnt = 20
		}
	}
	if renoFriendly {
		// Linux's beta_scale (15 for its beta) keeps this step at least
		// one segment; a small beta (0.05: beta_scale 2) at a window of
		// under four segments makes it 0, and the loop would never end.
		delta := max((cwnd*l.betaScale)>>3, 1)
		for l.ackCnt > delta {
			l.ackCnt -= delta
			l.tcpCwnd++
		}
		if l.tcpCwnd > cwnd {
			if maxCnt := cwnd / (l.tcpCwnd - cwnd); l.cnt > maxCnt {
				l.cnt = maxCnt
			}
		}
	}
	l.cnt = max(l.cnt, 2)
}

// congAvoidAI is tcp_cong_avoid_ai on the epoch's snd_cwnd_cnt.
func (l *linuxCubic) congAvoidAI(cwnd, w, acked uint32) uint32 {
	return cc.CongAvoidAI(cwnd, w, acked, &l.cwndCnt)
}

// cubicRoot is the integer cube root, rounded down. (Linux's cubic_root
// approximates it to 0.2% with a table and one Newton step; the curve's
// time unit is 1/1024 s, so the difference is below a millisecond.)
func cubicRoot(a uint64) uint64 {
	x := uint64(math.Cbrt(float64(a)))
	for x > 0 && x*x*x > a {
		x--
	}
	for (x+1)*(x+1)*(x+1) <= a {
		x++
	}
	return x
}

// onAckLinux is cubictcp_cong_avoid for a cwnd-limited ACK outside
// recovery.
func (cu *Cubic) onAckLinux(now clock.Time, ackedBytes units.Bytes) {
	l := &cu.lx
	acked := l.segments(ackedBytes, cu.mss)
	if acked == 0 {
		return
	}
	if cu.inSlowStart() {
		left := cu.reno.SlowStart(units.Bytes(acked) * cu.mss)
		acked = uint32(left / cu.mss)
		if acked == 0 {
			return
		}
	}
	cwnd := uint32(cu.reno.CongestionWindow() / cu.mss)
	l.update(now, cwnd, acked, cu.delayMin, cu.renoFriendly)
	if n := l.congAvoidAI(cwnd, l.cnt, acked); n != cwnd {
		cu.reno.SetCwnd(units.Bytes(n) * cu.mss)
	}
}

// reduceLinux sets ssthresh as Linux does at a congestion event (and cwnd
// to it, as the transport's proportional rate reduction expects) and drops
// the growth credit (tcp_init_cwnd_reduction: snd_cwnd_cnt = 0).
func (cu *Cubic) reduceLinux(cwnd uint32) {
	ss := units.Bytes(cu.lx.ssthresh(cwnd, cu.fastConvergence)) * cu.mss
	cu.reno.SetSsthresh(ss)
	cu.reno.SetCwnd(ss)
	cu.lx.cwndCnt = 0
}
