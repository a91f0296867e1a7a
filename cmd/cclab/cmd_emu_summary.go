package main

// The emulator's commands' summaries, for their Linux implementations and
// for the commands that stand in for them elsewhere (cmd_emu_other.go).
const (
	emuSummary     = "run one scenario on an emulated network with real Linux TCP (root)"
	compareSummary = "run a scenario in the simulator and on the emulator (real Linux TCP) and print both side by side"
)
