package scenario

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestBackgroundSources: every copy of every entry and sequence part is
// one source, named as results and random streams key it (-k only for
// copies), grouped under its entry, with its entry's window; an error
// names the entry it came from and stops the walk.
func TestBackgroundSources(t *testing.T) {
	s, err := Parse([]byte(`name: x
bottleneck: {rate: 1Mbps}
flows: [{cc: newreno}]
background:
  - {name: bulk, type: tcp, cc: newreno, count: 2, start: 1s, stop: 5s}
  - name: seq
    type: sequence
    period: 4s
    sequence:
      - {name: a, type: cbr, rate: 100kbps, size: 1000B, start: 0s, stop: 2s}
      - {name: b, type: cbr, rate: 100kbps, size: 1000B, start: 2s, stop: 4s, count: 3}
  - {name: lone, type: cbr, rate: 100kbps, size: 1000B}
`), "x.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	err = s.BackgroundSources(func(src Source) error {
		w := src.Window
		got = append(got, fmt.Sprintf("%s/%s %s %v-%v %v:%v-%v", src.Group, src.Name, src.Spec.Type,
			time.Duration(w.Start), time.Duration(w.Stop), w.Period, w.From, w.To))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"bulk/bulk-1 tcp 1s-5s 0s:0s-0s",
		"bulk/bulk-2 tcp 1s-5s 0s:0s-0s",
		"seq/a cbr 0s-0s 4s:0s-2s",
		"seq/b-1 cbr 0s-0s 4s:2s-4s",
		"seq/b-2 cbr 0s-0s 4s:2s-4s",
		"seq/b-3 cbr 0s-0s 4s:2s-4s",
		"lone/lone cbr 0s-0s 0s:0s-0s",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("sources:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	boom := errors.New("boom")
	n := 0
	err = s.BackgroundSources(func(src Source) error {
		n++
		if src.Name == "b-2" {
			return boom
		}
		return nil
	})
	if !errors.Is(err, boom) || err.Error() != "background seq: boom" || n != 5 {
		t.Errorf("error %v after %d sources; want background seq: boom after 5", err, n)
	}
}
