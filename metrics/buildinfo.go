package metrics

import (
	"runtime"

	"github.com/prometheus/client_golang/prometheus"
)

// BuildInfoName is the name of the metric BuildInfo exports.
const BuildInfoName = "txsink_build_info"

// BuildInfo returns the collector of txsink_build_info: a gauge of 1
// labelled with the binary's version, commit and Go version, to join on
// (e.g. * on(instance) group_left(version) txsink_build_info) or to see a
// fleet's versions. It is the process's, not a pipeline's: register it
// once per registry, beside the pipelines' Register.
func BuildInfo(version, commit string) prometheus.Collector {
	g := prometheus.NewGauge(prometheus.GaugeOpts{
		Name:        BuildInfoName,
		Help:        "1, labelled with the build: txsink's version and commit, and the Go version.",
		ConstLabels: prometheus.Labels{"version": version, "commit": commit, "goversion": runtime.Version()},
	})
	g.Set(1)
	return g
}
