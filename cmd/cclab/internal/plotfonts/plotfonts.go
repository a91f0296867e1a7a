// Package plotfonts gives back the pages of gonum/plot's fonts as soon as
// its initialiser has parsed them, for cclab's main, which imports it for
// that side effect alone.
//
// gonum/plot's init parses its twelve embedded Liberation fonts, leaving
// about 2 MB of them resident in the executable's writable data segment;
// the initialisers that follow add their own pages on top, so the
// process's peak before main is reached with the fonts still there.
// Giving them back here takes them off that peak: Go initialises, in
// import-path order, each package whose imports are initialised, and this
// path sorts early, so this runs as soon as analysis/plot (and with it
// gonum/plot) is initialised, 63 initialisers before main. They are static data nothing writes, and a figure reads
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
