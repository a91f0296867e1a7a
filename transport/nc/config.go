package nc

import (
	"errors"
	"fmt"
	"math"
)

// Limits on Config values.
const (
	// MaxWindow is the largest accepted Window. The decoder holds a
	// Window x Window coefficient matrix (rounded up to a power of two), so
	// 4096 packets cost 16 MiB per decoder.
	MaxWindow = 4096
	// MaxPayloadSize is the largest accepted PayloadSize: payload lengths
	// travel in a 2-byte header inside the coded symbol.
	MaxPayloadSize = 65535
	// DefaultWindow is a window comfortably larger than the congestion
	// windows of the project's scenarios (it is not applied implicitly: a
	// zero Window is an error).
	DefaultWindow = 1024
)

// lenHeader is the number of bytes in front of each payload inside a coded
// symbol: its length, big-endian, so that padding can be stripped after
// decoding and decoded bytes equal the original exactly.
const lenHeader = 2

// Config is shared by both ends of a coded connection; the encoder and the
// decoder must use the same values.
type Config struct {
	// Window is the coding window size in packets: the most packets the
	// encoder holds unseen, and the span of packet indices the decoder
	// holds between its first undecoded packet and the newest packet it
	// may accept. TCP's congestion window bounds the encoder's window in
	// practice; give at least the largest congestion window you expect,
	// in packets. Accepted range [1, MaxWindow]; zero is an error.
	Window int
	// PayloadSize is the largest payload a packet may carry, in bytes.
	// Zero selects the fast mode: only coefficient vectors are carried and
	// payloads must be nil. Accepted range [0, MaxPayloadSize].
	PayloadSize int
}

func (c Config) validate() error {
	if c.Window < 1 || c.Window > MaxWindow {
		return fmt.Errorf("nc: Window must be in [1, %d] packets, got %d", MaxWindow, c.Window)
	}
	if c.PayloadSize < 0 || c.PayloadSize > MaxPayloadSize {
		return fmt.Errorf("nc: PayloadSize must be in [0, %d] bytes (0 = fast mode), got %d", MaxPayloadSize, c.PayloadSize)
	}
	return nil
}

// symbolLen is the length of a coded symbol: 0 in the fast mode.
func (c Config) symbolLen() int {
	if c.PayloadSize == 0 {
		return 0
	}
	return lenHeader + c.PayloadSize
}

// ringSize returns the power of two >= window used for ring indexing.
func ringSize(window int) uint64 {
	s := uint64(1)
	for s < uint64(window) {
		s <<= 1
	}
	return s
}

// EncoderConfig configures an Encoder.
type EncoderConfig struct {
	Config
	// Redundancy is R, the number of coded packets sent per packet from TCP
	// on average (Sundararajan et al. 2011, sender module). Fractional values are
	// handled by credit: each packet from TCP adds R credits and each coded
	// packet sent spends one. R is held in units of 1e-6 so that decimal
	// values such as 1.2 accumulate exactly. Accepted range [1, 100]; zero
	// is an error.
	Redundancy float64
}

// redundancyUnit is the fixed-point scale of the credit counter.
const redundancyUnit = 1_000_000

func (c EncoderConfig) validate() error {
	if err := c.Config.validate(); err != nil {
		return err
	}
	if math.IsNaN(c.Redundancy) || c.Redundancy < 1 || c.Redundancy > 100 {
		return fmt.Errorf("nc: Redundancy R must be in [1, 100] coded packets per packet, got %g", c.Redundancy)
	}
	return nil
}

// Errors returned by the coding core. They are wrapped with details; test
// with errors.Is.
var (
	// ErrWindowFull is returned by Encoder.Add when the coding window
	// already holds Config.Window unseen packets (back-pressure: hold the
	// packet until an acknowledgement frees room), and by Decoder.Receive
	// when a packet reaches beyond the advertised limit (the sender was not
	// given Receipt.Limit, or the two ends disagree on Window).
	ErrWindowFull = errors.New("nc: coding window full")
	// ErrEmptyWindow is returned by Encoder.Next when there is no unseen
	// packet below the decoder's limit to code.
	ErrEmptyWindow = errors.New("nc: nothing to code")
	// ErrStale is returned by Decoder.Receive for a packet that combines
	// packets the decoder has already delivered and forgotten (possible
	// only if the network reorders packets by more than a window). The
	// packet is ignored; the decoder's state is unchanged.
	ErrStale = errors.New("nc: coded packet refers to forgotten packets")
)
