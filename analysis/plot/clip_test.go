package plot

import "testing"

// TestBarCIClippedAtZero: a sweep's bar chart drew a goodput of 1 ± 3 with
// an error bar down to -2 and a y axis below zero.
func TestBarCIClippedAtZero(t *testing.T) {
	f := Bars{Title: "goodput", Y: Axis{Label: "Mbit/s"}, Groups: []string{"p=0"}, Categories: []string{"cubic", "bbr"},
		Values: [][]Estimate{{{Mean: 1, CI: 3}, {Mean: 5, CI: 0.5}}}}
	fig, err := f.build()
	if err != nil {
		t.Fatal(err)
	}
	if lo := fig.panels[0].plot.Y.Min; lo < 0 {
		t.Errorf("y axis starts at %g for a non-negative quantity", lo)
	}
	if lowEnd(Estimate{Mean: 1, CI: 3}, true) != 0 || lowEnd(Estimate{Mean: 1, CI: 3}, false) != -2 {
		t.Errorf("lowEnd")
	}
	// A quantity with a negative mean keeps its whole interval.
	f.Values[0][0].Mean = -1
	fig, _ = f.build()
	if lo := fig.panels[0].plot.Y.Min; lo > -4 {
		t.Errorf("y axis starts at %g, the interval reaches -4", lo)
	}
	if _, err := f.Render("png"); err != nil {
		t.Fatal(err)
	}
}
