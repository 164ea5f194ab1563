#!/usr/bin/env bash
# Install what is missing, configure, build the demo, and run it.
# KILN_BUILD_DIR (default: build) chooses the build directory.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${KILN_BUILD_DIR:-build}

bash scripts/setup.sh
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release
cmake --build "$build" -j2 --target demo kiln-lab
"$build/bin/demo"
# The schedule lab on a shipped image (tiled up to 2048x2048 so that fusion
# saves memory traffic): every schedule of blur3x3, timed, checked against
# the unfused one, with the fusion report, stmt_html pages and a chart.
"$build/bin/kiln-lab" blur3x3 --input apps/data/scene.png --size 2048x2048 --out "$build/lab_out"
