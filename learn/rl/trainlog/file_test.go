package trainlog

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// logRows writes rows at the given steps through a Logger into a File.
func logRows(t *testing.T, path string, resume bool, field string, steps ...int64) error {
	t.Helper()
	f, err := OpenFile(path, resume)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	l := New(f, nil, 0, "")
	for _, s := range steps {
		if err := l.Log(s, F(field, float64(s)/10)); err != nil {
			return err
		}
	}
	return nil
}

func TestFileResume(t *testing.T) {
	path := filepath.Join(t.TempDir(), "curve.csv")
	tests := []struct {
		name   string
		resume bool
		field  string
		steps  []int64
		want   string
		err    string
	}{
		{"fresh run", false, "loss", []int64{100, 200, 300, 400}, "step,loss\n100,10\n200,20\n300,30\n400,40\n", ""},
		// Killed after step 400, resumed from a checkpoint at step 200.
		{"resume drops rows after the checkpoint", true, "loss", []int64{300, 400, 500}, "step,loss\n100,10\n200,20\n300,30\n400,40\n500,50\n", ""},
		{"resume that logs nothing keeps the file", true, "loss", nil, "step,loss\n100,10\n200,20\n300,30\n400,40\n500,50\n", ""},
		{"resume with other columns is refused", true, "entropy", []int64{600}, "step,loss\n100,10\n200,20\n300,30\n400,40\n500,50\n", "columns"},
		{"no resume truncates", false, "entropy", []int64{50}, "step,entropy\n50,5\n", ""},
	}
	for _, tt := range tests {
		err := logRows(t, path, tt.resume, tt.field, tt.steps...)
		if tt.err == "" && err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)) {
			t.Fatalf("%s: error %v, want one mentioning %q", tt.name, err, tt.err)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != tt.want {
			t.Errorf("%s: file =\n%s\nwant\n%s", tt.name, b, tt.want)
		}
	}
}

func TestFileResumeMissing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "new.csv")
	if err := logRows(t, path, true, "loss", 10); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "step,loss\n10,1\n" {
		t.Errorf("file = %q", b)
	}
}

func TestReadColumns(t *testing.T) {
	path := filepath.Join(t.TempDir(), "curve.csv")
	os.WriteFile(path, []byte("step,ret,len\n100,,\n200,-5,10\n300,-4,x\nstep,len,ret\n400,8,-3\n"), 0o644)
	cols, err := ReadColumns(path, "step", "ret", "len")
	if err != nil {
		t.Fatal(err)
	}
	want := [][]float64{{200, 400}, {-5, -3}, {10, 8}}
	for i := range want {
		if len(cols[i]) != len(want[i]) {
			t.Fatalf("columns %v, want %v", cols, want)
		}
		for k := range want[i] {
			if cols[i][k] != want[i][k] {
				t.Fatalf("columns %v, want %v", cols, want)
			}
		}
	}
	if _, err := ReadColumns(path, "step", "entropy"); err == nil || !strings.Contains(err.Error(), "no rows with step, entropy") {
		t.Errorf("missing column: %v", err)
	}
}

// TestResumeRewriteIsAtomic: the rewrite of the learning curve on resume
// truncated the file and wrote it again; a kill in between lost the curve.
// Now it is replaced by a rename: a reader that opened the old file still
// reads all of it, and a run that logs nothing leaves it untouched.
func TestResumeRewriteIsAtomic(t *testing.T) {
	path := filepath.Join(t.TempDir(), "curve.csv")
	old := "step,ep_rew_mean\n10,1\n20,2\n30,3\n"
	os.WriteFile(path, []byte(old), 0o644)

	lf, err := OpenFile(path, true)
	if err != nil {
		t.Fatal(err)
	}
	lf.Write([]byte("step,ep_rew_mean\n"))
	lf.Close()
	if b, _ := os.ReadFile(path); string(b) != old {
		t.Errorf("a resume that logged no row changed the file to %q", b)
	}

	reader, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	lf, err = OpenFile(path, true)
	if err != nil {
		t.Fatal(err)
	}
	lf.Write([]byte("step,ep_rew_mean\n20,5\n"))
	lf.Write([]byte("40,6\n"))
	lf.Close()
	seen, _ := io.ReadAll(reader)
	if string(seen) != old {
		t.Errorf("a reader of the old file saw %q (rewritten in place)", seen)
	}
	if b, _ := os.ReadFile(path); string(b) != "step,ep_rew_mean\n10,1\n20,5\n40,6\n" {
		t.Errorf("resumed file %q", b)
	}
}

// TestNoEpisodeFinished: a run stopped before its first episode has rows
// with empty return cells; ReadColumns says so with ErrNoRows, which the
// plot turns into an empty figure instead of failing.
func TestNoEpisodeFinished(t *testing.T) {
	path := filepath.Join(t.TempDir(), "curve.csv")
	os.WriteFile(path, []byte("step,ep_rew_mean\n100,\n200,\n"), 0o644)
	if _, err := ReadColumns(path, "step", "ep_rew_mean"); !errors.Is(err, ErrNoRows) {
		t.Errorf("got %v, want ErrNoRows", err)
	}
}
