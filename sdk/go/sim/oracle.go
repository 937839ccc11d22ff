// oracle.go owns the test oracle: a small key-value memory kept by the
// simulator, outside every node, that survives crashes and restarts.

package sim

// Remember stores value under key in the simulator's memory for this run. It
// is for the workload's checks, not for the system under test: a client
// remembers which writes were acknowledged, and after a crash the checker
// recalls them to verify they survived. The memory outlives crashes of any
// node. Keys are at most 1 KiB, values at most 64 KiB, 10,000 keys per run.
func Remember(key string, value []byte) {
	platformRemember(key, value)
}

// Recall returns what Remember stored under key in this run, if anything.
func Recall(key string) ([]byte, bool) {
	return platformRecall(key)
}
