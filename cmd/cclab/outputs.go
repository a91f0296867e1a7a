package main

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/experiment"
	"github.com/cclab/cclab/experiment/network"
	"github.com/cclab/cclab/netsim/packet"
	"github.com/cclab/cclab/netsim/pcap"
	"github.com/cclab/cclab/experiment/scenario"
)

// writeRunOutputs writes a single run's files into dir: summary.json, the
// scenario as run, flows.csv (one row per flow and sample), link.csv and
// background.csv.
func writeRunOutputs(dir string, s *scenario.Scenario, r *experiment.Result, n *network.Network) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	js, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "summary.json"), append(js, '\n'), 0o644); err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	if y, err := s.Marshal(); err == nil {
		if err := os.WriteFile(filepath.Join(dir, "scenario.yaml"), y, 0o644); err != nil {
			return fmt.Errorf("--out: %w", err)
		}
	}
	if n.Series == nil {
		return nil
	}
	if err := writeSeriesCSV(dir, n); err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	return writeRunPlots(dir, r, n)
}

func writeCSV(path string, header []string, rows func(w *csv.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	if err := w.Write(header); err != nil {
		f.Close()
		return err
	}
	if err := rows(w); err != nil {
		f.Close()
		return err
	}
	w.Flush()
	if err := w.Error(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func ftoa(x float64) string { return strconv.FormatFloat(x, 'g', 8, 64) }

func writeSeriesCSV(dir string, n *network.Network) error {
	s := n.Series
	err := writeCSV(filepath.Join(dir, "flows.csv"), []string{"t_s", "flow", "cc", "background", "cwnd_bytes", "inflight_bytes", "rtt_ms", "goodput_mbps", "sent_mbps", "carried_mbps"}, func(w *csv.Writer) error {
		for i, f := range n.Flows {
			fs := s.Flows[i]
			for k := range fs.CwndBytes {
				t := s.T[fs.Offset+k]
				if t < f.Start || t > f.Stop {
					continue
				}
				if err := w.Write([]string{clock.FormatSeconds(t), f.Name, f.CC.String(), strconv.FormatBool(f.Background),
					strconv.FormatInt(int64(fs.CwndBytes[k]), 10), strconv.FormatInt(int64(fs.InFlight[k]), 10),
					ftoa(fs.RTTms[k]), ftoa(fs.Mbps[k]), ftoa(fs.SentMbps[k]), ftoa(fs.CarriedMbps[k])}); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	err = writeCSV(filepath.Join(dir, "link.csv"), []string{"t_s", "queue_packets", "queue_bytes", "rate_mbps"}, func(w *csv.Writer) error {
		for k, t := range s.T {
			if err := w.Write([]string{clock.FormatSeconds(t), strconv.Itoa(s.QueuePackets[k]), strconv.FormatInt(int64(s.QueueBytes[k]), 10), ftoa(s.LinkMbps[k])}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil || len(n.Sources) == 0 {
		return err
	}
	return writeCSV(filepath.Join(dir, "background.csv"), []string{"t_s", "source", "delivered_mbps"}, func(w *csv.Writer) error {
		for i, src := range n.Sources {
			for k, v := range s.SourceMbps[i] {
				if err := w.Write([]string{clock.FormatSeconds(s.T[k]), src.Name, ftoa(v)}); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// captureObserver writes bottleneck packets to a pcap file.
type captureObserver struct{ w *pcap.Writer }

func (c captureObserver) Dropped(clock.Time, *packet.Packet) {}
func (c captureObserver) Lost(now clock.Time, p *packet.Packet) {
	c.w.Write(now, p)
}
func (c captureObserver) Sent(now clock.Time, p *packet.Packet) { c.w.Write(now, p) }

// attachCapture makes the network write every packet leaving the bottleneck
// (and every ACK entering the reverse path) to path.
func attachCapture(n *network.Network, path string) (func() error, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("--pcap: %w", err)
	}
	w, err := pcap.NewWriter(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("--pcap: %w", err)
	}
	n.Capture = captureObserver{w}
	return func() error {
		if err := w.Flush(); err != nil {
			f.Close()
			return fmt.Errorf("--pcap %s: %w", path, err)
		}
		return f.Close()
	}, nil
}

// emit prints a command's result: one indented JSON object with --json,
// the human-readable tables otherwise.
func emit(w io.Writer, asJSON bool, v any, print func(io.Writer)) error {
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	}
	print(w)
	return nil
}
