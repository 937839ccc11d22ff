// buggify.go owns Buggify, FoundationDB-style fault injection sites.

package sim

// Buggify reports whether the fault injection site named site fires now.
// Under seedfall a site is switched on for the whole run with probability
// 1/4 the first time the run reaches it; a switched-on site then fires with
// probability 1/4 on each call, and every firing is recorded in the run as a
// fault. Outside seedfall it always returns false.
//
//	if sim.Buggify("store: slow fsync") {
//		time.Sleep(200 * time.Millisecond)
//	}
func Buggify(site string) bool {
	return hostBuggify(site)
}
