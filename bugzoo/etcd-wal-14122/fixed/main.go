// The member of ../workload built against etcd's v3.5.7, the release with the fix.
package main

import "seedfall.dev/bugzoo/etcdwal14122/workload"

func main() { workload.Main() }
