package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"reflect"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
)

// commandHelp prints a command's help: usage line with its positional
// arguments, summary, optional paragraph, then its flags.
func commandHelp(fs *flag.FlagSet, name string) {
	w := fs.Output()
	c := commands[name]
	line := "usage: cclab " + name
	if c != nil && c.args != "" {
		line += " " + c.args
	}
	fmt.Fprintln(w, line+" [flags]")
	if c != nil {
		fmt.Fprintf(w, "\n%s%s.\n", strings.ToUpper(c.summary[:1]), c.summary[1:])
		if c.help != "" {
			fmt.Fprintln(w, c.help)
		}
	}
	hasFlags := false
	fs.VisitAll(func(*flag.Flag) { hasFlags = true })
	if hasFlags {
		fmt.Fprintln(w, "\nflags:")
		printDefaults(fs)
	}
}

// printDefaults is flag.PrintDefaults, except that a default is shown only
// when it says something: not when the usage text already states it, and
// not for the "unset" markers -1 and NaN.
func printDefaults(fs *flag.FlagSet) {
	fs.VisitAll(func(f *flag.Flag) {
		var b strings.Builder
		fmt.Fprintf(&b, "  -%s", f.Name)
		typ, text := flag.UnquoteUsage(f)
		if typ != "" {
			b.WriteString(" " + typ)
		}
		if b.Len() <= 4 {
			b.WriteString("\t")
		} else {
			b.WriteString("\n    \t")
		}
		b.WriteString(strings.ReplaceAll(text, "\n", "\n    \t"))
		if showDefault(f, text) {
			if reflect.TypeOf(f.Value).String() == "*flag.stringValue" {
				fmt.Fprintf(&b, " (default %q)", f.DefValue)
			} else {
				fmt.Fprintf(&b, " (default %v)", f.DefValue)
			}
		}
		fmt.Fprintln(fs.Output(), b.String())
	})
}

func showDefault(f *flag.Flag, text string) bool {
	switch f.DefValue {
	case "", "0", "0s", "false", "-1", "[]":
		return false
	}
	if v, err := strconv.ParseFloat(f.DefValue, 64); err == nil && math.IsNaN(v) {
		return false
	}
	return !strings.Contains(strings.ToLower(text), "default")
}

// groups returns the command groups (the first word of two-word commands)
// and their commands.
func groups() map[string][]string {
	g := map[string][]string{}
	for n := range commands {
		if first, _, ok := strings.Cut(n, " "); ok {
			g[first] = append(g[first], n)
		}
	}
	for _, names := range g {
		sort.Strings(names)
	}
	return g
}

// groupUsage lists a group's commands, one line each.
func groupUsage(w io.Writer, group string) {
	fmt.Fprintf(w, "usage: cclab %s COMMAND [arguments]\n\ncommands:\n", group)
	for _, n := range groups()[group] {
		fmt.Fprintf(w, "  %-18s %s\n", n, commands[n].summary)
	}
	fmt.Fprintf(w, "\nRun 'cclab help %s COMMAND' for a command's arguments and flags.\n", group)
}

// unknownCommand handles arguments that name no command: a group alone
// lists the group, a group's "-h" or "help" too; anything else is an
// unknown command.
func unknownCommand(args []string, stdout, stderr io.Writer) int {
	if _, ok := groups()[args[0]]; ok {
		switch {
		case len(args) == 1:
			groupUsage(stdout, args[0])
			return 2
		case args[1] == "-h" || args[1] == "--help" || args[1] == "help":
			groupUsage(stdout, args[0])
			return 0
		}
		fmt.Fprintf(stderr, "cclab: unknown command %q\n\n", strings.Join(args[:2], " "))
		groupUsage(stderr, args[0])
		return 2
	}
	fmt.Fprintf(stderr, "cclab: unknown command %q\n\n", args[0])
	usage(stderr)
	return 2
}

// helpCommand is "cclab help [COMMAND]": the list, a group's list, or a
// command's help on stdout.
func helpCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stdout)
		return 0
	}
	if c, rest := lookup(args); c != nil && len(rest) == 0 {
		c.run(ctx, []string{"-h"}, stdout, stdout)
		return 0
	}
	if _, ok := groups()[args[0]]; ok && len(args) == 1 {
		groupUsage(stdout, args[0])
		return 0
	}
	fmt.Fprintf(stderr, "cclab help: unknown command %q\n\n", strings.Join(args, " "))
	usage(stderr)
	return 2
}

// printVersion prints the module version, the commit it was built from
// (with "modified" when the tree had uncommitted changes) and the Go
// version.
func printVersion(w io.Writer) {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		fmt.Fprintln(w, "cclab: no build information")
		return
	}
	settings := map[string]string{}
	for _, s := range bi.Settings {
		settings[s.Key] = s.Value
	}
	commit := "unknown (not built from a git checkout)"
	if rev := settings["vcs.revision"]; rev != "" {
		commit = rev
		if t := settings["vcs.time"]; t != "" {
			commit += " (" + t + ")"
		}
		if settings["vcs.modified"] == "true" {
			commit += ", modified"
		}
	}
	fmt.Fprintf(w, "cclab %s\ncommit %s\n%s\n", bi.Main.Version, commit, bi.GoVersion)
}
