// The cluster and client of ../workload, built against nats-server v2.10.23 (the release that fixed it).
package main

import "seedfall.dev/examples/natscluster/workload"

func main() { workload.Main() }
