package main

import (
	"fmt"

	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
	"seedfall.dev/sdk/sim"
)

func main() {
	_ = sim.Recall
	_ = raft.NewTCPTransport
	s, err := raftboltdb.NewBoltStore("/raft.db")
	fmt.Println(s, err)
}
