// What the raftlog family's main.go needs from this cell's release.
package main

import (
	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
)

func openLogStore(dir string) (raft.LogStore, func() error, error) {
	s, err := raftboltdb.NewBoltStore(dir + "/raft.db")
	if err != nil {
		return nil, nil, err
	}
	return s, s.Close, nil
}
