package network

import (
	"syscall"
	"unsafe"
)

// hugePage is the size of a transparent huge page on Linux's x86-64 and
// arm64 (4 KB base pages).
const hugePage = 2 << 20

// adviseHugePages asks the kernel to back the whole huge pages inside
// [p, p+n) with huge pages, if transparent huge pages are enabled in
// "madvise" or "always" mode. It is a hint: nothing depends on it, and an
// error (an older kernel, THP disabled) leaves the memory as it was.
// Memory already touched keeps its small pages until the kernel's
// background collapse, so it is called before the first write.
func adviseHugePages(p unsafe.Pointer, n uintptr) {
	beg := (uintptr(p) + hugePage - 1) &^ (hugePage - 1)
	end := (uintptr(p) + n) &^ (hugePage - 1)
	if beg >= end {
		return
	}
	_ = syscall.Madvise(unsafe.Slice((*byte)(unsafe.Add(p, beg-uintptr(p))), end-beg), syscall.MADV_HUGEPAGE)
}
