// Command cclab simulates, learns and optimises congestion control.
//
// Each subcommand lives in its own file and registers itself with register;
// main only dispatches. Subcommands parse their own flags with the standard
// flag package, print results to stdout and diagnostics to stderr, and return
// errors instead of exiting so that they can be tested in-process.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"syscall"

	_ "github.com/cclab/cclab/cmd/cclab/internal/plotfonts" // gives back the fonts gonum/plot parsed at start-up
	"github.com/cclab/cclab/internal/coldpages"
)

// command is one cclab subcommand.
type command struct {
	// name is the word after "cclab", possibly two words ("marlin train").
	name string
	// summary is the one-line description shown by "cclab help".
	summary string
	// args names the positional arguments in the usage line, e.g.
	// "TASK POLICY"; help is a paragraph shown under the summary.
	args, help string
	// run executes the command with its own arguments.
	run func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

var commands = map[string]*command{}

// register adds a subcommand; called from init functions.
func register(c *command) {
	if _, dup := commands[c.name]; dup {
		panic("cclab: duplicate command " + c.name)
	}
	commands[c.name] = c
}

// usageError marks an error caused by bad command-line input (exit code 2).
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

// usagef returns a usage error.
func usagef(format string, args ...any) error {
	return &usageError{fmt.Sprintf(format, args...)}
}

// newFlagSet returns a FlagSet that reports errors instead of exiting and
// whose -h prints the command's help in the shape every command shares.
func newFlagSet(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("cclab "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { commandHelp(fs, name) }
	return fs
}

// parseFlags parses args, converting flag errors to usage errors. It allows
// flags after positional arguments ("cclab run FILE --json").
func parseFlags(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, &usageError{err.Error()}
		}
		args = fs.Args()
		if len(args) == 0 {
			return positional, nil
		}
		positional = append(positional, args[0])
		args = args[1:]
	}
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: cclab COMMAND [arguments]\n\ncommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-18s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w, "\nRun 'cclab help COMMAND' or 'cclab COMMAND -h' for a command's arguments and flags; 'cclab --version' for the version.")
}

// lookup finds the command named by the first one or two arguments.
func lookup(args []string) (*command, []string) {
	if len(args) >= 2 {
		if c, ok := commands[args[0]+" "+args[1]]; ok {
			return c, args[2:]
		}
	}
	if len(args) >= 1 {
		if c, ok := commands[args[0]]; ok {
			return c, args[1:]
		}
	}
	return nil, nil
}

// Main runs cclab with args (without the program name) and returns the exit
// code.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	switch {
	case len(args) == 0:
		usage(stdout)
		return 2
	case args[0] == "-h" || args[0] == "--help" || args[0] == "-help":
		usage(stdout)
		return 0
	case args[0] == "help":
		return helpCommand(ctx, args[1:], stdout, stderr)
	case args[0] == "--version" || args[0] == "-version" || args[0] == "version":
		printVersion(stdout)
		return 0
	}
	c, rest := lookup(args)
	if c == nil {
		return unknownCommand(args, stdout, stderr)
	}
	err := c.run(ctx, rest, stdout, stderr)
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	}
	fmt.Fprintf(stderr, "cclab %s: %v\n", c.name, err)
	var ue *usageError
	if errors.As(err, &ue) {
		return 2
	}
	return 1
}

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

func main() {
	// The package initialisers of everything cclab links have made about
	// 14 MiB of its code and read-only data resident, most of which no
	// command touches again; give it back so that a run's resident set is
	// the run's. Only residency changes, so an error (no /proc) is moot.
	// (plotfonts has given back gonum/plot's fonts, which Release skips.)
	_, _ = coldpages.Release()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(Main(ctx, os.Args[1:], os.Stdout, os.Stderr))
}
