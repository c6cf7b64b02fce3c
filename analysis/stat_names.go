package analysis

import "github.com/gymlens/gymlens/analysis/stat"

// The generic statistics live in analysis/stat; these names let the
// domain code (and its callers) say analysis.Estimate and
// analysis.BootstrapOptions as the metrics it computes are described.

type (
	AlphaData        = stat.AlphaData
	BootstrapOptions = stat.BootstrapOptions
	Caveat           = stat.Caveat
	Confusion        = stat.Confusion
	Estimate         = stat.Estimate
	FleissData       = stat.FleissData
	Statistics       = stat.Statistics
)

const (
	BCa                 = stat.BCa
	CaveatInterval      = stat.CaveatInterval
	ClusterRobustT      = stat.ClusterRobustT
	Expanded            = stat.Expanded
	Interval            = stat.Interval
	Linear              = stat.Linear
	Nominal             = stat.Nominal
	Ordinal             = stat.Ordinal
	Percentile          = stat.Percentile
	Quadratic           = stat.Quadratic
	Ratio               = stat.Ratio
	TiePrecision        = stat.TiePrecision
	Unweighted          = stat.Unweighted
	CaveatOneCluster    = stat.CaveatOneCluster
	CaveatScenarioLevel = stat.CaveatScenarioLevel
)

var (
	DefaultBootstrap = stat.DefaultBootstrap
	Levels           = stat.Levels
	Methods          = stat.Methods
)
