#!/usr/bin/env bash
# The GPU check (issue 43), run ON a lent GPU machine from the repository root: builds balancenet against that
# machine's CUDA torch with the Debian packages of .gpu-deps/ (scripts/gpu-deps.sh, run beforehand where apt
# works), runs the tests labelled gpu, then the GPU benchmarks, and prints one table of it all.
# Usage: scripts/gpu-check.sh [--configure-only | --tests-only | --benches-only]
#   --configure-only  unpack and configure only (works without a GPU: a dry run of the setup)
#   --tests-only      no benchmarks; --benches-only: builds balancenet alone and runs the benchmarks, no ctest
#   Phases, each under `timeout`: unpack the .debs (dpkg -x) into BN_ROOT, configure BN_BUILD (Ninja, Release,
#   -DBALANCENET_PYTHON), build (all cores: balancenet, the GPU plugin, the gpu tests' binaries; BN_BUILD_ALL=1:
#   everything), `ctest -L gpu`, bench/gpu_hetero.sh, bench/gpu_mixed.sh, bench/gpu_overhead.sh. A failed phase
#   prints one 'gpu-check: FAILED: ...' line, the later phases that can still run run, and the table comes last.
#   A second call reuses BN_BUILD (incremental), e.g. --benches-only right after --tests-only on a warm machine.
# Environment: BN_PYTHON (default: python3 if it has torch, else .venv/bin/python), BN_ROOT (/tmp/bn-root),
#   BN_BUILD (/tmp/bn-gpu-build), BN_DEPS (.gpu-deps), BN_JOBS (nproc), BN_DEADLINE (440 s for the whole script;
#   every phase's budget is cut to what is left), OUT (when set: the table, the logs and runs.tar.gz are copied
#   there, 8 files at most, as the device tool brings them back).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
SRC=$PWD

MODE=all
for arg in "$@"; do
  case $arg in
    --configure-only) MODE=configure ;;
    --tests-only) MODE=tests ;;
    --benches-only) MODE=benches ;;
    -h | --help) awk 'NR > 1 && /^#/ {sub(/^# ?/, ""); print; next} NR > 1 {exit}' "$0"; exit 0 ;;
    *) echo "gpu-check: unknown argument $arg (--configure-only, --tests-only, --benches-only)" >&2; exit 2 ;;
  esac
done

ROOT=${BN_ROOT:-/tmp/bn-root}
BUILD=${BN_BUILD:-/tmp/bn-gpu-build}
DEPS=${BN_DEPS:-$SRC/.gpu-deps}
JOBS=${BN_JOBS:-$(nproc)}
DEADLINE=${BN_DEADLINE:-440}
STATE=/tmp/bn-gpu-check  # this run's logs and results (copied to $OUT at the end)
ARCH=x86_64-linux-gnu
if [ -n "${BN_PYTHON:-}" ]; then
  PY=$BN_PYTHON
elif python3 -c 'import torch' 2>/dev/null; then
  PY=$(command -v python3)
else
  PY=$SRC/.venv/bin/python
fi
START=$SECONDS
FAILED=()

rm -rf "$STATE"
mkdir -p "$STATE"
PHASES=$STATE/phases.tsv
: > "$PHASES"
SETUP_LOG=$STATE/setup.log

