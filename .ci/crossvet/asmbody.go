package main

import (
	"go/ast"
	"os"
	"regexp"
	"strings"

	"golang.org/x/tools/go/analysis"
)

// textSymbol matches an assembly function's definition, TEXT ·name(SB) or
// TEXT pkg·name(SB).
var textSymbol = regexp.MustCompile(`(?m)^\s*TEXT\s+[\w./]*·(\w+)\(SB\)`)

// asmBody reports a function declared without a body that no assembly file
// built for this GOOS and GOARCH defines. Type-checking from source accepts
// such a declaration; only the compiler ("missing function body") or the
// linker (an undefined symbol) would reject it, and those are what this
// driver stands in for: an amd64-only .s file with its declaration in a
// file every architecture builds is the mistake it catches.
var asmBody = &analysis.Analyzer{
	Name: "asmbody",
	Doc:  "report bodiless functions that no assembly file built for this platform defines",
	Run:  runAsmBody,
}

func runAsmBody(pass *analysis.Pass) (any, error) {
	defined := map[string]bool{}
	for _, name := range pass.OtherFiles {
		if !strings.HasSuffix(name, ".s") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			return nil, err
		}
		for _, m := range textSymbol.FindAllSubmatch(src, -1) {
			defined[string(m[1])] = true
		}
	}
	for _, f := range pass.Files {
		// A bodiless declaration under //go:linkname takes its body from
		// another package.
		linked := map[string]bool{}
		for _, g := range f.Comments {
			for _, c := range g.List {
				if fields := strings.Fields(c.Text); len(fields) >= 2 && fields[0] == "//go:linkname" {
					linked[fields[1]] = true
				}
			}
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body != nil || fd.Recv != nil || linked[fd.Name.Name] {
				continue
			}
			if !defined[fd.Name.Name] {
				pass.Reportf(fd.Pos(), "function %s has no body and no assembly built for this platform defines it", fd.Name.Name)
			}
		}
	}
	return nil, nil
}
