// The member of ../workload built against etcd's v3.5.6, the release with the bug.
package main

import "seedfall.dev/bugzoo/etcdwal14122/workload"

func main() { workload.Main() }
