# The fortunes text for the gpt benchmarks (bench/gpt_vs_torch.sh, bench/gpt_balanced.sh): Debian's `fortunes`
# databases (about 2.5 MB of English) concatenated, their .dat indexes and .u8 links left out. Source it.

# fortunes_text FILE: writes FILE (and its folder) once, atomically; exit 77 (a skip) when the package is missing.
# FORTUNES_DIR: the databases elsewhere than /usr/share/games/fortunes (the GPU machine: .gpu-deps unpacked).
fortunes_text() {
  local dir=${FORTUNES_DIR:-/usr/share/games/fortunes}
  mkdir -p "$(dirname "$1")"
  [ -s "$1" ] && return 0
  if [ ! -d "$dir" ]; then
    echo "fortunes: skipped: $dir missing (apt-get install -y fortunes)" >&2
    exit 77
  fi
  find "$dir" -maxdepth 1 -type f ! -name '*.dat' ! -name '*.u8' -print0 | sort -z | xargs -0 cat > "$1.tmp"
  mv "$1.tmp" "$1"
}
