package trainlog

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// FuzzReadColumns: any file content gives columns or an error, never a
// panic; the columns returned are one per name, of one non-zero length,
// with no NaN (a NaN cell drops its row).
func FuzzReadColumns(f *testing.F) {
	f.Add([]byte("step,ep_rew_mean,ep_len_mean\n100,1.5,10\n200,,\n300,2.5,12\n"))
	f.Add([]byte("step,ep_rew_mean\n1,2\nstep,x,ep_rew_mean\n2,9,3\n"))
	f.Add([]byte("step,ep_rew_mean\n1,NaN\n2,+Inf\n3,\"4\"\n"))
	f.Add([]byte("\"unterminated\n"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "log.csv")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		cols, err := ReadColumns(path, "step", "ep_rew_mean")
		if err != nil {
			if errors.Is(err, ErrNoRows) && cols != nil {
				t.Fatalf("ErrNoRows with columns %v", cols)
			}
			return
		}
		if len(cols) != 2 || len(cols[0]) == 0 || len(cols[0]) != len(cols[1]) {
			t.Fatalf("columns of lengths %d/%v", len(cols), cols)
		}
		for _, c := range cols {
			for _, v := range c {
				if math.IsNaN(v) {
					t.Fatalf("NaN in %v", cols)
				}
			}
		}
	})
}
