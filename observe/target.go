package observe

// StarRocksStatus is what a StarRocks target reports of its own protocol
// (Status.StarRocks; nil for the other targets). Its counters cover the
// target's life in this process: the loads, commits and label reads of
// every pipeline that shares it.
type StarRocksStatus struct {
	// ServerVersion is the cluster's version as current_version() answers
	// it ("4.0.1 a1b2c3d"), read when the target was opened.
	ServerVersion string `json:"server_version"`
	// LoadsPerCommit counts the loads of each transaction whose commit
	// was answered OK or found committed at once through its label (data
	// tables, progress and claims included); one whose outcome stayed
	// unknown and was resolved later is not counted.
	LoadsPerCommit Histogram `json:"loads_per_commit"`
	// LoadBytes counts the body bytes of each load the server accepted.
	LoadBytes Histogram `json:"load_bytes"`
	// LabelStates counts the label states get_load_state answered (after
	// a commit answer that was not OK or did not arrive, and while a claim
	// looks for an earlier owner's open transaction), by state: committed,
	// visible, aborted, open (PREPARE or PREPARED) or unknown (the server
	// knows no such label). Every key is present.
	LabelStates map[string]int64 `json:"label_states"`
}

// LabelStates are the keys of StarRocksStatus.LabelStates.
var LabelStates = []string{"committed", "visible", "aborted", "open", "unknown"}

// Histogram is a cumulative histogram, as Prometheus has them.
type Histogram struct {
	// Count and Sum are the number and the sum of the observations.
	Count uint64  `json:"count"`
	Sum   float64 `json:"sum"`
	// Bounds are the buckets' upper bounds, ascending; Counts[i] is the
	// number of observations at most Bounds[i] (so Counts never falls).
	Bounds []float64 `json:"bounds"`
	Counts []uint64  `json:"counts"`
}
