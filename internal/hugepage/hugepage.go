// Package hugepage asks the kernel for transparent huge pages behind
// memory a simulation keeps for its whole run and touches at random: the
// blocks of thousands of flows. With 4 KB pages each touch of a random
// flow is a TLB miss and a page-table walk; a few 2 MB pages cover them
// all. It is a hint: results cannot depend on it, and where huge pages are
// unavailable nothing changes.
package hugepage

// Size is the size of a transparent huge page on x86-64 and arm64 Linux
// with 4 KB base pages.
const Size = 2 << 20
