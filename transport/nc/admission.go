package nc

// Admission is the back-pressure between TCP and an Encoder that both
// TCP/NC layers (the simulator's and the one on UDP sockets) use: TCP may
// hand down more new segments than the coding window holds, so those wait
// here, oldest first, until acknowledgements slide the window. Keeping it
// in one place keeps the two layers' sending order identical, which the
// simulator-against-sockets comparisons rely on.
type Admission struct {
	held []uint64
	head int
	// Held counts the segments that had to wait.
	Held int64
}

// Offer decides about segment idx that TCP sends: true means add it to
// the encoder now; false means it waits (or, a retransmission of a
// segment still waiting, is dropped because that segment will go anyway).
func (a *Admission) Offer(e *Encoder, idx uint64) bool {
	next := e.end
	waiting := uint64(len(a.held) - a.head)
	switch {
	case idx < next:
		// A retransmission by TCP: more credit for the current window.
		return true
	case waiting > 0 || e.Full():
		if idx >= next+waiting {
			a.held = append(a.held, idx)
			a.Held++
		}
		return false
	}
	return true
}

// Next returns the oldest waiting segment while the encoder's window has
// room; the caller adds it to the encoder before asking again.
func (a *Admission) Next(e *Encoder) (idx uint64, ok bool) {
	if a.head < len(a.held) && !e.Full() {
		idx = a.held[a.head]
		a.head++
		return idx, true
	}
	if a.head == len(a.held) {
		a.held, a.head = a.held[:0], 0
	}
	return 0, false
}
