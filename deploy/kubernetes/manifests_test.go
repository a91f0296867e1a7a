// Package kubernetes checks the Kubernetes manifests in this folder against
// the Kubernetes API's own Go types, strictly: a field the API does not
// have (a typo, a field at the wrong level) is an error, as it would be for
// `kubectl apply --validate=strict`.
package kubernetes

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// decodeStrict reads file into out with the API types' JSON tags; unknown
// and duplicate fields are errors.
func decodeStrict(t *testing.T, file string, out any) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(data, out); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
}

func loadJob(t *testing.T, file string) *batchv1.Job {
	t.Helper()
	var j batchv1.Job
	decodeStrict(t, file, &j)
	if j.APIVersion != "batch/v1" || j.Kind != "Job" {
		t.Fatalf("%s: apiVersion/kind %s/%s, want batch/v1 Job", file, j.APIVersion, j.Kind)
	}
	return &j
}

// TestStrictDecodingCatchesTypos shows the check can fail: a manifest with a
// misspelt field is refused.
func TestStrictDecodingCatchesTypos(t *testing.T) {
	data, err := os.ReadFile("sweep-job.yaml")
	if err != nil {
		t.Fatal(err)
	}
	bad := strings.Replace(string(data), "completionMode:", "completionMod:", 1)
	var j batchv1.Job
	if err := yaml.UnmarshalStrict([]byte(bad), &j); err == nil {
		t.Fatal("a misspelt field (completionMod) was accepted")
	}
	wrongLevel := strings.Replace(string(data), "  backoffLimit: 24", "  template:\n    backoffLimit: 24", 1)
	if err := yaml.UnmarshalStrict([]byte(wrongLevel), &j); err == nil {
		t.Fatal("a field at the wrong level was accepted")
	}
}

var shardArg = regexp.MustCompile(`^\$\(SHARD\)/(\d+)$`)

// TestSweepJob checks what makes the sweep run as intended: an Indexed Job
// whose completions, parallelism and --shard N agree, whose pods get their
// index in SHARD, and which writes into the shared volume.
func TestSweepJob(t *testing.T) {
	j := loadJob(t, "sweep-job.yaml")
	s := j.Spec
	if s.CompletionMode == nil || *s.CompletionMode != batchv1.IndexedCompletion {
		t.Fatalf("completionMode %v, want Indexed", s.CompletionMode)
	}
	if s.Completions == nil || s.Parallelism == nil {
		t.Fatal("completions and parallelism must be set")
	}
	pod := s.Template.Spec
	if pod.RestartPolicy != corev1.RestartPolicyOnFailure && pod.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("restartPolicy %q: a Job needs OnFailure or Never", pod.RestartPolicy)
	}
	if len(pod.Containers) != 1 {
		t.Fatalf("%d containers, want 1", len(pod.Containers))
	}
	c := pod.Containers[0]
	if len(c.Args) == 0 || c.Args[0] != "sweep" {
		t.Fatalf("args %v do not run cclab sweep", c.Args)
	}
	shards := -1
	var out string
	for i, a := range c.Args {
		if i+1 >= len(c.Args) {
			break
		}
		switch a {
		case "--shard":
			m := shardArg.FindStringSubmatch(c.Args[i+1])
			if m == nil {
				t.Fatalf("--shard %q, want $(SHARD)/N", c.Args[i+1])
			}
			fmt.Sscan(m[1], &shards)
		case "--out":
			out = c.Args[i+1]
		}
	}
	if shards != int(*s.Completions) {
		t.Errorf("--shard .../%d but completions %d: every shard must run exactly once", shards, *s.Completions)
	}
	if *s.Parallelism > *s.Completions {
		t.Errorf("parallelism %d exceeds completions %d", *s.Parallelism, *s.Completions)
	}
	var shardEnv bool
	for _, e := range c.Env {
		if e.Name == "SHARD" && e.ValueFrom != nil && e.ValueFrom.FieldRef != nil &&
			e.ValueFrom.FieldRef.FieldPath == "metadata.annotations['batch.kubernetes.io/job-completion-index']" {
			shardEnv = true
		}
	}
	if !shardEnv {
		t.Error("SHARD is not taken from the pod's completion-index annotation")
	}
	if !strings.Contains(out, "$(SHARD)") {
		t.Errorf("--out %q does not depend on the shard: shards would overwrite each other", out)
	}
	checkMountedUnder(t, "sweep-job.yaml", pod, c, out)
}

// checkMountedUnder checks that path lies under a volume the container
// mounts, and that the volume is the shared claim.
func checkMountedUnder(t *testing.T, file string, pod corev1.PodSpec, c corev1.Container, path string) {
	t.Helper()
	for _, m := range c.VolumeMounts {
		if path == m.MountPath || strings.HasPrefix(path, strings.TrimSuffix(m.MountPath, "/")+"/") {
			for _, v := range pod.Volumes {
				if v.Name == m.Name {
					if v.PersistentVolumeClaim == nil || v.PersistentVolumeClaim.ClaimName != claimName(t) {
						t.Errorf("%s: %s is on volume %s, which is not the shared claim %s", file, path, v.Name, claimName(t))
					}
					return
				}
			}
			t.Errorf("%s: mount %s names volume %s, which the pod does not define", file, m.MountPath, m.Name)
			return
		}
	}
	t.Errorf("%s: %s is not under any mounted volume of container %s", file, path, c.Name)
}

