#!/usr/bin/env bash
# The schedule-file parser under libFuzzer (clang, with ASan + UBSan), in a
# separate build directory. The corpus starts from the project's .sched files.
#
#   scripts/fuzz.sh                  60 seconds
#   KILN_FUZZ_SECONDS=3600 scripts/fuzz.sh
#
# A crash leaves the input as crash-<hash> in the build directory; replay it
# with build-fuzz/sched_parser_fuzzer crash-<hash>, then save the minimized
# text as a case in tests/unit/test_schedule_file.cpp.
#
# The long run of the other fuzzers (tests/fuzz, any compiler):
#   KILN_FUZZ_ITERS=100000 ctest --test-dir build -L fuzz
set -euo pipefail
cd "$(dirname "$0")/.."
build=${KILN_FUZZ_BUILD_DIR:-build-fuzz}
seconds=${KILN_FUZZ_SECONDS:-60}
command -v clang++ >/dev/null || sudo apt-get install -y clang libclang-rt-dev

san="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
gen=(); command -v ninja >/dev/null && gen=(-G Ninja)
CC=clang CXX=clang++ cmake -S . -B "$build" "${gen[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_FLAGS="$san -fsanitize=fuzzer-no-link" -DKILN_BUILD_TESTS=OFF
cmake --build "$build" -j2 --target kiln
halide_include=$(sed -n 's/^KILN_HALIDE_INCLUDE_DIR:PATH=//p' "$build/CMakeCache.txt")
clang++ -std=c++17 -g -O1 $san -fsanitize=fuzzer -Idsl/include -I"$build" -I"$halide_include" \
    tests/fuzz/libfuzzer/sched_parser_fuzzer.cpp "$build/dsl/libkiln.a" -fopenmp -ldl \
    -o "$build/sched_parser_fuzzer"
mkdir -p "$build/corpus"
cp schedules/*/*.sched tests/unit/sched/*.sched "$build/corpus/" 2>/dev/null || true
cd "$build"
./sched_parser_fuzzer -max_total_time="$seconds" -max_len=512 corpus
