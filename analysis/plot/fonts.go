package plot

import (
	"codeberg.org/go-fonts/liberation/liberationmonobold"
	"codeberg.org/go-fonts/liberation/liberationmonobolditalic"
	"codeberg.org/go-fonts/liberation/liberationmonoitalic"
	"codeberg.org/go-fonts/liberation/liberationmonoregular"
	"codeberg.org/go-fonts/liberation/liberationsansbold"
	"codeberg.org/go-fonts/liberation/liberationsansbolditalic"
	"codeberg.org/go-fonts/liberation/liberationsansitalic"
	"codeberg.org/go-fonts/liberation/liberationsansregular"
	"codeberg.org/go-fonts/liberation/liberationserifbold"
	"codeberg.org/go-fonts/liberation/liberationserifbolditalic"
	"codeberg.org/go-fonts/liberation/liberationserifitalic"
	"codeberg.org/go-fonts/liberation/liberationserifregular"
)

// FontData returns the TrueType files of the twelve Liberation faces that
// gonum/plot parses when it is initialised (gonum.org/v1/plot/font/liberation,
// its default font cache), as compiled into the executable: 4 MB of static
// data nothing writes, of which the parse leaves about 2 MB resident. A
// process that may draw no figure can give those pages back
// (coldpages.ReleaseStatic); drawing reads them in again.
func FontData() [][]byte {
	return [][]byte{
		liberationserifregular.TTF, liberationserifitalic.TTF, liberationserifbold.TTF, liberationserifbolditalic.TTF,
		liberationmonoregular.TTF, liberationmonoitalic.TTF, liberationmonobold.TTF, liberationmonobolditalic.TTF,
		liberationsansregular.TTF, liberationsansitalic.TTF, liberationsansbold.TTF, liberationsansbolditalic.TTF,
	}
}
