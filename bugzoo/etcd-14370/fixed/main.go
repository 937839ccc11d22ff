// The workload of ../workload built against etcd v3.5.5, the release that fixed it.
package main

import "seedfall.dev/bugzoo/etcd14370/workload"

func main() { workload.Main() }
