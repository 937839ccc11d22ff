// The cluster and client of ../workload, built against nats-server v2.10.22 (the release with issue 6888).
package main

import "seedfall.dev/examples/natscluster/workload"

func main() { workload.Main() }
