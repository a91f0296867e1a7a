package gym

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/cclab/cclab/internal/cputime"
	"github.com/cclab/cclab/learn/rl/env"
	"github.com/cclab/cclab/rpc/gym/gympb"
)

// benchAction is the action pattern of gymtraj and python/bench/steps.py.
func benchAction(k, i int) float32 { return float32(float64((3*k+i)%9-4) / 5) }

var benchSizes = []int{1, 2, 4, 8, 16}

// benchEnvs are the environments benchmarked: MARLIN (cheap steps: 100 ms
// of a sub-Mbit/s link), the generic environment on the 10 Mbit/s
// dumbbell, and BBR tuning in the data centre (expensive steps).
var benchEnvs = []struct {
	name, id string
	opts     map[string]string
}{
	{"Marlin", "cclab/Marlin-v0", nil},
	{"Scenario-dumbbell", "cclab/Scenario-v0", map[string]string{"scenario": "dumbbell"}},
	{"BBRTuning", "cclab/BBRTuning-v0", map[string]string{"action": "continuous"}},
}

// BenchmarkInProcess steps N environments in-process, as `cclab marlin
// train` does (env.Vec, parallel goroutines, autoreset): the baseline for
// the service's overhead (docs/python.md, python/bench/steps.py). One op is
// one environment step; steps/s is per environment step.
func BenchmarkInProcess(b *testing.B) {
	for _, be := range benchEnvs {
		for _, n := range benchSizes {
			if be.name != "Marlin" && n != 1 && n != 8 {
				continue
			}
			b.Run(fmt.Sprintf("env=%s/envs=%d", be.name, n), func(b *testing.B) {
				envs, err := MakeEnvs(be.id, be.opts, n)
				if err != nil {
					b.Fatal(err)
				}
				v, err := env.NewVec(envs, 0)
				if err != nil {
					b.Fatal(err)
				}
				v.Reset(1)
				act := make([]float32, n*v.ActionSpace().Dim())
				b.ResetTimer()
				cpu0 := cpuTime()
				start := time.Now()
				steps := 0
				for k := 0; steps < b.N; k++ {
					for i := range act {
						act[i] = benchAction(k, i/v.ActionSpace().Dim())
					}
					v.Step(act)
					steps += n
				}
				b.ReportMetric(float64(steps)/time.Since(start).Seconds(), "steps/s")
				b.ReportMetric(float64(cpuTime()-cpu0)/float64(time.Microsecond)/float64(steps), "cpu-us/step")
			})
		}
	}
}

// cpuTime is the process's user plus system CPU time (0 where the
// platform does not report it): on a loaded machine CPU per step is
// steadier than wall time, and it is what the service's client, transport
// and server add up to (python/bench/steps.py reports the same for the
// Python client plus the server process).
func cpuTime() time.Duration {
	d, _ := cputime.Process()
	return d
}

// BenchmarkMarlinService steps the same environments through the gRPC
// service from a Go client, with unary Step calls or over one StepStream,
// on loopback TCP or a Unix-domain socket, separating the service's own
// cost from the Python client's.
func BenchmarkMarlinService(b *testing.B) {
	for _, network := range []string{"tcp", "unix"} {
		addr := "127.0.0.1:0"
		if network == "unix" {
			addr = filepath.Join(b.TempDir(), "gym.sock")
		}
		lis, err := net.Listen(network, addr)
		if err != nil {
			b.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { Serve(ctx, lis, Config{}, time.Second); close(done) }()
		target := lis.Addr().String()
		if network == "unix" {
			target = "unix:" + target
		}
		conn, err := grpc.NewClient(target, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			b.Fatal(err)
		}
		c := gympb.NewGymClient(conn)
		for _, rpc := range []string{"unary", "stream", "lane"} {
			if rpc == "lane" && network != "unix" {
				continue // the lane is for a client on the server's machine
			}
			for _, n := range benchSizes {
				b.Run(fmt.Sprintf("net=%s/rpc=%s/envs=%d", network, rpc, n), func(b *testing.B) {
					if rpc == "lane" {
						benchLane(ctx, b, c, n)
						return
					}
					benchService(ctx, b, c, rpc == "stream", n)
				})
			}
		}
		conn.Close()
		cancel()
		<-done
	}
}

// benchVector makes and resets a vector of n MARLIN environments, closed
// when the benchmark ends.
func benchVector(ctx context.Context, b *testing.B, c gympb.GymClient, n int) *gympb.MakeResponse {
	mk, err := c.Make(ctx, &gympb.MakeRequest{EnvId: "cclab/Marlin-v0", NumEnvs: int32(n)})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close(ctx, &gympb.CloseRequest{Handle: mk.Handle}) })
	if _, err := c.Reset(ctx, &gympb.ResetRequest{Handle: mk.Handle}); err != nil {
		b.Fatal(err)
	}
	return mk
}

func benchService(ctx context.Context, b *testing.B, c gympb.GymClient, stream bool, n int) {
	mk := benchVector(ctx, b, c, n)
	var err error
	var st gympb.Gym_StepStreamClient
	if stream {
		if st, err = c.StepStream(ctx); err != nil {
			b.Fatal(err)
		}
		defer st.CloseSend()
	}
	act := make([]float32, n)
	var batch gympb.StepBatch
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuTime()
	start := time.Now()
	steps := 0
	for k := 0; steps < b.N; k++ {
		for i := range act {
			act[i] = benchAction(k, i)
		}
		req := &gympb.StepRequest{Handle: mk.Handle, Actions: pack(act...), Autoreset: true}
		if stream {
			err = st.Send(req)
			if err == nil {
				err = st.RecvMsg(&batch)
			}
		} else {
			_, err = c.Step(ctx, req)
		}
		if err != nil {
			b.Fatal(err)
		}
		steps += n
	}
	b.ReportMetric(float64(steps)/time.Since(start).Seconds(), "steps/s")
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(time.Microsecond)/float64(steps), "cpu-us/step")
}
