package main

import (
	"strings"
	"testing"
)

// TestGroupsListTheirCommands checks that every command group alone lists
// its commands (exit 2, like cclab alone) and that help GROUP does too.
func TestGroupsListTheirCommands(t *testing.T) {
	for _, g := range []string{"marlin", "dc", "deepcc", "rl", "nc", "study"} {
		code, out, errs := runCmd(t, g)
		if code != 2 || strings.Contains(errs, "unknown command") || !strings.Contains(out, "usage: cclab "+g+" COMMAND") {
			t.Errorf("cclab %s: exit %d, stdout %q, stderr %q", g, code, out, errs)
		}
		for _, n := range groups()[g] {
			if !strings.Contains(out, n+" ") {
				t.Errorf("cclab %s does not list %q:\n%s", g, n, out)
			}
		}
		if code, out2, _ := runCmd(t, "help", g); code != 0 || out2 != out {
			t.Errorf("cclab help %s: exit %d, output differs from cclab %s", g, code, g)
		}
	}
	code, _, errs := runCmd(t, "marlin", "nonsense")
	if code != 2 || !strings.Contains(errs, `unknown command "marlin nonsense"`) || !strings.Contains(errs, "marlin train") {
		t.Errorf("cclab marlin nonsense: exit %d, stderr %q", code, errs)
	}
}

// TestEveryCommandHelp checks the shared help shape of every command:
// usage line, summary, flags, and each default shown once and only when
// set.
func TestEveryCommandHelp(t *testing.T) {
	for name, c := range commands {
		code, out, errs := runCmd(t, append([]string{"help"}, strings.Fields(name)...)...)
		if code != 0 || errs != "" {
			t.Errorf("cclab help %s: exit %d, stderr %q", name, code, errs)
			continue
		}
		want := "usage: cclab " + name
		if c.args != "" {
			want += " " + c.args
		}
		if !strings.HasPrefix(out, want+" [flags]\n") {
			t.Errorf("cclab help %s starts %q, want %q", name, firstLine(out), want)
		}
		for _, bad := range []string{"(default -1)", "(default NaN)", "paper 0", "slides"} {
			if strings.Contains(out, bad) {
				t.Errorf("cclab help %s shows %q", name, bad)
			}
		}
		for _, line := range strings.Split(out, "\n") {
			if strings.Contains(line, "(default ") && strings.Count(strings.ToLower(line), "default") > 1 {
				t.Errorf("cclab help %s states a default twice: %q", name, line)
			}
		}
		if _, h, _ := runCmd(t, append(strings.Fields(name), "-h")...); h != "" {
			t.Errorf("cclab %s -h wrote to stdout", name)
		}
	}
}

func TestVersion(t *testing.T) {
	code, out, _ := runCmd(t, "--version")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 3 || !strings.HasPrefix(lines[0], "cclab ") || !strings.HasPrefix(lines[1], "commit ") || !strings.HasPrefix(lines[2], "go") {
		t.Errorf("cclab --version: exit %d, output %q; want the version, commit and Go version lines", code, out)
	}
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}
