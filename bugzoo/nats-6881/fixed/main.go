// The work queue of ../../nats-workqueue, built against nats-server v2.11.4 (the release with the fix).
package main

import "seedfall.dev/bugzoo/workqueue"

func main() { workqueue.Main() }
