#!/usr/bin/env bash
# Writes what Kiln emits (header, C++ and lowered statement; with
# KILN_EMIT=h,cpp,stmt,report,stmt_html the fusion report and stmt_html too)
# for every generator under every shipped schedule into one directory, so
# that a change meant to leave the output alone (a refactoring) can be
# checked byte for byte:
#
#   scripts/emitted-code.sh /tmp/before            # on the old commit's build
#   scripts/emitted-code.sh /tmp/after             # on the new one
#   diff -r /tmp/before /tmp/after && echo identical
#
# Each generator is compiled with every .sched file under schedules/<name>/
# (subdirectories too) for a fixed x86-64 AVX-512 target, so the files do not
# depend on the machine; with its parameter variants that the generator tier
# builds (schedules under online/ with algorithm=online); and with each npu*.sched for the NPU target, with the parameters
# the NPU needs (tests/generator/CMakeLists.txt). A configuration that fails
# leaves kiln-gen's message in <config>.error instead.
#
# KILN_BUILD_DIR (default: build) is where kiln-gen is found. A
# configuration taking longer than KILN_EMIT_TIMEOUT seconds (default 60)
# is stopped, and says so in its .error file (the report counts the loops of
# 1024-wide buffers, which takes minutes for the convolutions).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: scripts/emitted-code.sh OUTPUT_DIR}
gen=${KILN_BUILD_DIR:-build}/bin/kiln-gen
[ -x "$gen" ] || { echo "emitted-code.sh: $gen not found; build the kiln-gen target first" >&2; exit 1; }
mkdir -p "$out"
kinds=${KILN_EMIT:-h,cpp,stmt}
limit=${KILN_EMIT_TIMEOUT:-60}
host_target=x86-64-linux-sse41-avx-avx2-fma-avx512

# emit <generator> <schedule file> <target> [param=value...]
emit() {
    local generator=$1 schedule=$2 target=$3
    shift 3
    local name="${generator}__$(echo "${schedule#schedules/$generator/}" | tr '/' '_' | sed 's/\.sched$//')__${target%%-*}"
    for p in "$@"; do name="${name}__${p//=/-}"; done
    local dir="$out/$name"
    mkdir -p "$dir"
    local status=0
    timeout "$limit" "$gen" -g "$generator" -s "$schedule" -t "$target" -o "$dir" -f kernel -e "$kinds" "$@" \
        >/dev/null 2>"$dir.error" || status=$?
    if [ "$status" = 124 ]; then
        echo "stopped after $limit s" >"$dir.error"
        return 0
    fi
    [ "$status" = 0 ] || return 0  # the message stays, to be compared too
    rm -f "$dir.error"
}

# The parameter variants the generator tier builds for the host, one per
# line (an empty line: the defaults).
host_variants() {
    case $1 in
    unsharp) printf '%s\n' "" "type=uint8" ;;
    elementwise_chain) printf '%s\n' "variant=softplus" "variant=tanh_affine" ;;
    gemm) printf '%s\n' "activation=relu" "activation=gelu" ;;
    *) printf '\n' ;;
    esac
}

# The parameters the NPU target needs (constant row widths and shapes).
npu_variants() {
    case $1 in
    elementwise_chain) printf '%s\n' "variant=softplus" "variant=tanh_affine" ;;
    layernorm | softmax) printf '%s\n' "width=1024" ;;
    gemm) printf '%s\n' "depth=128 activation=relu" "depth=128 activation=gelu" ;;
    attention) printf '%s\n' "dim=64 seq=128" ;;
    *) printf '\n' ;;
    esac
}

count=0
for dir in schedules/*/; do
    generator=$(basename "$dir")
    mapfile -t schedules < <(find "$dir" -name '*.sched' | sort)
    mapfile -t host < <(host_variants "$generator")
    mapfile -t npu < <(npu_variants "$generator")
    for schedule in "${schedules[@]}"; do
        # Schedules under online/ are for the generator's algorithm=online.
        extra=""
        [[ $schedule == */online/* ]] && extra="algorithm=online"
        for v in "${host[@]}"; do
            # shellcheck disable=SC2086 # a variant is zero or more words
            emit "$generator" "$schedule" "$host_target" $v $extra
            count=$((count + 1))
        done
        [[ $(basename "$schedule") == npu*.sched ]] || continue
        for v in "${npu[@]}"; do
            # shellcheck disable=SC2086
            emit "$generator" "$schedule" npu $v
            count=$((count + 1))
        done
    done
done
errors=$(find "$out" -name '*.error' | wc -l)
echo "emitted-code.sh: $count configurations into $out ($errors with an error message)"
