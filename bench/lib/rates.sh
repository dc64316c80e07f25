# Samples/s of a finished run and the load average, for the issue 27 benchmarks (bench/gpt_vs_torch.sh,
# bench/gpt_balanced.sh, bench/resnet_imagefolder.sh). Source it after bench/lib/peers.sh (PY).

# step_rate RUN_DIR WARMUP: balancenet's samples/s over rank 0's update_ms after the first WARMUP steps
# (bench/vs_ddp_summary.py's reading of steps.csv).
step_rate() {
  "$PY" -c 'import sys; sys.path.insert(0, "bench"); from vs_ddp_summary import balancenet_run
print("%.3f" % balancenet_run(sys.argv[1], int(sys.argv[2]))["samples_per_second"])' "$1" "$2"
}

# ddp_rate JSON WARMUP: bench/ddp_peer.py's samples/s over rank 0's steps after the first WARMUP.
ddp_rate() {
  "$PY" -c 'import sys; sys.path.insert(0, "bench"); from vs_ddp_summary import ddp_run
print("%.3f" % ddp_run(sys.argv[1], int(sys.argv[2]))["samples_per_second"])' "$1" "$2"
}

# The 1-minute load average now.
load1() { uptime | sed 's/.*load average: //; s/,.*//'; }

# rate_table RESULTS UNIT A/B...: RESULTS' lines "system rep rate load-before load-after" as a markdown table of
# each system's mean rate (its runs listed) and loads, then the ratio of the means of each A/B pair given.
rate_table() {
  local results=$1 unit=$2
  shift 2
  awk -v unit="$unit" -v pairs="$*" '{s[$1] += $3; n[$1]++; r[$1] = r[$1] " " $3; l[$1] = l[$1] " " $4 "/" $5
      if (!($1 in seen)) {seen[$1] = 1; order[++k] = $1}}
    END {print "| system | " unit " (runs) | load before/after |"; print "|---|---|---|"
      for (i = 1; i <= k; i++) printf "| %s | %.1f (%s) | %s |\n", order[i], s[order[i]] / n[order[i]], r[order[i]], l[order[i]]
      print ""
      m = split(pairs, p, " ")
      for (i = 1; i <= m; i++) {split(p[i], ab, "/")
        printf "%s / %s: %.2fx\n", ab[1], ab[2], (s[ab[1]] / n[ab[1]]) / (s[ab[2]] / n[ab[2]])}}' "$results"
}

# begin_results OUT WORDS...: OUT/command.txt gets "command: WORDS" (the script, its arguments and settings),
# OUT/results.txt starts empty.
begin_results() {
  local out=$1
  shift
  echo "command: $*" > "$out/command.txt"
  : > "$out/results.txt"
}
