// The stream workload of ../../nats-ensurestream, built against nats-server v2.9.11 (the release with the fix).
package main

import "seedfall.dev/bugzoo/ensurestream"

func main() { ensurestream.Main() }
