//go:build linux

package plotfonts

import (
	"testing"

	"github.com/cclab/cclab/analysis/plot"
	"github.com/cclab/cclab/internal/coldpages"
)

// TestFontsGivenBack checks that once the process is initialised none of
// the fonts' pages that gonum/plot's initialiser read is still resident,
// and that drawing with them still works (the pages read back in).
func TestFontsGivenBack(t *testing.T) {
	for i, ttf := range plot.FontData() {
		n, err := coldpages.Resident(ttf)
		if err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			t.Errorf("font %d: %d bytes resident after start-up, want 0", i, n)
		}
	}
	fig := plot.TimeSeries{Title: "fonts read back", X: plot.Axis{Label: "time (s)"},
		Series: []plot.Series{{Name: "a", X: []float64{0, 1, 2}, Y: []float64{1, 3, 2}}}}
	png, err := fig.Render("png")
	if err != nil || len(png) == 0 {
		t.Fatalf("rendering after the fonts were given back: %d bytes, %v", len(png), err)
	}
}
