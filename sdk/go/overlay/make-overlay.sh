#!/bin/sh
# make-overlay.sh writes a `go build -overlay` that makes the standard
# library's net package use the seedfall host's sockets on GOOS=wasip1, so
# plain net.Listen, net.Dial and net/http work between simulated nodes
# without changing the program. See README.md beside this script.
#
#   make-overlay.sh [GOROOT] OUTDIR
#
# GOROOT defaults to `go env GOROOT`, and must be the GOROOT of the go
# command that builds with the overlay (the overlay names its files by
# absolute path; a different spelling of the same directory is not matched).
# OUTDIR receives overlay.json and the three files it points to:
#
#   net_fake.go             GOROOT's, with `func socket(` renamed fakeSocket
#   fd_fake.go              GOROOT's, with `func (fd *netFD) accept(` renamed
#                           fakeAccept
#   sockopt_fake.go,        GOROOT's, with the TCP keepalive options renamed
#   tcpsockopt_stub.go      fakeSetKeepAlive... (ours accept them)
#   net_seedfall_wasip1.go  ours, added to package net, which defines socket
#                           and accept again on top of the host's sockets
#
# Go's source is patched here, at build time, and never copied into this
# repository. The script fails when a patch does not apply exactly once (a
# Go release changed those files), rather than produce an overlay that
# silently does nothing.
#
#   GOOS=wasip1 GOARCH=wasm go build -overlay OUTDIR/overlay.json .
set -eu

case $# in
1) goroot=$(go env GOROOT); outdir=$1 ;;
2) goroot=$1; outdir=$2 ;;
*) echo "usage: $0 [GOROOT] OUTDIR" >&2; exit 2 ;;
esac

here=$(cd "$(dirname "$0")" && pwd)
goroot=$(cd "$goroot" && pwd)
src=$goroot/src/net
for f in net_fake.go fd_fake.go sockopt_fake.go tcpsockopt_stub.go; do
	if [ ! -f "$src/$f" ]; then
		echo "make-overlay.sh: $src/$f not found: is $goroot a Go 1.22 or newer GOROOT?" >&2
		exit 1
	fi
done
if [ -e "$src/net_seedfall_wasip1.go" ]; then
	echo "make-overlay.sh: $src/net_seedfall_wasip1.go already exists" >&2
	exit 1
fi
mkdir -p "$outdir"
outdir=$(cd "$outdir" && pwd)

# rename FILE OLD NEW: copy GOROOT's FILE (or the copy already in OUTDIR,
# for a second rename in one file) to OUTDIR with the one line that starts
# with OLD starting with NEW instead.
rename() {
	from=$src/$1
	if [ -n "${renamed_once:-}" ] && printf '%s\n' $renamed_once | grep -qx "$1"; then from=$outdir/$1; fi
	renamed_once="${renamed_once:-} $1"
	awk -v old="$2" -v new="$3" '
		index($0, old) == 1 { $0 = new substr($0, length(old) + 1); n++ }
		{ print }
		END { if (n != 1) { exit 3 } }
	' "$from" >"$outdir/$1.tmp" || {
		echo "make-overlay.sh: \"$2\" is not exactly once at the start of a line in $src/$1" >&2
		rm -f "$outdir/$1.tmp"
		exit 1
	}
	mv "$outdir/$1.tmp" "$outdir/$1"
}
rename net_fake.go 'func socket(' 'func fakeSocket('
rename fd_fake.go 'func (fd *netFD) accept(' 'func (fd *netFD) fakeAccept('
rename sockopt_fake.go 'func setKeepAlive(' 'func fakeSetKeepAlive('
rename tcpsockopt_stub.go 'func setKeepAliveIdle(' 'func fakeSetKeepAliveIdle('
rename tcpsockopt_stub.go 'func setKeepAliveInterval(' 'func fakeSetKeepAliveInterval('
rename tcpsockopt_stub.go 'func setKeepAliveCount(' 'func fakeSetKeepAliveCount('

# Ours is kept out of every build in the repository by "//go:build ignore";
# in package net it is for wasip1 only.
awk '
	$0 == "//go:build ignore" && !done { $0 = "//go:build wasip1"; done = 1 }
	{ print }
	END { if (!done) { exit 3 } }
' "$here/net_seedfall_wasip1.go" >"$outdir/net_seedfall_wasip1.go" || {
	echo "make-overlay.sh: no //go:build ignore line in $here/net_seedfall_wasip1.go" >&2
	exit 1
}

# JSON strings: escape backslashes and double quotes.
json() {
	printf '"%s"' "$(printf '%s' "$1" | sed 's/\\/\\\\/g; s/"/\\"/g')"
}
{
	echo '{"Replace": {'
	echo "  $(json "$src/net_fake.go"): $(json "$outdir/net_fake.go"),"
	echo "  $(json "$src/fd_fake.go"): $(json "$outdir/fd_fake.go"),"
	echo "  $(json "$src/sockopt_fake.go"): $(json "$outdir/sockopt_fake.go"),"
	echo "  $(json "$src/tcpsockopt_stub.go"): $(json "$outdir/tcpsockopt_stub.go"),"
	echo "  $(json "$src/net_seedfall_wasip1.go"): $(json "$outdir/net_seedfall_wasip1.go")"
	echo '}}'
} >"$outdir/overlay.json"
echo "$outdir/overlay.json"
