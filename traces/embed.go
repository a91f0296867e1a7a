// Package traces ships the cellular link traces cclab's built-in scenarios
// and studies use (see README.md in this directory for their origin and
// licence). Importing it registers them with the trace package, so a
// scenario naming one of them finds it wherever cclab runs.
package traces

import (
	"embed"

	"github.com/cclab/cclab/netsim/trace"
)

//go:embed *.gz
var files embed.FS

func init() { trace.RegisterFS(files) }
