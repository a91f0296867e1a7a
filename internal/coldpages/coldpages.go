// Package coldpages gives back the pages a large executable's start-up
// made resident but a run does not use.
//
// Every package linked into a Go binary runs its initialiser before main,
// and the kernel maps 64 KiB of the file around each page those touch
// (fault-around). In cclab, which links the emulator, learning, plots and
// gRPC beside the simulator, that is about 14 MiB of code and read-only
// data resident before the first event, most of it never touched again,
// and counted in the process's resident set for the whole run. The pages
// are clean copies of the file: dropping them from the process's page
// tables loses nothing (they stay in the page cache, and any page used
// again faults back in), so a long run's resident set is what the run
// itself uses.
package coldpages

// Stats says what Release gave back.
type Stats struct {
	// Mappings is the number of mappings released.
	Mappings int
	// Bytes is the resident size they had, from /proc/self/smaps.
	Bytes int64
}
