package plot

import (
	"testing"

	"golang.org/x/image/font/opentype"
)

// TestFontData checks that FontData names twelve distinct TrueType files,
// the Liberation faces gonum/plot's font cache holds.
func TestFontData(t *testing.T) {
	fonts := FontData()
	if len(fonts) != 12 {
		t.Fatalf("%d fonts, want the 12 Liberation faces", len(fonts))
	}
	seen := map[string]bool{}
	for i, ttf := range fonts {
		f, err := opentype.Parse(ttf)
		if err != nil {
			t.Fatalf("font %d: %v", i, err)
		}
		name, err := f.Name(nil, 4) // the full name, e.g. "Liberation Serif Bold"
		if err != nil {
			t.Fatalf("font %d: %v", i, err)
		}
		if seen[name] {
			t.Errorf("font %d: %s twice", i, name)
		}
		seen[name] = true
	}
}
