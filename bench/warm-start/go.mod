module example.com/warmstart

go 1.24
