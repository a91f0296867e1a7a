package hugepage

import (
	"syscall"
	"unsafe"
)

// Advise asks the kernel to back the whole huge pages inside
// [p, p+n) with huge pages, if transparent huge pages are enabled in
// "madvise" or "always" mode. It is a hint: nothing depends on it, and an
// error (an older kernel, THP disabled) leaves the memory as it was.
// Memory already touched keeps its small pages until the kernel's
// background collapse: call it before the first write.
func Advise(p unsafe.Pointer, n uintptr) {
	beg := (uintptr(p) + Size - 1) &^ (Size - 1)
	end := (uintptr(p) + n) &^ (Size - 1)
	if beg >= end {
		return
	}
	_ = syscall.Madvise(unsafe.Slice((*byte)(unsafe.Add(p, beg-uintptr(p))), end-beg), syscall.MADV_HUGEPAGE)
}
