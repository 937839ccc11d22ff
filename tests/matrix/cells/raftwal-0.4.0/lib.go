// What the raftlog family's main.go needs from this cell's release.
package main

import (
	"github.com/hashicorp/raft"
	raftwal "github.com/hashicorp/raft-wal"
)

func openLogStore(dir string) (raft.LogStore, func() error, error) {
	w, err := raftwal.Open(dir)
	if err != nil {
		return nil, nil, err
	}
	return w, w.Close, nil
}
