//go:build linux

package coldpages

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// residentKB is the resident size of the mapping holding b, from the
// process's own smaps (mincore would report the page cache instead).
func residentKB(t *testing.T, b []byte) int64 {
	t.Helper()
	data, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	maps, err := parseSmaps(data)
	if err != nil {
		t.Fatal(err)
	}
	addr := uint64(uintptr(unsafe.Pointer(&b[0])))
	for _, m := range maps {
		if m.start <= addr && addr < m.end {
			return m.rss >> 10
		}
	}
	t.Fatalf("no mapping holds %#x", addr)
	return 0
}

// sink keeps the reads that fault pages in from being optimised away.
var sink byte

func mapFile(t *testing.T, content []byte, prot int) []byte {
	t.Helper()
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, content, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, err := unix.Mmap(int(f.Fd()), 0, len(content), prot, unix.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = unix.Munmap(b) })
	return b
}

// TestReleaseDropsCleanKeepsCopies checks the one property that makes
// Release safe: a read-only file mapping's pages leave the resident set
// and read back the same, while a read-only mapping holding private
// copies (written, then made read-only, as a dynamic loader does with
// relocated data) keeps its pages and their contents.
func TestReleaseDropsCleanKeepsCopies(t *testing.T) {
	const size = 64 << 10
	content := bytes.Repeat([]byte("cclab cold pages"), size/16)

	clean := mapFile(t, content, unix.PROT_READ)
	for i := 0; i < len(clean); i += 4096 {
		sink += clean[i]
	}
	if kb := residentKB(t, clean); kb < 4 {
		t.Fatalf("clean mapping: %d kB resident after reading it, want its pages", kb)
	}

	copied := mapFile(t, content, unix.PROT_READ|unix.PROT_WRITE)
	for i := 0; i < len(copied); i += 4096 {
		copied[i] = 'X'
	}
	if err := unix.Mprotect(copied, unix.PROT_READ); err != nil {
		t.Fatal(err)
	}
	copiedKB := residentKB(t, copied)

	st, err := Release()
	if err != nil {
		t.Fatal(err)
	}
	if st.Mappings == 0 || st.Bytes <= 0 {
		t.Fatalf("Release gave back %+v, want at least the clean mapping", st)
	}
	if kb := residentKB(t, clean); kb != 0 {
		t.Errorf("clean mapping: %d kB resident after Release, want 0", kb)
	}
	if !bytes.Equal(clean, content) {
		t.Error("clean mapping reads differently after Release")
	}
	if kb := residentKB(t, copied); kb != copiedKB {
		t.Errorf("mapping with private copies: %d kB resident after Release, want %d (left alone)", kb, copiedKB)
	}
	for i := 0; i < len(copied); i++ {
		want := content[i]
		if i%4096 == 0 {
			want = 'X'
		}
		if copied[i] != want {
			t.Fatalf("mapping with private copies: byte %d is %q after Release, want %q", i, copied[i], want)
		}
	}
}

// staticText doubles a 16-byte line to 64 KiB, a constant, so that
// staticBuf is compiled into the test binary's data segment as an
// embedded file or a font would be.
const (
	text16    = "cclab static 16\n"
	text32    = text16 + text16
	text64    = text32 + text32
	text128   = text64 + text64
	text256   = text128 + text128
	text512   = text256 + text256
	text1k    = text512 + text512
	text2k    = text1k + text1k
	text4k    = text2k + text2k
	text8k    = text4k + text4k
	text16k   = text8k + text8k
	text32k   = text16k + text16k
	staticTxt = text32k + text32k
)

var staticBuf = []byte(staticTxt)

