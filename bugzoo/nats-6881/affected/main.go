// The work queue of ../../nats-workqueue, built against nats-server v2.11.3 (the release with the bug).
package main

import "seedfall.dev/bugzoo/workqueue"

func main() { workqueue.Main() }
