// The workload of ../workload built against etcd v3.5.4, the release with issue 14370.
package main

import "seedfall.dev/bugzoo/etcd14370/workload"

func main() { workload.Main() }