// TestReleaseStatic checks that the pages wholly inside a static buffer
// leave the page tables and read back the same, that the partial pages
// at its ends are kept (other variables live there), and that a heap
// buffer is refused and left as it was.
func TestReleaseStatic(t *testing.T) {
	page := uintptr(os.Getpagesize())
	start := uintptr(unsafe.Pointer(&staticBuf[0]))
	lo, hi := (start+page-1)&^(page-1), (start+uintptr(len(staticBuf)))&^(page-1)
	resident := func(b []byte) int64 {
		t.Helper()
		n, err := Resident(b)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	for i := range staticBuf {
		sink += staticBuf[i]
	}
	if n := resident(staticBuf); n != int64(hi-lo) {
		t.Fatalf("%d bytes of the buffer's %d in whole pages resident after reading it, want all", n, hi-lo)
	}
	dropped, err := ReleaseStatic(staticBuf, nil)
	if err != nil {
		t.Fatal(err)
	}
	if dropped != int64(hi-lo) {
		t.Errorf("dropped %d bytes, want the %d of the whole pages", dropped, hi-lo)
	}
	if n := resident(staticBuf); n != 0 {
		t.Errorf("%d bytes resident after ReleaseStatic, want 0", n)
	}
	if lo > start {
		// The page the buffer shares with the variables before it: the
		// buffer's first byte and the page's last are both on it.
		if n, err := residentRange(uint64(lo-page), uint64(lo)); err != nil || n != int64(page) {
			t.Error("the page the buffer shares with the variables before it was dropped")
		}
	}
	if string(staticBuf) != staticTxt {
		t.Error("static buffer reads differently after ReleaseStatic")
	}
	if n := resident(staticBuf); n != int64(hi-lo) {
		t.Errorf("%d bytes resident after reading the buffer again, want its %d", n, hi-lo)
	}

	heap := bytes.Repeat([]byte("heap"), 16<<10)
	if _, err := ReleaseStatic(heap); err == nil || !strings.Contains(err.Error(), "buffer 0") {
		t.Errorf("heap buffer: err %v, want a refusal naming buffer 0", err)
	}
	if !bytes.Equal(heap, bytes.Repeat([]byte("heap"), 16<<10)) {
		t.Error("heap buffer changed by a refused ReleaseStatic")
	}
}

func TestParseSmaps(t *testing.T) {
	in := `00400000-00401000 r-xp 00000000 08:01 1234   /bin/x
Size:                  4 kB
Rss:                   4 kB
Anonymous:             0 kB
7ffd0000-7ffd1000 rw-p 00000000 00:00 0   [stack]
Rss:                   8 kB
Anonymous:             8 kB
`
	maps, err := parseSmaps([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(maps) != 2 {
		t.Fatalf("got %d mappings, want 2", len(maps))
	}
	if m := maps[0]; m.start != 0x400000 || m.end != 0x401000 || m.inode != 1234 || m.rss != 4096 || !m.clean() {
		t.Errorf("first mapping %+v, want 400000-401000 inode 1234, 4 kB, clean", m)
	}
	if maps[1].clean() {
		t.Error("anonymous stack read as clean")
	}
	for _, bad := range []string{
		"Rss: 4 kB\n",
		"00400000 r-xp 0 08:01 1 /x\n",
		"00401000-00400000 r-xp 0 08:01 1 /x\n",
		"00400000-00401000 r-xp 0 08:01\n",
		"00400000-00401000 r-xp 0 08:01 1 /x\nRss: many kB\n",
		"00400000-00401000 r-xp 0 08:01 1 /x\nAnonymous: 4 MB\n",
		"00400000-00401000 r-xp 0 08:01 1 /x\nRss: 9223372036854775807 kB\n",
	} {
		if _, err := parseSmaps([]byte(bad)); err == nil {
			t.Errorf("parseSmaps(%q) accepted", bad)
		}
	}
}

func FuzzParseSmaps(f *testing.F) {
	if data, err := os.ReadFile("/proc/self/smaps"); err == nil {
		// The kernel's own output, cut at a line to keep the seed small.
		if len(data) > 8<<10 {
			data = data[:bytes.LastIndexByte(data[:8<<10], '\n')+1]
		}
		f.Add(data)
	}
	f.Add([]byte("00400000-00401000 r-xp 00000000 08:01 1234 /bin/x\nRss: 4 kB\nAnonymous: 0 kB\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		maps, err := parseSmaps(data)
		if err != nil {
			return
		}
		for _, m := range maps {
			if m.end <= m.start || m.rss < 0 || m.anon < 0 {
				t.Fatalf("accepted mapping %+v", m)
			}
		}
	})
}
