// Package hugepage asks the kernel for transparent huge pages behind
// memory a simulation keeps for its whole run and touches at random: the
// blocks of thousands of flows, the packet pool's large slabs. With 4 KB
// pages each touch of a random flow or packet is a TLB miss and a
// page-table walk; a few 2 MB pages cover them all. It is a hint: results
// cannot depend on it, and where huge pages are unavailable nothing
// changes.
package hugepage

import "unsafe"

// Size is the size of a transparent huge page on x86-64 and arm64 Linux
// with 4 KB base pages.
const Size = 2 << 20

// Aligned returns n zeroed elements starting on a huge page boundary (when
// a T's size divides Size) and covering whole huge pages as far as they
// reach, advised as huge pages: the allocation is up to Size bytes longer,
// and that slack, never written, is not resident. n*sizeof(T) should be at
// least Size for the advice to cover anything.
func Aligned[T any](n int) []T {
	var z T
	sz := unsafe.Sizeof(z)
	if n <= 0 || sz == 0 || Size%sz != 0 {
		b := make([]T, max(n, 0))
		if n > 0 && sz > 0 {
			Advise(unsafe.Pointer(&b[0]), uintptr(n)*sz)
		}
		return b
	}
	per := int(Size / sz)
	b := make([]T, n+per)
	skip := int((Size - uintptr(unsafe.Pointer(&b[0]))%Size) % Size / sz)
	b = b[skip : skip+n : skip+n]
	Advise(unsafe.Pointer(&b[0]), uintptr(n)*sz)
	return b
}
