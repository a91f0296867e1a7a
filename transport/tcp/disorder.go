package tcp

// caState is the part of Linux's tcp_ca_state the sender's phase leaves
// out, with Config.LinuxWindowGrowth or Config.LinuxTLPTimer: whether the
// open state is Linux's Disorder. Controllers that follow Linux's
// set_state hook read it with the first (cc.Ack.Disorder): Hybla grows by
// Reno's rules there, as in every state but the open one; the loss probe
// reads it with the second (no probe in Disorder, tlp.go).
type caState uint8

const (
	caUntracked caState = iota // without either option
	caOpen                     // open, or not in the open phase at all
	caDisorder                 // open with SACKed, lost or retransmitted data outstanding
)

// trackDisorder updates caState after an ACK's recovery state is known,
// as tcp_fastretrans_alert does: Linux looks at the open state only on a
// dubious ACK (tcp_ack_is_dubious) or one that ends another state, and
// then tcp_try_keep_open picks Disorder while tcp_left_out or
// tcp_any_retrans_done. So an ACK that only advances SND.UNA leaves an
// open state open, even with a loss probe's retransmission outstanding,
// while in Disorder every ACK looks again.
func (s *Sender) trackDisorder(priorPhase phase, dubious bool) {
	if s.phase != open {
		s.caState = caOpen
		return
	}
	if !dubious && priorPhase == open && s.caState != caDisorder {
		return
	}
	s.caState = caOpen
	if s.sacked > 0 || s.renoSacked > 0 || s.lost > 0 || s.retransOut > 0 ||
		s.n > 0 && s.seg(s.unaSeg).everRetrans {
		s.caState = caDisorder
	}
}
