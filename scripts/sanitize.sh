#!/usr/bin/env bash
# Build the test tiers with AddressSanitizer + UndefinedBehaviorSanitizer in a
# separate build directory and run them; every kernel the tests JIT-compile
# (and every AOT kernel kiln-gen emits) is built with the same sanitizers,
# through KILN_KERNEL_FLAGS (see kernel_compiler_flags()).
#
#   scripts/sanitize.sh                      unit lower correctness error runtime fuzz
#   scripts/sanitize.sh generator apps       other tiers (labels)
#
# KILN_ASAN_BUILD_DIR (default: build-asan) chooses the build directory. Any
# sanitizer report fails the test that triggered it (halt_on_error).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${KILN_ASAN_BUILD_DIR:-build-asan}
tiers=("$@")
[ ${#tiers[@]} -eq 0 ] && tiers=(unit lower correctness error runtime fuzz)

# pointer-overflow is recoverable so that scripts/ubsan.supp can silence the
# one report from Halide 14's own header; every other report halts.
flags="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined -fsanitize-recover=pointer-overflow"
export KILN_KERNEL_FLAGS="$flags"
# Kernels report allocation failure (kiln_error_out_of_memory) instead of
# ASan aborting on a huge request; leaks are errors.
export ASAN_OPTIONS="detect_leaks=1:allocator_may_return_null=1:halt_on_error=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:suppressions=$PWD/scripts/ubsan.supp"

gen=(); command -v ninja >/dev/null && gen=(-G Ninja)
cache=(); command -v ccache >/dev/null &&
    cache=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
# -O1 -g1 (line tables only): the optimisation level ASan is meant for, and
# a shorter compile than -O2 -g on the shared two-core machine;
# reports still give file:line.
cmake -S . -B "$build" "${gen[@]}" "${cache[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" \
      -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="$flags" \
      -DCMAKE_SHARED_LINKER_FLAGS="$flags"
targets=()
for t in "${tiers[@]}"; do targets+=(--target "kiln_test_$t"); done
# The apps tier also runs the programs kiln-lab and the AOT image apps.
for t in "${tiers[@]}"; do
    [ "$t" = apps ] && targets+=(--target kiln-lab --target kiln-blur --target kiln-unsharp --target kiln-harris)
done
cmake --build "$build" -j2 "${targets[@]}"
labels=$(IFS='|'; echo "${tiers[*]}")
# Two generator cases cannot pass in this build and are left out: the outside
# project links the instrumented libkiln without the sanitizer runtime, and
# print_cxx_flags expects the kernel flags without KILN_KERNEL_FLAGS.
ctest --test-dir "$build" -L "^($labels)\$" -E '^generator/(outside_project|kiln-gen/print_cxx_flags)$' \
      --output-on-failure -j2
