package coldpages

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Release drops from the process's page tables the resident pages of
// every file mapping that cannot be written and holds no private copy
// of a page (smaps' Anonymous is 0): code and read-only data, loaded from
// the executable and its shared libraries. A mapping with private copies
// (a library's relocated read-only data, say) is left alone: dropping
// those would revert them to the file's contents. Release only changes
// what is resident, never what any address reads.
func Release() (Stats, error) {
	data, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		return Stats{}, err
	}
	maps, err := parseSmaps(data)
	if err != nil {
		return Stats{}, err
	}
	var st Stats
	for _, m := range maps {
		if !m.clean() {
			continue
		}
		if err := dontNeed(m.start, m.end); err != nil {
			return st, err
		}
		st.Mappings++
		st.Bytes += m.rss
	}
	return st, nil
}

// ReleaseStatic drops from the process's page tables the pages lying
// wholly inside each of bufs, which must be static data of the
// executable that nothing writes: a file embedded or compiled in as a
// []byte. Go places such variables in the executable's writable data
// segment, a private file mapping whose pages stay the file's own until
// written, which Release leaves alone because other variables there are
// written. Dropping pages nothing writes loses nothing: a later read
// faults them back in from the file. A buffer outside a file mapping (on
// the heap, say, whose pages exist nowhere else) is refused. It returns
// the size of the ranges dropped, resident or not; pages a buffer shares
// with other variables are kept.
func ReleaseStatic(bufs ...[]byte) (int64, error) {
	// maps has smaps' header lines without the page-table walk behind
	// the sizes, which are not needed here.
	data, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return 0, err
	}
	maps, err := parseSmaps(data)
	if err != nil {
		return 0, err
	}
	var dropped int64
	for i, b := range bufs {
		if len(b) == 0 {
			continue
		}
		start, end := span(b)
		if !inFileMapping(maps, start, end) {
			return dropped, fmt.Errorf("coldpages: buffer %d (%#x-%#x) is not within one file mapping: only static data of the executable can be released", i, start, end)
		}
		lo, hi := wholePages(b)
		if hi <= lo {
			continue
		}
		if err := dontNeed(lo, hi); err != nil {
			return dropped, err
		}
		dropped += int64(hi - lo)
	}
	return dropped, nil
}

// wholePages returns the page-aligned range of the pages lying wholly
// inside b (empty, hi <= lo, if there is none).
func wholePages(b []byte) (lo, hi uint64) {
	page := uint64(os.Getpagesize())
	start, end := span(b)
	return (start + page - 1) &^ (page - 1), end &^ (page - 1)
}

// span returns the addresses of b's first byte and of the byte after it.
func span(b []byte) (start, end uint64) {
	start = uint64(uintptr(unsafe.Pointer(unsafe.SliceData(b))))
	return start, start + uint64(len(b))
}

// dontNeed drops the pages of [lo, hi) from the process's page tables.
func dontNeed(lo, hi uint64) error {
	if _, _, errno := unix.Syscall(unix.SYS_MADVISE, uintptr(lo), uintptr(hi-lo), unix.MADV_DONTNEED); errno != 0 {
		return fmt.Errorf("coldpages: madvise %x-%x: %w", lo, hi, errno)
	}
	return nil
}

// Resident returns how many bytes of the pages wholly inside b are
// mapped in the process's page tables, from /proc/self/pagemap's present
// bit: what ReleaseStatic(b) would give back. (mincore cannot say: it
// reports the page cache, where released pages stay.)
func Resident(b []byte) (int64, error) {
	lo, hi := wholePages(b)
	if len(b) == 0 || hi <= lo {
		return 0, nil
	}
	return residentRange(lo, hi)
}

// residentRange returns how many bytes of the pages in [lo, hi), both
// page-aligned, are present.
func residentRange(lo, hi uint64) (int64, error) {
	page := uint64(os.Getpagesize())
	f, err := os.Open("/proc/self/pagemap")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	entries := make([]byte, (hi-lo)/page*8)
	if _, err := f.ReadAt(entries, int64(lo/page*8)); err != nil {
		return 0, fmt.Errorf("coldpages: pagemap: %w", err)
	}
	var n int64
	for i := 7; i < len(entries); i += 8 {
		if entries[i]&0x80 != 0 { // bit 63: present
			n += int64(page)
		}
	}
	return n, nil
}

// inFileMapping reports whether [start, end) lies inside one file-backed
// mapping.
func inFileMapping(maps []mapping, start, end uint64) bool {
	for _, m := range maps {
		if m.start <= start && end <= m.end {
			return m.inode != 0
		}
	}
	return false
}

// mapping is one entry of /proc/self/smaps.
type mapping struct {
	start, end uint64
	perms      string
	inode      uint64
	rss, anon  int64 // bytes
	sawAnon    bool
}

// clean reports whether every resident page of m is the file's own:
// file-backed, never writable, no private copies.
func (m *mapping) clean() bool {
	return m.inode != 0 && len(m.perms) == 4 && m.perms[1] == '-' && m.sawAnon && m.anon == 0 && m.rss > 0
}

// parseSmaps reads the mappings' ranges, permissions, inodes and their
// Rss and Anonymous sizes.
func parseSmaps(data []byte) ([]mapping, error) {
	var maps []mapping
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		f := bytes.Fields(sc.Bytes())
		if len(f) == 0 {
			continue
		}
		if key, ok := bytes.CutSuffix(f[0], []byte(":")); ok {
			// A field line ("Rss:   1234 kB") of the current mapping.
			if len(maps) == 0 {
				return nil, fmt.Errorf("smaps line %d: field %q before any mapping", line, key)
			}
			m := &maps[len(maps)-1]
			switch string(key) {
			case "Rss", "Anonymous":
				if len(f) != 3 || string(f[2]) != "kB" {
					return nil, fmt.Errorf("smaps line %d: %s: want \"N kB\"", line, key)
				}
				kb, err := strconv.ParseInt(string(f[1]), 10, 64)
				if err != nil || kb < 0 || kb > 1<<40 { // 1 PiB: past any mapping
					return nil, fmt.Errorf("smaps line %d: %s: %q is not a size in kB", line, key, f[1])
				}
				if key[0] == 'R' {
					m.rss = kb << 10
				} else {
					m.anon = kb << 10
					m.sawAnon = true
				}
			}
			continue
		}
		// A mapping's header: start-end perms offset dev inode [path].
		if len(f) < 5 {
			return nil, fmt.Errorf("smaps line %d: mapping header with %d fields, want at least 5", line, len(f))
		}
		lo, hi, ok := bytes.Cut(f[0], []byte("-"))
		if !ok {
			return nil, fmt.Errorf("smaps line %d: range %q is not start-end", line, f[0])
		}
		start, err1 := strconv.ParseUint(string(lo), 16, 64)
		end, err2 := strconv.ParseUint(string(hi), 16, 64)
		inode, err3 := strconv.ParseUint(string(f[4]), 10, 64)
		if err1 != nil || err2 != nil || err3 != nil || end <= start {
			return nil, fmt.Errorf("smaps line %d: bad mapping header %q", line, sc.Bytes())
		}
		maps = append(maps, mapping{start: start, end: end, perms: string(f[1]), inode: inode})
	}
	return maps, sc.Err()
}
