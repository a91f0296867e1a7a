// Package rlbench holds the learning core's speed benchmarks: SAC and DDPG
// gradient steps and PPO minibatch steps at MARLIN's sizes, and batch-1
// policy inference. run.sh compares them side by side with PyTorch
// (torch_bench.py, the same computations) on this machine; docs/rl.md
// records the figures.
//
//	go test -bench . -benchtime 5s ./bench/rl                # default: Go assembly kernels (learn/rl/nn/f32)
//	go test -tags openblas -bench . -benchtime 5s ./bench/rl # OpenBLAS through cgo
//	bash bench/rl/run.sh                                      # default, OpenBLAS and PyTorch side by side
package rlbench
