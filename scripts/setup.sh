#!/usr/bin/env bash
# Install the Debian packages Kiln needs, if any are missing.
# Idempotent and silent when everything is present; works as root or through sudo.
set -euo pipefail

packages=(cmake g++ make catch2 libpng-dev libhalide14-0-dev nlohmann-json3-dev libcli11-dev
          libopenblas-dev libdnnl-dev libopencv-core-dev libopencv-imgproc-dev)

if ! command -v dpkg-query >/dev/null 2>&1; then
    echo "setup: not a Debian-based system; make sure these are installed: ${packages[*]}" >&2
    exit 0
fi

missing=()
for p in "${packages[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing+=("$p")
    fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -eq 0 ]; then
    sudo=()
elif command -v sudo >/dev/null 2>&1; then
    sudo=(sudo)
else
    echo "setup: missing packages (${missing[*]}) and neither root nor sudo; install them and rerun" >&2
    exit 1
fi

echo "setup: installing ${missing[*]}"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
export DEBIAN_FRONTEND=noninteractive
if ! { "${sudo[@]}" apt-get update -qq && "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"; } \
    >"$log" 2>&1; then
    cat "$log" >&2
    echo "setup: apt-get failed" >&2
    exit 1
fi
