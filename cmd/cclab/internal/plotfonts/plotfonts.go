// Package plotfonts gives back the pages of gonum/plot's fonts as soon as
// its initialiser has parsed them, for cclab's main, which imports it for
// that side effect alone.
//
// gonum/plot's init parses its twelve embedded Liberation fonts, leaving
// about 2 MB of them resident in the executable's writable data segment;
// the initialisers that follow add their own pages on top, so the
// process's peak before main is reached with the fonts still there.
// Giving them back here, which Go runs right after analysis/plot's
// dependencies (an initialiser runs once its imports' have), takes them
// off that peak. They are static data nothing writes, and a figure reads
// them in again (coldpages.ReleaseStatic).
package plotfonts

import (
	"github.com/cclab/cclab/analysis/plot"
	"github.com/cclab/cclab/internal/coldpages"
)

func init() {
	// Only residency changes, so an error (no /proc) is moot.
	_, _ = coldpages.ReleaseStatic(plot.FontData()...)
}
