//go:build !linux

package f32

func threadCPU() float64 { return 0 }
