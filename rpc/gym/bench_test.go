package gym

import (
	"context"
	"fmt"
	"net"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

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
			})
		}
	}
}

// BenchmarkMarlinService steps the same environments through the gRPC
// service on loopback from a Go client, separating the service's own cost
// from the Python client's.
func BenchmarkMarlinService(b *testing.B) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go Serve(ctx, lis, Config{}, time.Second)
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	c := gympb.NewGymClient(conn)
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("envs=%d", n), func(b *testing.B) {
			mk, err := c.Make(ctx, &gympb.MakeRequest{EnvId: "cclab/Marlin-v0", NumEnvs: int32(n)})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := c.Reset(ctx, &gympb.ResetRequest{Handle: mk.Handle}); err != nil {
				b.Fatal(err)
			}
			act := make([]float32, n)
			b.ResetTimer()
			start := time.Now()
			steps := 0
			for k := 0; steps < b.N; k++ {
				for i := range act {
					act[i] = benchAction(k, i)
				}
				if _, err := c.Step(ctx, &gympb.StepRequest{Handle: mk.Handle, Actions: pack(act...), Autoreset: true}); err != nil {
					b.Fatal(err)
				}
				steps += n
			}
			b.ReportMetric(float64(steps)/time.Since(start).Seconds(), "steps/s")
			c.Close(ctx, &gympb.CloseRequest{Handle: mk.Handle})
		})
	}
}
