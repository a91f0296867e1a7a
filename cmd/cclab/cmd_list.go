package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"

	"github.com/cclab/cclab/cc"
)

func init() {
	register(&command{name: "list", summary: "list the congestion controllers and their parameters", run: runList})
}

func runList(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("list", stderr)
	asJSON := fs.Bool("json", false, "print JSON")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("list takes no arguments")
	}
	var specs []cc.Spec
	for _, n := range cc.Names() {
		s, _ := cc.Lookup(n)
		specs = append(specs, s)
	}
	if *asJSON {
		for i := range specs {
			if specs[i].Params == nil {
				specs[i].Params = []cc.ParamSpec{}
			}
		}
		out := specs
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	for _, s := range specs {
		fmt.Fprintf(stdout, "%s: %s\n", s.Name, s.Doc)
		tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
		for _, p := range s.Params {
			unit := p.Unit
			if unit != "" {
				unit = " " + unit
			}
			kind := ""
			if p.Integer {
				kind = " (integer)"
			}
			fmt.Fprintf(tw, "    %s\t= %s%s\t[%s, %s]%s\t%s\n", p.Name, strconv.FormatFloat(p.Default, 'g', -1, 64), unit,
				strconv.FormatFloat(p.Min, 'g', 6, 64), strconv.FormatFloat(p.Max, 'g', 6, 64), kind, p.Doc)
		}
		tw.Flush()
		fmt.Fprintln(stdout)
	}
	return nil
}
