package metrics

import "gonum.org/v1/gonum/stat/distuv"

// TQuantile975 returns the 0.975 quantile of Student's t distribution with
// df degrees of freedom: the multiplier of the standard error in a two-sided
// 95% confidence interval.
func TQuantile975(df int) float64 {
	if df < 1 {
		return 0
	}
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(df)}.Quantile(0.975)
}
