#!/usr/bin/env bash
# Downloads (apt-get download: nothing is installed) into .gpu-deps/ the Debian packages that a build on the
# lent GPU machine needs and its image lacks: it has CUDA, torch, cmake and ninja but no -dev packages and no
# network (docs/benchmarks.md, "GPU workers"). scripts/gpu-check.sh unpacks them there into a private root.
# Usage: scripts/gpu-deps.sh [--no-data]
#   Run on a Debian bookworm machine that reaches its apt repositories (apt-get update once if the lists are
#   stale). Idempotent: a .deb already there at the candidate version is kept, stale versions are removed.
#   --no-data  leave out dataset-fashion-mnist (31 MB: the default data, which the GPU tests and
#              bench/gpu_hetero.sh's image folder read) and fortunes (the gpt benches' text)
#   Prints the total and fails when it exceeds MAX_MB (48: the working tree must still fit the 64 MiB that travels).
set -euo pipefail
cd "$(dirname "$0")/.."
DEST=.gpu-deps
MAX_MB=${MAX_MB:-48}

# What the top-level CMakeLists.txt, src/, apps/, tests/ and bench/ find_package or include, with the runtime
# library each -dev package's .so links to. Not here: pybind11 (the torch wheel's torch/include/pybind11 is the one
# used, src/balancenet/python/CMakeLists.txt), Python's headers (python3-dev: bookworm's is 3.11, the GPU
# machine's Python 3.12; without them the Python package alone is not built), googletest (the sources; libgtest-dev
# ships the built libraries), catch2 (a dependency of libspdlog-dev that the build never uses), and libgloo's
# libhiredis-dev/libibverbs-dev (the headers ProcessGroupGloo.hpp includes need neither; nothing links libgloo).
PACKAGES=(
  libcli11-dev                          # CLI11 (header only; CLI11::CLI11)
  libyaml-cpp-dev libyaml-cpp0.7        # yaml-cpp
  nlohmann-json3-dev                    # nlohmann_json (header only)
  libspdlog-dev libspdlog1.10           # spdlog (built against Debian's fmt 9: cmake/TorchFromPython.cmake)
  libfmt-dev libfmt9                    # fmt
  zlib1g-dev zlib1g                     # ZLIB
  libssl-dev libssl3                    # OpenSSL (the job token: comm/admission/JobToken.cpp)
  libjpeg62-turbo-dev libjpeg62-turbo   # JPEG (data/ImageDecode.cpp)
  libpng-dev libpng16-16                # PNG
  libgtest-dev libgmock-dev             # GTest (tests/), static libraries
  libbenchmark-dev libbenchmark1debian  # benchmark (bench/CMakeLists.txt)
  libgloo-dev                           # Gloo's headers for comm/group/GlooGroup.cpp
)
DATA=(dataset-fashion-mnist fortunes fortunes-min)
[ "${1:-}" = --no-data ] || PACKAGES+=("${DATA[@]}")
if [ $# -gt 0 ] && [ "$1" != --no-data ]; then
  echo "gpu-deps: unknown argument $1 (usage: scripts/gpu-deps.sh [--no-data])" >&2
  exit 2
fi

command -v apt-get >/dev/null || { echo "gpu-deps: needs apt-get (a Debian machine)" >&2; exit 2; }
grep -qx '/.gpu-deps/' .gitignore 2>/dev/null || echo '/.gpu-deps/' >> .gitignore
mkdir -p "$DEST"

# The file apt-get download writes for each package's candidate version (an epoch's ':' becomes %3a), read in one
# apt-cache call (a call costs about a second here).
declare -A NAME
read_names() {
  local pkg version arch
  while read -r pkg version arch; do
    NAME[$pkg]="${pkg}_${version//:/%3a}_${arch}.deb"
  done < <(apt-cache show --no-all-versions "${PACKAGES[@]}" 2>/dev/null |
           awk '/^Package: / {p = $2} /^Version: / {v = $2} /^Architecture: / {a = $2} /^$/ && p {print p, v, a; p = ""}
                END {if (p) print p, v, a}')
}
read_names
updated=0
refresh() {  # stale or missing package lists: once
  [ "$updated" = 0 ] || return 0
  echo "gpu-deps: apt-get update" >&2
  apt-get update -qq
  updated=1
  read_names
}
for p in "${PACKAGES[@]}"; do [ -n "${NAME[$p]:-}" ] || refresh; done

want=()
for p in "${PACKAGES[@]}"; do
  [ -n "${NAME[$p]:-}" ] || { echo "gpu-deps: no package $p in this machine's apt sources" >&2; exit 1; }
  if [ ! -s "$DEST/${NAME[$p]}" ]; then
    if ! (cd "$DEST" && apt-get download -qq "$p" >/dev/null 2>&1); then
      refresh
      (cd "$DEST" && apt-get download -qq "$p") || { echo "gpu-deps: apt-get download $p failed" >&2; exit 1; }
    fi
    [ -s "$DEST/${NAME[$p]}" ] || { echo "gpu-deps: apt-get download $p did not write $DEST/${NAME[$p]}" >&2; exit 1; }
    echo "gpu-deps: downloaded ${NAME[$p]}"
  fi
  want+=("${NAME[$p]}")
done

# Anything else in the folder (an older version, a package no longer listed) goes.
for f in "$DEST"/*.deb; do
  [ -e "$f" ] || continue
  keep=0
  for w in "${want[@]}"; do [ "$(basename "$f")" = "$w" ] && keep=1 && break; done
  [ "$keep" = 1 ] || { echo "gpu-deps: removing stale $(basename "$f")"; rm -f "$f"; }
done

bytes=$(du -cb "$DEST"/*.deb | tail -1 | cut -f1)
mb=$(awk -v b="$bytes" 'BEGIN {printf "%.1f", b / 1048576}')
echo "gpu-deps: ${#want[@]} packages in $DEST/, $mb MiB in all (limit $MAX_MB MiB)"
if awk -v b="$bytes" -v m="$MAX_MB" 'BEGIN {exit !(b > m * 1048576)}'; then
  echo "gpu-deps: $mb MiB is over $MAX_MB MiB: the tree and .gpu-deps must fit the 64 MiB that travels (try --no-data)" >&2
  exit 1
fi
