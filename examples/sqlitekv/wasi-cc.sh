#!/bin/sh
# The C compiler cc-rs runs for wasm32-wasip1 (see .cargo/config.toml):
# Debian's clang 14, with pre.h force-included.
exec clang -include "$(dirname "$0")/pre.h" "$@"
