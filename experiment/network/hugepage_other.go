//go:build !linux

package network

import "unsafe"

// adviseHugePages is a no-op where transparent huge pages cannot be asked
// for (see hugepage_linux.go).
func adviseHugePages(p unsafe.Pointer, n uintptr) {}