say() { echo "gpu-check: $*" | tee -a "$SETUP_LOG" >&2; }
record() { printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" >> "$PHASES"; }
fail() {
  FAILED+=("$1")
  echo "gpu-check: FAILED: $1: $2" >&2
}
# budget WANT: WANT seconds, or less when the deadline is nearer (20 s kept for the table and the copies).
budget() {
  local left=$((DEADLINE - (SECONDS - START) - 20))
  ((left < $1)) && echo "$left" || echo "$1"
}

# run_phase NAME LOG WANT COMMAND...: COMMAND under timeout (its process group is stopped at the budget), its
# output appended to LOG; recorded as ok, failed (exit N), timeout, skip (exit 77) or noflag (exit 3, a bench
# whose balancenet lacks a flag). Returns COMMAND's status (99: not started, no time left).
run_phase() {
  local name=$1 log=$2 want=$3 t t0 rc=0 took
  shift 3
  t=$(budget "$want")
  if ((t < 10)); then
    record "$name" skipped 0 "no time left (BN_DEADLINE=$DEADLINE)"
    echo "gpu-check: $name not started: out of time" >&2
    return 99
  fi
  t0=$SECONDS
  echo "gpu-check: $name (at most $t s; log $(basename "$log"))" >&2
  echo "=== $name: $* (at most $t s)" >> "$log"
  timeout -k 10 "$t" "$@" >> "$log" 2>&1 || rc=$?
  took=$((SECONDS - t0))
  case $rc in
    0) record "$name" ok "$took" "" ;;
    124 | 137) record "$name" timeout "$took" "stopped at its $t s budget"
               fail "$name" "stopped at its $t s budget (log $(basename "$log"))" ;;
    77) record "$name" skip "$took" "$(grep -m1 'skipped' "$log" | cut -c1-150)" ;;
    3) record "$name" noflag "$took" "$(grep -m1 'lacks' "$log" | cut -c1-150)"
       fail "$name" "$(grep -m1 'lacks' "$log")" ;;
    *) record "$name" failed "$took" "exit $rc"
       fail "$name" "exit $rc after $took s (log $(basename "$log"))" ;;
  esac
  return $rc
}

