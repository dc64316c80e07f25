#!/usr/bin/env bash
# The README's chart: samples/s of each framework's own DDP and of balancenet's integration on unequal workers (H1:
# four workers, one four times slower), from bench/frameworks_vs_ddp.sh's OUT/frameworks_vs_ddp.json, drawn by
# gnuplot (Debian's gnuplot-nox) into PNG.
# Usage: bench/frameworks_chart.sh OUT [docs/img/frameworks_h1.png]
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=$1
PNG=${2:-docs/img/frameworks_h1.png}
. bench/lib/peers.sh  # PY
data=$(mktemp)
trap 'rm -f "$data"' EXIT
"$PY" - "$OUT/frameworks_vs_ddp.json" > "$data" <<'PY'
import json, sys
names = {"torch": "your DDP script", "lightning": "Lightning", "transformers": "HF Trainer", "accelerate": "Accelerate"}
h1 = json.load(open(sys.argv[1]))["h1"]
for key in ("torch", "lightning", "transformers", "accelerate"):
    if key in h1:
        rate = h1[key]["samples_per_second"]
        print(f'"{names[key]}" {rate["ddp"]:.1f} {rate["balanced"]:.1f} {h1[key]["ratio"]:.2f}')
PY
gnuplot <<GP
set terminal pngcairo size 900,380 font "sans,11"
set output "$PNG.tmp"
set title "4 workers, one 4x slower: samples/s, DDP vs balancenet (same model, data and steps)"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set ylabel "samples/s"
set yrange [0:*]
set offsets 0, 0, 40, 0
set grid ytics
set key below horizontal
plot "$data" using 2:xtic(1) title "framework's own DDP" lc rgb "#9a9a9a", \
     "" using 3 title "balancenet" lc rgb "#e69f00", \
     "" using (\$0 + 0.18):(\$3 + 14):(sprintf("%.2fx", \$4)) with labels notitle
GP
mv "$PNG.tmp" "$PNG"
echo "$PNG"
