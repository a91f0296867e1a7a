//go:build !linux

package hugepage

import "unsafe"

// Advise is a no-op where transparent huge pages cannot be asked for (see
// hugepage_linux.go).
func Advise(p unsafe.Pointer, n uintptr) {}
