#!/usr/bin/env bash
# Builds the AF_ALG LD_PRELOAD shim btvirt needs on kernels without kernel crypto sockets (see af-alg-shim.c).
# Usage: scripts/btvirt/build-shim.sh OUTPUT.so   (prints nothing; exits non-zero if no C compiler works)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
output="${1:?usage: build-shim.sh OUTPUT.so}"
compiler="$(command -v cc || command -v gcc || command -v clang)"
"$compiler" -shared -fPIC -O2 -Wall -Werror -o "$output.tmp" "$here/af-alg-shim.c" -ldl
mv "$output.tmp" "$output"
