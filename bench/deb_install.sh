#!/usr/bin/env bash
# Installing the .deb (docs/benchmarks.md, "Installing the .deb"): builds the package (scripts/package.sh),
# reports its size, then REPS times: `apt-get install ./balancenet_*.deb`, and from there the default job
# (cnn on Fashion-MNIST, 2 workers) started from /usr/bin/balancenet up to its first step's progress line;
# `apt-get remove` between repetitions. Root; every dependency already installed (scripts/setup.sh), no network.
# Usage: bench/deb_install.sh [out-dir]     REPS=n (default 3), BUILD_DIR (default build)
# Leaves the machine as found: balancenet installed before, installed after; else removed.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-runs/deb_install/$(date +%Y%m%d-%H%M%S)}
REPS=${REPS:-3}
BUILD_DIR=${BUILD_DIR:-build}
[ "$(id -u)" -eq 0 ] || { echo "deb_install: needs root (apt-get)" >&2; exit 2; }
mkdir -p "$OUT"
APT=(env DEBIAN_FRONTEND=noninteractive apt-get -y -q -o DPkg::Lock::Timeout=120)
seconds() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }

start=$EPOCHREALTIME
deb=$(PACKAGE_DIR="$OUT/package" BUILD_DIR="$BUILD_DIR" scripts/package.sh)
package_s=$(seconds "$start" "$EPOCHREALTIME")
deb=$(realpath "$deb")
size=$(stat -c %s "$deb")
installed_kb=$(dpkg-deb --field "$deb" Installed-Size)
was_installed=0
dpkg-query -W -f='${Status}' balancenet 2>/dev/null | grep -q "install ok installed" && was_installed=1
"${APT[@]}" remove balancenet >/dev/null 2>&1 || true
restore() {
  if ((was_installed)); then "${APT[@]}" install "$deb"; else "${APT[@]}" remove balancenet; fi >/dev/null 2>&1
}
trap restore EXIT

# Seconds from $1 (an $EPOCHREALTIME) to the line "step 1/" of the job's output, printed when its first step ends
# (the program: BIN, default /usr/bin/balancenet).
first_step_after() {
  local t0=$1 line
  "${BIN:-/usr/bin/balancenet}" train --workers 2 --steps 3 --progress-seconds 0.001 --run-dir "$OUT/run-$rep" 2>&1 |
    while IFS= read -r line; do
      echo "$line" >>"$OUT/job-$rep.log"
      if [[ $line == *"step 1/"* ]]; then seconds "$t0" "$EPOCHREALTIME"; fi
    done
}

echo "package: $deb ($size bytes, installed $installed_kb KiB), scripts/package.sh ${package_s} s" |
  tee "$OUT/summary.txt"
echo "rep install_s first_step_after_install_s install_to_first_step_s" | tee -a "$OUT/summary.txt"
for ((rep = 1; rep <= REPS; rep++)); do
  t0=$EPOCHREALTIME
  "${APT[@]}" install "$deb" >"$OUT/apt-$rep.log" 2>&1
  t1=$EPOCHREALTIME
  first=$(first_step_after "$t1")
  [ -n "$first" ] || { echo "deb_install: no first step (see $OUT/job-$rep.log)" >&2; exit 1; }
  install=$(seconds "$t0" "$t1")
  echo "$rep $install $first $(awk -v a="$install" -v b="$first" 'BEGIN { printf "%.2f", a + b }')" |
    tee -a "$OUT/summary.txt"
  "${APT[@]}" remove balancenet >/dev/null 2>&1
done
# The same job from the build tree, for scale: the part of the wait that is the program's own start.
rep=built
start=$EPOCHREALTIME
echo "built program ($BUILD_DIR/apps/balancenet), first step after start: $(BIN="$BUILD_DIR/apps/balancenet" \
  first_step_after "$start") s" | tee -a "$OUT/summary.txt"
echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$OUT/summary.txt"
