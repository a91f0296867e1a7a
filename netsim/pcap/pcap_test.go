package pcap

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"

	"github.com/cclab/cclab/core/clock"
	"github.com/cclab/cclab/netsim/packet"
)

func samplePackets() []*packet.Packet {
	d := &packet.Packet{Flow: 2, Kind: packet.Data, Seq: 2896, Len: 1448, Size: 1500, SentAt: 5e6}
	a := &packet.Packet{Flow: 2, Kind: packet.Ack, AckNo: 2896, NSACK: 1, Size: 64, EchoAt: 5e6}
	a.SACK[0] = packet.Block{Start: 4344, End: 5792}
	u := &packet.Packet{Flow: 0, Kind: packet.Datagram, Seq: 7, Len: 1200, Size: 1200}
	return []*packet.Packet{d, a, u}
}

// TestRoundTrip writes packets and decodes them back with gopacket: headers,
// addresses, sequence and acknowledgement numbers, SACK blocks, lengths.
func TestRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	w, err := NewWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range samplePackets() {
		w.Write(clock.Time(i+1)*1e6, p)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	r, err := pcapgo.NewReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	var got []gopacket.Packet
	for {
		data, ci, err := r.ReadPacketData()
		if err != nil {
			break
		}
		if ci.Length < ci.CaptureLength {
			t.Fatalf("original length %d below captured %d", ci.Length, ci.CaptureLength)
		}
		got = append(got, gopacket.NewPacket(data, layers.LayerTypeIPv4, gopacket.Default))
	}
	if len(got) != 3 {
		t.Fatalf("read %d packets, want 3", len(got))
	}
	data := got[0]
	ip := data.Layer(layers.LayerTypeIPv4).(*layers.IPv4)
	tcp := data.Layer(layers.LayerTypeTCP).(*layers.TCP)
	if ip.Length != 1500 || tcp.Seq != 2897 || ip.SrcIP.String() != "10.1.0.3" || ip.DstIP.String() != "10.2.0.3" {
		t.Errorf("data packet: IP length %d, seq %d, %v -> %v; want 1500, 2897, 10.1.0.3 -> 10.2.0.3", ip.Length, tcp.Seq, ip.SrcIP, ip.DstIP)
	}
	ack := got[1].Layer(layers.LayerTypeTCP).(*layers.TCP)
	if !ack.ACK || ack.Ack != 2897 {
		t.Errorf("ACK number %d, want 2897", ack.Ack)
	}
	foundSACK := false
	for _, o := range ack.Options {
		if o.OptionType == layers.TCPOptionKindSACK && len(o.OptionData) == 8 {
			foundSACK = true
		}
	}
	if !foundSACK {
		t.Errorf("ACK carries no SACK block: %v", ack.Options)
	}
	if udp := got[2].Layer(layers.LayerTypeUDP); udp == nil {
		t.Errorf("datagram has no UDP header")
	}
}

// TestTshark opens the capture with Debian's tshark when it is installed
// (apt-get install tshark): it must parse every packet without a
// malformed-packet expert note.
func TestTshark(t *testing.T) {
	bin, err := exec.LookPath("tshark")
	if err != nil {
		t.Skip("tshark not installed")
	}
	path := filepath.Join(t.TempDir(), "c.pcap")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w, _ := NewWriter(f)
	for i, p := range samplePackets() {
		w.Write(clock.Time(i+1)*1e6, p)
	}
	w.Flush()
	f.Close()
	cmd := exec.Command(bin, "-r", path, "-T", "fields", "-e", "tcp.seq_raw", "-e", "tcp.options.sack_le", "-e", "_ws.malformed")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr // tshark warns about running as root there
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("tshark: %v\n%s", err, stderr.String())
	}
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("tshark printed %d lines, want 3:\n%s", len(lines), out)
	}
	if !strings.HasPrefix(lines[0], "2897") {
		t.Errorf("tshark's first TCP sequence number: %q, want 2897", lines[0])
	}
	if strings.Contains(string(out), "Malformed") {
		t.Errorf("tshark reports a malformed packet:\n%s", out)
	}
}
