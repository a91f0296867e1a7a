package main

import (
	"encoding/json"
	"io"
)

// emit prints a command's result: one indented JSON object with --json,
// the human-readable tables otherwise.
func emit(w io.Writer, asJSON bool, v any, print func(io.Writer)) error {
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	}
	print(w)
	return nil
}
