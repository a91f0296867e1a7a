package tcp

import (
	"time"

	"github.com/cclab/cclab/cc/estimate"
)

// RTTEstimator is RFC 6298's estimator, shared with cc/cctest through
// package estimate.
type RTTEstimator = estimate.RTT

// NewRTTEstimator returns an estimator whose RTO is never below minRTO.
func NewRTTEstimator(minRTO time.Duration) RTTEstimator {
	return estimate.NewRTT(minRTO)
}
