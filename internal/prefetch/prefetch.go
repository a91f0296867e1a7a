// Package prefetch asks the processor to start loading memory that will be
// read soon, so that the load does not stall the code that reads it.
//
// A many-flow simulation reads packets and per-flow state that left the
// caches while they waited in a queue or on a delay line; which ones come
// next is known an event or more ahead (the next packet in a FIFO), and a
// prefetch issued then overlaps the memory access with the work of the
// events in between. A prefetch never faults and has no effect on results:
// it is a hint, and a no-op on processors without an implementation here.
// L2Bytes tells a simulation whether its per-flow state outgrows the L2
// cache, below which prefetching it only costs instructions.
package prefetch

import "unsafe"

// Data returns the data word of an interface value: the pointer a
// pointer-shaped dynamic value (a *T) is stored as, or nil. It is for
// prefetching what an interface refers to without calling through it.
func Data(v any) unsafe.Pointer {
	return (*[2]unsafe.Pointer)(unsafe.Pointer(&v))[1]
}

// Range starts loading every line of the size bytes at p (which need not
// start a line), in one call.
func Range(p unsafe.Pointer, size uintptr) {
	if size == 0 {
		return
	}
	// Lines prefetches p, p+64, ...: one address in each line from p's on.
	Lines(p, int((uintptr(p)&63+size+63)/64))
}
