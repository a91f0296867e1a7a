package marlin

import (
	"context"
	"encoding/json"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/cclab/cclab/core/units"
	"github.com/cclab/cclab/experiment/scenario"
)

// jsonKeys returns the JSON names of t's fields, in order.
func jsonKeys(t reflect.Type) []string {
	var keys []string
	for i := range t.NumField() {
		keys = append(keys, strings.Split(t.Field(i).Tag.Get("json"), ",")[0])
	}
	return keys
}

// objectKeys returns the keys of the JSON object b, in order.
func objectKeys(t *testing.T, b []byte) []string {
	t.Helper()
	d := json.NewDecoder(strings.NewReader(string(b)))
	var keys []string
	if _, err := d.Token(); err != nil {
		t.Fatal(err)
	}
	for d.More() {
		k, err := d.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k.(string))
		var v json.RawMessage
		if err := d.Decode(&v); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

// TestRowAndGoalsJSON: Row and Goals write every field under its tag, in
// the declared order (a field added to either and not to its MarshalJSON
// fails here), finite values as they are and undefined ones as null.
func TestRowAndGoalsJSON(t *testing.T) {
	r := Row{Scheme: CUBIC, Loss: 0.03, Runs: 100, Unfinished: 1, TransferTime: 19.4, TransferTimeStd: 1.5, TransferTimeCI: 0.3,
		Retrans: 90.9, RetransStd: 8, RetransCI: 1.6, RTI: 2.06, RTIStd: 0.1, RTICI: 0.02, Policies: 3}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := objectKeys(t, b), jsonKeys(reflect.TypeFor[Row]()); !slices.Equal(got, want) {
		t.Errorf("row keys %q, want %q", got, want)
	}
	type plain Row // the default encoding, for comparison
	want, _ := json.Marshal(plain(r))
	if string(b) != string(want) {
		t.Errorf("finite row %s, want %s", b, want)
	}
	r.RTI, r.RTIStd, r.RTICI, r.Retrans = math.NaN(), math.NaN(), math.Inf(1), math.NaN()
	b, err = json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"rti", "rti_std", "rti_ci95", "retransmissions"} {
		if v, ok := m[k]; !ok || v != nil {
			t.Errorf("%s: %v, want null", k, v)
		}
	}
	if m["transfer_time_s"] != 19.4 {
		t.Errorf("transfer_time_s %v", m["transfer_time_s"])
	}

	g := Goals{TimeVsCubic: 0.65, RetransVsCubic: math.NaN(), TimeVsMockets: 0.71, LowestRTI: true, DominatedBy: []string{"cubic at 3%"}}
	b, err = json.Marshal(g)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := objectKeys(t, b), jsonKeys(reflect.TypeFor[Goals]()); !slices.Equal(got, want) {
		t.Errorf("goals keys %q, want %q", got, want)
	}
	if want := `{"time_vs_cubic":0.65,"retransmissions_vs_cubic":null,"time_vs_mockets":0.71,"lowest_rti":true,"dominated_by":["cubic at 3%"]}`; string(b) != want {
		t.Errorf("goals %s, want %s", b, want)
	}
}

// TestEvalJSONWhereCUBICRetransmitsNothing: on a 2 Mbit/s SATCOM link
// CUBIC loses nothing, so MARLIN's retransmissions over CUBIC's are
// undefined; the report still encodes (the ratio as null) and its text
// says so (`cclab marlin eval --json` failed with "json: unsupported
// value: NaN" before).
func TestEvalJSONWhereCUBICRetransmitsNothing(t *testing.T) {
	s := base(t).Clone()
	s.Bottleneck.Rate = scenario.RateOf(2 * units.Mbps)
	p, err := ShippedCompactPolicy()
	if err != nil {
		t.Fatal(err)
	}
	rep, err := EvaluateAll(context.Background(), EvalConfig{Base: s, Runs: 2, Losses: []float64{0.03}, Policy: p}, false)
	if err != nil {
		t.Fatal(err)
	}
	if c := rep.Results[0]; c.Scheme != CUBIC || c.Retrans != 0 {
		t.Fatalf("first row %s with %g retransmissions, want CUBIC's with none", c.Scheme, c.Retrans)
	}
	if !math.IsNaN(rep.Goals.RetransVsCubic) {
		t.Fatalf("retransmissions over CUBIC's none: %g, want NaN", rep.Goals.RetransVsCubic)
	}
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"retransmissions_vs_cubic":null`) {
		t.Errorf("report JSON has no null ratio: %.300s", b)
	}
	var w strings.Builder
	rep.WriteText(&w)
	if !strings.Contains(w.String(), "retransmissions undefined") || strings.Contains(w.String(), "NaN") {
		t.Errorf("text: %s", w.String())
	}
}
