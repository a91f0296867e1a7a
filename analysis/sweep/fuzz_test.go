package sweep

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzReadRows feeds rows.jsonl contents to the reader a resume uses: it
// must accept them or refuse them with a message naming the file and line,
// never panic, and never hold a row that does not belong to the sweep.
func FuzzReadRows(f *testing.F) {
	m := &Manifest{Format: Format, Runs: 2, Combinations: 2, Shard: Shard{0, 1},
		Grid: []Axis{{Key: "cc", Values: []string{"newreno", "cubic"}}}, FirstSeed: 1}
	good := `{"combo":0,"run":0,"seed":1,"params":{"cc":"newreno"},"result":{"scenario":"x","seed":1}}` + "\n"
	f.Add(good)
	f.Add(good + good)
	// The audit's bad inputs: two interleaved writers, a cut last line, a
	// row of another sweep, garbage, an overlong line.
	f.Add(good[:40] + good)
	f.Add(good + good[:30])
	f.Add(`{"combo":5,"run":0,"seed":1,"params":{},"result":{}}` + "\n")
	f.Add(`{"combo":0,"run":1,"seed":99,"params":{"cc":"newreno"},"result":{}}` + "\n")
	f.Add("not json\n")
	f.Add(strings.Repeat("x", 1000) + "\n")
	f.Fuzz(func(t *testing.T, data string) {
		path := filepath.Join(t.TempDir(), RowsFile)
		os.WriteFile(path, []byte(data), 0o644)
		rs, err := readRows(path, m, func(string) {})
		if err != nil {
			if !strings.HasPrefix(err.Error(), path) {
				t.Fatalf("error without the file: %v", err)
			}
			return
		}
		if rs.end > int64(len(data)) {
			t.Fatalf("end %d beyond the data (%d bytes)", rs.end, len(data))
		}
		for j, r := range rs.rows {
			if j != r.Combo*m.Runs+r.Run || r.Combo >= m.Combinations || r.Run >= m.Runs || r.Result == nil {
				t.Fatalf("row %d accepted: %+v", j, r)
			}
		}
	})
}
