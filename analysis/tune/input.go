package tune

import (
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"
)

// Globs expands glob patterns (each may be a comma-separated list); each
// must match something.
func Globs(patterns []string) ([]string, error) {
	var out []string
	for _, pat := range patterns {
		for _, p := range strings.Split(pat, ",") {
			p = strings.TrimSpace(p)
			if p == "" {
				continue
			}
			m, err := filepath.Glob(p)
			if err != nil {
				return nil, fmt.Errorf("%q: %v", p, err)
			}
			if len(m) == 0 {
				return nil, fmt.Errorf("%q matches no file", p)
			}
			out = append(out, m...)
		}
	}
	return out, nil
}

// ParseDefaults parses baseline values NAME=NUMBER of tuned parameters.
func ParseDefaults(defs []string) (map[string]float64, error) {
	m := map[string]float64{}
	for _, d := range defs {
		k, v, ok := strings.Cut(d, "=")
		k = strings.TrimSpace(k)
		x, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		// NaN would read as "baseline unknown" (Param.Default), and an
		// infinite baseline is no parameter value.
		if !ok || k == "" || err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, fmt.Errorf("%q: want NAME=NUMBER with a finite number, e.g. vegas.alpha=2", d)
		}
		m[k] = x
	}
	return m, nil
}

// WriteMetrics lists the metrics objectives and constraints may use.
func WriteMetrics(w io.Writer) error {
	fmt.Fprintln(w, "Metrics for --objective and --constraint (each a mean over the cases a candidate runs on):")
	for _, n := range MetricNames() {
		m, err := LookupMetric(n)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "  %-22s %s\n", n, m.Doc)
	}
	fmt.Fprintln(w, "  flowN.METRIC           METRIC of measured flow N alone (from 0), e.g. flow0.goodput_mbps")
	return nil
}
