package main

import (
	"github.com/cclab/cclab/experiment"
	"github.com/cclab/cclab/network"
)

// writeRunPlots draws a single run's figures next to its CSV files.
func writeRunPlots(dir string, r *experiment.Result, n *network.Network) error {
	return nil // filled in once the plot package lands (see issue 3)
}
