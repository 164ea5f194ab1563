#!/usr/bin/env bash
# Install what is missing, configure, build, and run every test tier.
# KILN_BUILD_DIR (default: build) chooses the build directory.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${KILN_BUILD_DIR:-build}

bash scripts/setup.sh
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release
cmake --build "$build" -j2
ctest --test-dir "$build" --output-on-failure -j2
