// The stream workload of ../../nats-ensurestream, built against nats-server v2.9.10 (the release with the bug).
package main

import "seedfall.dev/bugzoo/ensurestream"

func main() { ensurestream.Main() }