func claimName(t *testing.T) string {
	t.Helper()
	var pvc corev1.PersistentVolumeClaim
	decodeStrict(t, "pvc.yaml", &pvc)
	return pvc.Name
}

// TestVolumeClaim checks that the claim can be mounted by many pods at once.
func TestVolumeClaim(t *testing.T) {
	var pvc corev1.PersistentVolumeClaim
	decodeStrict(t, "pvc.yaml", &pvc)
	if pvc.Kind != "PersistentVolumeClaim" || pvc.APIVersion != "v1" {
		t.Fatalf("kind %s/%s", pvc.APIVersion, pvc.Kind)
	}
	if !slices.Contains(pvc.Spec.AccessModes, corev1.ReadWriteMany) {
		t.Errorf("access modes %v: shards on several nodes need ReadWriteMany", pvc.Spec.AccessModes)
	}
	if q, ok := pvc.Spec.Resources.Requests[corev1.ResourceStorage]; !ok || q.IsZero() {
		t.Error("no storage request")
	}
}

// TestMergeJob checks that the merge step reads exactly the shards the sweep
// writes (all of them, nothing else) from the shared volume, and reports
// on what it merged.
func TestMergeJob(t *testing.T) {
	sweep := loadJob(t, "sweep-job.yaml")
	j := loadJob(t, "merge-job.yaml")
	pod := j.Spec.Template.Spec
	var merge *corev1.Container
	for i := range pod.InitContainers {
		if len(pod.InitContainers[i].Args) > 0 && pod.InitContainers[i].Args[0] == "merge" {
			merge = &pod.InitContainers[i]
		}
	}
	if merge == nil {
		t.Fatal("no init container runs cclab merge (the report must wait for it)")
	}
	var shards []string
	out := ""
	for i := 1; i < len(merge.Args); i++ {
		if merge.Args[i] == "--out" && i+1 < len(merge.Args) {
			out = merge.Args[i+1]
			i++
			continue
		}
		shards = append(shards, merge.Args[i])
	}
	var sweepOut string
	args := sweep.Spec.Template.Spec.Containers[0].Args
	for i := range args[:len(args)-1] {
		if args[i] == "--out" {
			sweepOut = args[i+1]
		}
	}
	n := int(*sweep.Spec.Completions)
	if len(shards) != n {
		t.Fatalf("merge reads %d shards, the sweep writes %d", len(shards), n)
	}
	for i, s := range shards {
		if want := strings.ReplaceAll(sweepOut, "$(SHARD)", fmt.Sprint(i)); s != want {
			t.Errorf("merge shard %d is %s, the sweep writes %s", i, s, want)
		}
		checkMountedUnder(t, "merge-job.yaml", pod, *merge, s)
	}
	checkMountedUnder(t, "merge-job.yaml", pod, *merge, out)
	if len(pod.Containers) != 1 || len(pod.Containers[0].Args) != 2 || pod.Containers[0].Args[0] != "report" || pod.Containers[0].Args[1] != out {
		t.Errorf("the main container should run `report %s`, runs %v", out, pod.Containers[0].Args)
	}
	checkMountedUnder(t, "merge-job.yaml", pod, pod.Containers[0], out)
	if pod.RestartPolicy != corev1.RestartPolicyNever && pod.RestartPolicy != corev1.RestartPolicyOnFailure {
		t.Errorf("restartPolicy %q", pod.RestartPolicy)
	}
}

// TestRunScriptOrdersTheJobs checks that run.sh applies the merge only
// after the sweep has completed (the merge job has no dependency field in
// the API: the ordering is the script's).
func TestRunScriptOrdersTheJobs(t *testing.T) {
	data, err := os.ReadFile("run.sh")
	if err != nil {
		t.Fatal(err)
	}
	s := string(data)
	apply := strings.Index(s, "sweep-job.yaml")
	wait := strings.Index(s, "condition=complete")
	merge := strings.Index(s, "merge-job.yaml")
	if apply < 0 || wait < 0 || merge < 0 || !(apply < wait && wait < merge) {
		t.Errorf("run.sh must apply sweep-job.yaml, wait for condition=complete, then apply merge-job.yaml (positions %d, %d, %d)", apply, wait, merge)
	}
	files, _ := filepath.Glob("*.yaml")
	if len(files) < 3 {
		t.Errorf("found %d manifests, want the sweep, merge and volume claim", len(files))
	}
}

// TestFetchPodOverrides decodes the pod that run.sh starts to copy the
// results out, also strictly.
func TestFetchPodOverrides(t *testing.T) {
	data, err := os.ReadFile("run.sh")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`--overrides='([^']*)'`).FindSubmatch(data)
	if m == nil {
		t.Fatal("run.sh has no --overrides for the fetch pod")
	}
	var pod corev1.Pod
	if err := yaml.UnmarshalStrict(m[1], &pod); err != nil {
		t.Fatalf("fetch pod overrides: %v", err)
	}
	if len(pod.Spec.Containers) != 1 {
		t.Fatalf("%d containers", len(pod.Spec.Containers))
	}
	checkMountedUnder(t, "run.sh", pod.Spec, pod.Spec.Containers[0], "/shared/out/merged")
}
