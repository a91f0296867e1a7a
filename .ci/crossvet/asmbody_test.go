package main

import (
	"testing"

	"golang.org/x/tools/go/analysis/analysistest"
)

// TestAsmBody: a bodiless function is reported unless an assembly file
// built for this platform defines it or //go:linkname gives its body (the
// want comments in testdata/src/bodies; on amd64 its .s file defines one
// of the two amd64 declarations).
func TestAsmBody(t *testing.T) {
	analysistest.Run(t, analysistest.TestData(), asmBody, "bodies")
}