# The table (bench/gpu_summary.py check) and the copies to $OUT, whatever happened.
finish() {
  local py=$PY
  # An MPS daemon bench/gpu_hetero.sh could not stop (it was killed): stopped here.
  if [ -S /tmp/bn-mps/pipe/control ] && command -v nvidia-cuda-mps-control > /dev/null; then
    echo quit | CUDA_MPS_PIPE_DIRECTORY=/tmp/bn-mps/pipe timeout 10 nvidia-cuda-mps-control > /dev/null 2>&1 || true
  fi
  "$py" -c '' 2>/dev/null || py=python3
  "$py" "$SRC/bench/gpu_summary.py" check "$STATE" > "$STATE/summary.md" 2> "$STATE/summary.err" \
    || echo "gpu-check: the table could not be made: $(tail -1 "$STATE/summary.err")" >> "$STATE/summary.md"
  echo >&2
  cat "$STATE/summary.md"
  if [ -n "${OUT:-}" ]; then
    mkdir -p "$OUT"
    for f in summary.md setup.log build.log ctest.log bench-hetero.log bench-mixed.log bench-overhead.log; do
      [ -s "$STATE/$f" ] && cp "$STATE/$f" "$OUT/$f"
    done
    # Everything else (phases, the JUnit file, each bench's runs without their data) in one archive.
    tar -C "$STATE" -czf "$OUT/runs.tar.gz" --exclude='fashion-folder*' --exclude='*.txt.tmp' \
      --exclude='fortunes.txt' --exclude='data-cache' . 2>/dev/null
  fi
  if ((${#FAILED[@]})); then
    echo "gpu-check: FAILED: ${FAILED[*]} (after $((SECONDS - START)) s)"
    exit 1
  fi
  echo "gpu-check: every phase passed (after $((SECONDS - START)) s)"
  exit 0
}

# --- the machine -------------------------------------------------------------------------------------------
GPU=""
if command -v nvidia-smi >/dev/null 2>&1; then
  GPU=$(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>/dev/null | head -1)
fi
if [ -n "$GPU" ]; then
  say "GPU: $GPU"
  record gpu ok 0 "$GPU"
else
  say "GPU: none (nvidia-smi missing or found no GPU)"
  record gpu none 0 "no GPU: nvidia-smi missing or found none"
fi
say "$(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo), python $PY"
tool() { command -v "$1" > /dev/null && "$@" 2>&1 | head -1 || echo none; }
say "c++: $(tool c++ --version), cmake: $(tool cmake --version), ninja: $(tool ninja --version)"
for t in c++ cmake ninja; do
  command -v "$t" > /dev/null || { record "$t" failed 0 "no $t on this machine"; fail "$t" "no $t on PATH"; finish; }
done
if ! "$PY" -c 'import torch; print("torch", torch.__version__, "CUDA", torch.version.cuda, "GPUs", torch.cuda.device_count())' >> "$SETUP_LOG" 2>&1; then
  record python failed 0 "$PY cannot import torch"
  fail python "$PY cannot import torch (set BN_PYTHON)"
  finish
fi
tail -1 "$SETUP_LOG" >&2

# --- unpack ------------------------------------------------------------------------------------------------
# Every .deb into a private root (never /), then: absolute symlinks (zlib1g-dev's libz.so -> /lib/...) and the
# absolute /usr paths of CMake and pkg-config files pointed into it; a folder of the runtime libraries this
# machine lacks (LD_LIBRARY_PATH: only those, so python and torch keep the system's zlib and OpenSSL).
unpack() {
  local debs=("$DEPS"/*.deb) deb link target name
  [ -e "${debs[0]}" ] || { echo "no .deb in $DEPS (run scripts/gpu-deps.sh where apt works, carry .gpu-deps)"; return 1; }
  # The same .debs as last time (a second call on a warm machine): kept as they are, so nothing built looks stale.
  local stamp
  stamp=$(find "$DEPS" -maxdepth 1 -name '*.deb' -printf '%s %f\n' | sort)
  if [ -f "$ROOT/.debs" ] && [ "$(cat "$ROOT/.debs")" = "$stamp" ]; then
    echo "unpacked ${#debs[@]} packages into $ROOT already (the same .debs)"
    echo "runtime libraries this machine lacks (LD_LIBRARY_PATH): $(cd "$ROOT/runtime-lib" && echo * | sed 's/^\*$/none/')"
    return 0
  fi
  rm -rf "$ROOT"
  mkdir -p "$ROOT"
  for deb in "${debs[@]}"; do
    if command -v dpkg-deb >/dev/null; then
      dpkg-deb -x "$deb" "$ROOT" || return 1
    else  # no dpkg: the ar archive's data.tar.* by hand
      "$PY" - "$deb" "$ROOT" <<'PY' || return 1
import io, sys, tarfile
data = open(sys.argv[1], "rb").read()
assert data[:8] == b"!<arch>\n", "not a .deb"
at = 8
while at < len(data):
    name, size = data[at:at + 16].decode().strip().rstrip("/"), int(data[at + 48:at + 58])
    if name.startswith("data.tar"):
        archive = tarfile.open(fileobj=io.BytesIO(data[at + 60:at + 60 + size]))
        try:
            archive.extractall(sys.argv[2], filter="tar")
        except TypeError:  # a Python before extraction filters
            archive.extractall(sys.argv[2])
    at += 60 + size + (size & 1)
PY
    fi
  done
  echo "unpacked ${#debs[@]} packages into $ROOT ($(du -sh "$ROOT" | cut -f1))"
  while IFS= read -r -d '' link; do
    target=$(readlink "$link")
    ln -sfn "$ROOT$target" "$link"
  done < <(find "$ROOT" -type l -lname '/*' -print0)
  grep -rlZ --include='*.cmake' --include='*.pc' -e '/usr' "$ROOT/usr" 2>/dev/null |
    xargs -0 -r sed -i -e "s#\"/usr/#\"$ROOT/usr/#g" -e "s#\"/usr\"#\"$ROOT/usr\"#g" \
                       -e "s#^prefix=/usr\$#prefix=$ROOT/usr#" -e "s#=/usr/#=$ROOT/usr/#"
  mkdir -p "$ROOT/runtime-lib"
  local known lib
  known=$( (ldconfig -p 2>/dev/null || /sbin/ldconfig -p 2>/dev/null) | awk '{print $1}' | sort -u)
  for lib in "$ROOT/usr/lib/$ARCH"/lib*.so.* "$ROOT/lib/$ARCH"/lib*.so.*; do
    [ -e "$lib" ] || continue
    # The name the loader asks for: the library's SONAME; where readelf is missing, every name it has.
    name=""
    if command -v readelf >/dev/null; then
      [ -L "$lib" ] && continue
      name=$(readelf -d "$lib" 2>/dev/null | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
    fi
    [ -n "$name" ] || name=$(basename "$lib")
    grep -qxF "$name" <<< "$known" || ln -sfn "$(readlink -f "$lib")" "$ROOT/runtime-lib/$name"
  done
  echo "runtime libraries this machine lacks (LD_LIBRARY_PATH): $(cd "$ROOT/runtime-lib" && echo * | sed 's/^\*$/none/')"
  echo "$stamp" > "$ROOT/.debs"
  # The default data (balancenet's /usr/share/datasets/fashion-mnist) where the machine has none: a link, the
  # only thing written outside the private root (BN_NO_DATA_LINK=1: not even that).
  local data=/usr/share/datasets/fashion-mnist
  if [ -d "$ROOT$data" ] && [ ! -e "$data" ] && [ "${BN_NO_DATA_LINK:-0}" != 1 ]; then
    if mkdir -p "$(dirname "$data")" 2>/dev/null && ln -s "$ROOT$data" "$data" 2>/dev/null; then
      echo "linked $data -> $ROOT$data (the default data of balancenet train)"
    else
      echo "could not link $data (not root?): tests on the default data will miss it"
    fi
  fi
}
t0=$SECONDS
if unpack >> "$SETUP_LOG" 2>&1; then
  record unpack ok $((SECONDS - t0)) "$(grep -m1 '^unpacked' "$SETUP_LOG")"
  grep -E '^(unpacked|runtime|linked|could not)' "$SETUP_LOG" | sed 's/^/gpu-check: /' >&2
else
  record unpack failed $((SECONDS - t0)) "$(tail -1 "$SETUP_LOG")"
  fail unpack "$(tail -1 "$SETUP_LOG")"
  finish
fi
export LD_LIBRARY_PATH="$ROOT/runtime-lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PKG_CONFIG_LIBDIR="$ROOT/usr/lib/$ARCH/pkgconfig:$ROOT/usr/share/pkgconfig"

# --- configure ---------------------------------------------------------------------------------------------
# The unpacked prefix first (CMAKE_PREFIX_PATH and the <Pkg>_ROOT hints are searched before the system's
# directories), its headers as -isystem after torch's (where /usr/include would be, but ahead of this machine's
# own /usr/include); cmake/TorchFromPython.cmake's folder of links to Debian's fmt and spdlog headers made
# beforehand so that it points into the root (it links /usr/include/{fmt,spdlog} only when the links are missing).
mkdir -p "$BUILD/debian-include"
for dir in fmt spdlog; do ln -sfn "$ROOT/usr/include/$dir" "$BUILD/debian-include/$dir"; done
LINK="-Wl,-rpath-link,$ROOT/usr/lib/$ARCH:$ROOT/lib/$ARCH"
CONFIGURE=(cmake -S "$SRC" -B "$BUILD" -G Ninja -DBALANCENET_PYTHON="$PY" -DCMAKE_BUILD_TYPE=Release
  -DCMAKE_PREFIX_PATH="$ROOT/usr"
  -DCMAKE_LIBRARY_PATH="$ROOT/usr/lib/$ARCH;$ROOT/lib/$ARCH" -DCMAKE_INCLUDE_PATH="$ROOT/usr/include"
  -DOPENSSL_ROOT_DIR="$ROOT/usr" -DZLIB_ROOT="$ROOT/usr" -DJPEG_ROOT="$ROOT/usr" -DPNG_ROOT="$ROOT/usr"
  -DCMAKE_CXX_FLAGS="-isystem $ROOT/usr/include"
  -DCMAKE_EXE_LINKER_FLAGS="$LINK" -DCMAKE_SHARED_LINKER_FLAGS="$LINK" -DCMAKE_MODULE_LINKER_FLAGS="$LINK")
# Which copy each dependency came from (CMakeCache.txt).
DEP_KEYS='^((CLI11|nlohmann_json|yaml-cpp|spdlog|fmt|GTest|benchmark)_DIR|ZLIB_LIBRARY_RELEASE|ZLIB_INCLUDE_DIR|OPENSSL_CRYPTO_LIBRARY|OPENSSL_INCLUDE_DIR|JPEG_LIBRARY_RELEASE|JPEG_INCLUDE_DIR|PNG_LIBRARY_RELEASE|PNG_PNG_INCLUDE_DIR):'
found_paths() {
  local cache=$BUILD/CMakeCache.txt outside
  echo "--- found (CMakeCache.txt):"
  grep -E "$DEP_KEYS|^(Torch_DIR|BALANCENET_NCCL_INCLUDE|BALANCENET_PYTHON|CMAKE_CXX_COMPILER):" "$cache"
  echo "debian-include: fmt -> $(readlink "$BUILD/debian-include/fmt"), spdlog -> $(readlink "$BUILD/debian-include/spdlog")"
  outside=$(grep -E "$DEP_KEYS" "$cache" | grep -v "=$ROOT/" | cut -d: -f1 | tr '\n' ' ')
  if [ -n "$outside" ]; then
    echo "deps: found outside $ROOT: $outside"
  else
    echo "deps: all $(grep -cE "$DEP_KEYS" "$cache") Debian dependency paths found in $ROOT"
  fi
}
if run_phase configure "$SETUP_LOG" 150 "${CONFIGURE[@]}"; then
  found_paths >> "$SETUP_LOG"
  deps=$(grep -m1 '^deps: ' "$SETUP_LOG" | cut -d' ' -f2-)
  plugin=$(grep -m1 -E 'balancenet: (GPU plugin|no GPU plugin)' "$SETUP_LOG" | sed 's/^-- balancenet: //')
  record deps ok 0 "$deps"
  record plugin "$(grep -q '^GPU plugin' <<< "$plugin" && echo ok || echo none)" 0 "${plugin:-no line about the GPU plugin}"
  echo "gpu-check: deps: $deps" >&2
  echo "gpu-check: ${plugin:-no line about the GPU plugin}" >&2
else
  grep -m5 -E 'CMake Error|Could NOT find|not found' "$SETUP_LOG" | sed 's/^/gpu-check:   /' >&2
  finish
fi

# --- build ---------------------------------------------------------------------------------------------------
# balancenet and the GPU plugin first (the benchmarks need no more), then what the gpu tests run: every file of
# the build tree that `ctest -L gpu` names, and the Python package when a test reads it.
# (Read from the CTestTestfile.cmake files: before the build, ctest -N cannot resolve a command not built yet.)
mapfile -t GPU_TESTS < <("$PY" - "$BUILD" <<'PY'
import os, re, sys
build = sys.argv[1].rstrip("/") + "/"
name = r"(\[=*\[.*?\]=*\]|\S+)"
commands, labels, props = {}, {}, {}
for folder, _, files in os.walk(build):
    if "CTestTestfile.cmake" not in files:
        continue
    for line in open(os.path.join(folder, "CTestTestfile.cmake"), errors="replace"):
        m = re.match(r"add_test\(" + name + r" (.*)\)\s*$", line)
        if m:
            commands[m.group(1)] = re.findall(r'"((?:[^"\\]|\\.)*)"', m.group(2))
            continue
        m = re.match(r"set_tests_properties\(" + name + r" PROPERTIES (.*)\)\s*$", line)
        if m:
            props[m.group(1)] = m.group(2)
            found = re.search(r'LABELS "([^"]*)"', m.group(2))
            labels[m.group(1)] = found.group(1).split(";") if found else []
for test, words in sorted(commands.items()):
    if "gpu" not in labels.get(test, []):
        continue
    need = {os.path.relpath(w, build) for w in words if w.startswith(build)}
    if build + "python" in props.get(test, ""):
        need.add("balancenet_python")
    print("test " + test.strip("[]="))
    for target in sorted(need):
        print("target " + target)
PY
)
TEST_TARGETS=()
GPU_TEST_COUNT=0
for line in "${GPU_TESTS[@]}"; do
  case $line in
    "test "*) GPU_TEST_COUNT=$((GPU_TEST_COUNT + 1)) ;;
    "target "*) TEST_TARGETS+=("${line#target }") ;;
  esac
done
echo "gpu tests: $GPU_TEST_COUNT (${GPU_TESTS[*]})" >> "$SETUP_LOG"
APP_TARGETS=(balancenet)
targets=$(ninja -C "$BUILD" -t targets all 2>/dev/null)
grep -q '^balancenet_cuda:' <<< "$targets" && APP_TARGETS+=(balancenet_cuda)
BUILDABLE=()
while read -r t; do
  [ -n "$t" ] || continue
  if grep -q "^$t:" <<< "$targets" || ninja -C "$BUILD" -t query "$t" > /dev/null 2>&1; then BUILDABLE+=("$t"); fi
done < <(printf '%s\n' "${TEST_TARGETS[@]}" | sort -u)
say "build: ${APP_TARGETS[*]}; then for the $GPU_TEST_COUNT gpu tests: ${BUILDABLE[*]:-nothing}"
record targets ok 0 "${APP_TARGETS[*]}; gpu tests ($GPU_TEST_COUNT): ${BUILDABLE[*]:-none}"
[ "$MODE" = configure ] && finish
BUILD_LOG=$STATE/build.log
run_phase build "$BUILD_LOG" 300 ninja -C "$BUILD" -j "$JOBS" "${APP_TARGETS[@]}"
built_app=$?
[ "$built_app" = 0 ] || grep -m5 -E 'error|FAILED' "$BUILD_LOG" | cut -c1-300 | sed 's/^/gpu-check:   /' >&2
if [ "$MODE" != benches ]; then
  if [ "${BN_BUILD_ALL:-0}" = 1 ]; then
    run_phase build-tests "$BUILD_LOG" 300 ninja -C "$BUILD" -j "$JOBS" ||
      grep -m5 -E 'error|FAILED' "$BUILD_LOG" | cut -c1-300 | sed 's/^/gpu-check:   /' >&2
  elif ((${#BUILDABLE[@]})); then
    run_phase build-tests "$BUILD_LOG" 300 ninja -C "$BUILD" -j "$JOBS" "${BUILDABLE[@]}" ||
      grep -m5 -E 'error|FAILED' "$BUILD_LOG" | cut -c1-300 | sed 's/^/gpu-check:   /' >&2
  fi
fi

# --- tests -------------------------------------------------------------------------------------------------
if [ "$MODE" != benches ]; then
  if [ "$GPU_TEST_COUNT" = 0 ]; then
    record ctest none 0 "no test carries the label gpu"
    fail ctest "no test carries the label gpu (ctest -N -L gpu)"
  else
    run_phase ctest "$STATE/ctest.log" 180 ctest --test-dir "$BUILD" -L '^gpu$' --output-on-failure --timeout 150 \
      -j "${BN_TEST_JOBS:-4}" --output-junit "$STATE/ctest.xml"
  fi
fi

# --- benchmarks --------------------------------------------------------------------------------------------
if [ "$MODE" != tests ]; then
  if [ -z "$GPU" ]; then
    for b in hetero mixed overhead; do record "bench-$b" skip 0 "no GPU"; done
  elif [ "$built_app" != 0 ]; then
    for b in hetero mixed overhead; do record "bench-$b" skipped 0 "balancenet not built"; done
  else
    for b in hetero:150 mixed:130 overhead:70; do
      name=${b%%:*}
      run_phase "bench-$name" "$STATE/bench-$name.log" "${b##*:}" \
        env BN="$BUILD/apps/balancenet" BALANCENET_PYTHON="$PY" BN_ROOT="$ROOT" bench/gpu_"$name".sh "$STATE/$name"
    done
  fi
fi
finish
