#!/usr/bin/env bash
# A small cluster on one machine: N hosts, each a network namespace with its own address on one bridge,
# its own CPU quota (a cgroup, enforced by the kernel's scheduler) and optionally a rate-shaped outgoing
# link (tc tbf). Needs root, iproute2 and the cgroup cpu controller (v1 cpu.cfs_quota_us or v2 cpu.max).
#
#   testbed.sh up N --cpu Q0,Q1,... [--rate-mbit R0,R1,...]   make N hosts (quota in cores, "none" = no cap)
#   testbed.sh run I CMD...        run CMD as host I (in its namespace and its CPU cgroup)
#   testbed.sh addr I              print host I's address
#   testbed.sh set-cpu I Q         change host I's quota while it runs
#   testbed.sh set-rate I R        change host I's outgoing rate in Mbit/s (0 = unshaped)
#   testbed.sh cut I | heal I      take host I's link down / up
#   testbed.sh throttled I         print host I's throttled time in ms (cgroup cpu.stat)
#   testbed.sh status              one line per host
#   testbed.sh down                kill every process of the testbed, remove namespaces, bridge, cgroups
#   testbed.sh check               exit 0 if this machine can run a testbed, else print why and exit 1
# Options (before or after the command): --name NAME (1-8 of a-z0-9; default bntb; several testbeds may be
# up at once under different names), --subnet A.B.C (the hosts' /24, default 10.213.0; host I is A.B.C.(I+1)).
# A failed or interrupted `up` removes what it had made, as `down` does.
set -euo pipefail

NAME=${BALANCENET_TESTBED_NAME:-bntb}
SUBNET=10.213.0
STATE_ROOT=/run/balancenet-testbed
SELF=$(readlink -f "${BASH_SOURCE[0]}")
PERIOD_US=10000 # a short CFS period: a throttled host runs in 10 ms slices, not 100 ms bursts

die() {
  echo "testbed: error: $*" >&2
  exit 1
}

args=()
while (($#)); do
  case "$1" in
    --name) NAME=${2:?--name needs a value}; shift 2 ;;
    --subnet) SUBNET=${2:?--subnet needs a value}; shift 2 ;;
    *) args+=("$1"); shift ;;
  esac
done
set -- "${args[@]+"${args[@]}"}"
[[ $NAME =~ ^[a-z0-9]{1,8}$ ]] || die "--name must be 1-8 characters of a-z0-9, not '$NAME'"
[[ $SUBNET =~ ^([0-9]{1,3})\.([0-9]{1,3})\.([0-9]{1,3})$ ]] || die "--subnet must look like 10.213.0, not '$SUBNET'"
STATE=$STATE_ROOT/$NAME
BRIDGE=$NAME-br

ns_of() { echo "$NAME-h$1"; }
veth_of() { echo "$NAME-v$1"; } # the root namespace's end of host I's link (a bridge port)
addr_of() { echo "$SUBNET.$(($1 + 1))"; }

# The cpu controller: a v2 hierarchy that offers it, else the v1 one.
cgroup_base() {
  local m
  for m in /sys/fs/cgroup /sys/fs/cgroup/unified; do
    if [ -f "$m/cgroup.controllers" ] && grep -qw cpu "$m/cgroup.controllers"; then
      echo "v2 $m"
      return
    fi
  done
  if [ -f /sys/fs/cgroup/cpu/cpu.cfs_quota_us ]; then
    echo "v1 /sys/fs/cgroup/cpu"
    return
  fi
  echo "none"
}
read -r CG_VERSION CG_MOUNT _ <<< "$(cgroup_base) - -"
CG_DIR=$CG_MOUNT/balancenet-testbed-$NAME
cg_of() { echo "$CG_DIR/h$1"; }

check() {
  [ "$(id -u)" -eq 0 ] || { echo "not root (namespaces and cgroups need root)"; return 1; }
  command -v ip >/dev/null || { echo "no 'ip' command (Debian package iproute2)"; return 1; }
  command -v tc >/dev/null || { echo "no 'tc' command (Debian package iproute2)"; return 1; }
  [ "$CG_VERSION" != none ] || { echo "no cgroup cpu controller (neither v1 cpu.cfs_quota_us nor v2 cpu.max)"; return 1; }
  local probe="bnchk$$"
  if ! ip netns add "$probe" 2>/dev/null; then
    echo "cannot create a network namespace (ip netns add failed)"
    return 1
  fi
  local ok=0
  ip link add "$probe-a" type veth peer name "$probe-b" 2>/dev/null || ok=1
  ip link del "$probe-a" 2>/dev/null || true
  ip netns del "$probe" 2>/dev/null || true
  [ $ok -eq 0 ] || { echo "cannot create a veth pair"; return 1; }
  mkdir -p "$CG_MOUNT/bnchk$$" 2>/dev/null || { echo "cannot create a cgroup under $CG_MOUNT"; return 1; }
  rmdir "$CG_MOUNT/bnchk$$"
  return 0
}

host_count() {
  [ -f "$STATE/hosts" ] || die "testbed '$NAME' is not up (run: testbed.sh up N --cpu ...)"
  cat "$STATE/hosts"
}

host_index() {
  local n
  n=$(host_count)
  [[ $1 =~ ^[0-9]+$ ]] && (($1 < n)) || die "host index must be 0..$((n - 1)), not '$1'"
}

set_cpu() { # host, quota in cores or "none"
  local cg q
  cg=$(cg_of "$1")
  q=$2
  if [ "$q" = none ]; then
    if [ "$CG_VERSION" = v2 ]; then echo "max $PERIOD_US" > "$cg/cpu.max"; else echo -1 > "$cg/cpu.cfs_quota_us"; fi
  else
    local quota period=$PERIOD_US
    quota=$(awk -v q="$q" -v p="$period" 'BEGIN { printf "%d", q * p + 0.5 }')
    if ((quota < 1000)); then # the kernel's minimum quota is 1 ms: lengthen the period instead
      period=$(awk -v q="$q" 'BEGIN { printf "%d", 1000 / q + 0.5 }')
      quota=1000
    fi
    if [ "$CG_VERSION" = v2 ]; then
      echo "$quota $period" > "$cg/cpu.max"
    else
      echo -1 > "$cg/cpu.cfs_quota_us"
      echo "$period" > "$cg/cpu.cfs_period_us"
      echo "$quota" > "$cg/cpu.cfs_quota_us"
    fi
  fi
  echo "$q" > "$STATE/cpu$1"
}

set_rate() { # host, Mbit/s (0 = unshaped)
  local ns
  ns=$(ns_of "$1")
  if [ "$2" = 0 ]; then
    ip netns exec "$ns" tc qdisc del dev eth0 root 2>/dev/null || true
  else
    # burst: 10 ms at the rate (at least 32 KiB), so the bucket is not the bottleneck of a fast link
    local burst
    burst=$(awk -v r="$2" 'BEGIN { b = r * 1e6 / 8 / 100; if (b < 32768) b = 32768; printf "%d", b }')
    ip netns exec "$ns" tc qdisc replace dev eth0 root tbf rate "${2}mbit" burst "$burst" latency 100ms
  fi
  echo "$2" > "$STATE/rate$1"
}

validate_list() { # name, count, list, pattern
  local -a items
  IFS=, read -r -a items <<< "$3"
  ((${#items[@]} == $2)) || die "$1 needs $2 values (one per host), got '$3'"
  local v
  for v in "${items[@]}"; do
    [[ $v =~ $4 ]] || die "$1: '$v' is not a valid value"
  done
}

down() {
  local i ns cg pids tries
  # Processes first: a namespace with a process in it outlives `ip netns del`, and a cgroup with one
  # cannot be removed.
  for tries in $(seq 1 50); do
    pids=""
    for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep -E "^$NAME-h[0-9]+$" || true); do
      pids+=" $(ip netns pids "$ns" 2>/dev/null | tr '\n' ' ')"
    done
    for cg in "$CG_DIR"/h*; do
      [ -f "$cg/cgroup.procs" ] && pids+=" $(tr '\n' ' ' < "$cg/cgroup.procs")"
    done
    pids=$(echo "$pids" | xargs -n1 2>/dev/null | grep -v "^$$\$" || true)
    [ -n "$pids" ] || break
    kill -KILL $pids 2>/dev/null || true
    sleep 0.1
  done
  for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep -E "^$NAME-h[0-9]+$" || true); do
    ip netns del "$ns" 2>/dev/null || true
  done
  ip link del "$BRIDGE" 2>/dev/null || true
  for i in $(ip -o link show 2>/dev/null | awk -F': ' '{print $2}' | cut -d@ -f1 | grep -E "^$NAME-v[0-9]+$" || true); do
    ip link del "$i" 2>/dev/null || true
  done
  if [ -d "$CG_DIR" ]; then
    for tries in $(seq 1 50); do
      for cg in "$CG_DIR"/h*; do [ -d "$cg" ] && rmdir "$cg" 2>/dev/null || true; done
      rmdir "$CG_DIR" 2>/dev/null && break
      sleep 0.1
    done
  fi
  rm -rf "$STATE"
  local left
  left=$(leftovers)
  [ -z "$left" ] || die "could not remove: $left"
}

leftovers() { # what of this testbed still exists, one word each
  local out=""
  out+=$(ip netns list 2>/dev/null | awk '{print $1}' | grep -E "^$NAME-h[0-9]+$" | tr '\n' ' ' || true)
  ip link show "$BRIDGE" >/dev/null 2>&1 && out+=" $BRIDGE"
  [ -d "$CG_DIR" ] && out+=" $CG_DIR"
  [ -d "$STATE" ] && out+=" $STATE"
  echo "$out" | xargs
}

# Testing: BALANCENET_TESTBED_FAIL_AT=host2 makes `up` fail when it reaches host 2;
# BALANCENET_TESTBED_PAUSE_AT=host2 makes it wait there (up to 30 s) for a signal.
fail_point() {
  if [ "${BALANCENET_TESTBED_FAIL_AT:-}" = "$1" ]; then
    echo "testbed: failing at $1 (BALANCENET_TESTBED_FAIL_AT)" >&2
    return 1
  fi
  if [ "${BALANCENET_TESTBED_PAUSE_AT:-}" = "$1" ]; then
    # Its pid is known before the message that invites the signal; it holds no pipe of the caller's.
    sleep 30 > /dev/null 2>&1 &
    PAUSE_PID=$!
    echo "testbed: pausing at $1 (BALANCENET_TESTBED_PAUSE_AT)" >&2
    wait $PAUSE_PID || true # a trapped signal interrupts `wait` at once (not a foreground `sleep`)
  fi
}

up() {
  local n=${1:-}
  shift || true
  [[ $n =~ ^[0-9]+$ ]] && ((n >= 1 && n <= 64)) || die "up needs a host count 1..64, not '$n'"
  local cpus="" rates=""
  while (($#)); do
    case "$1" in
      --cpu) cpus=${2:?--cpu needs a list}; shift 2 ;;
      --rate-mbit) rates=${2:?--rate-mbit needs a list}; shift 2 ;;
      *) die "up: unknown option '$1'" ;;
    esac
  done
  [ -n "$cpus" ] || cpus=$(printf 'none%.0s,' $(seq 1 "$n") | sed 's/,$//')
  validate_list --cpu "$n" "$cpus" '^(none|[0-9]*\.?[0-9]+)$'
  [ -z "$rates" ] || validate_list --rate-mbit "$n" "$rates" '^[0-9]*\.?[0-9]+$'
  local why
  why=$(check) || die "this machine cannot run a testbed: $why"
  [ ! -e "$STATE" ] && ! ip link show "$BRIDGE" >/dev/null 2>&1 ||
    die "testbed '$NAME' is already up (testbed.sh --name $NAME down removes it)"

  # Cleaning up ignores further signals: a second Ctrl-C must not leave half a testbed behind.
  trap 'trap - ERR; trap "" INT TERM; [ -z "${PAUSE_PID:-}" ] || kill "$PAUSE_PID" 2>/dev/null
        echo "testbed: up failed; removing what it made" >&2; down; exit 1' ERR INT TERM
  mkdir -p "$STATE"
  echo "$SUBNET" > "$STATE/subnet"
  ip link add name "$BRIDGE" type bridge
  ip link set "$BRIDGE" up
  mkdir -p "$CG_DIR"
  # The testbed's hosts get their quota first when other work on the machine wants the same cores (a
  # weight 10x a default group's): a host's speed is its quota, not whatever else runs at the moment.
  if [ "$CG_VERSION" = v2 ]; then
    grep -qw cpu "$CG_MOUNT/cgroup.subtree_control" || echo +cpu > "$CG_MOUNT/cgroup.subtree_control"
    echo +cpu > "$CG_DIR/cgroup.subtree_control"
    echo 1000 > "$CG_DIR/cpu.weight"
  else
    echo 10240 > "$CG_DIR/cpu.shares"
  fi
  local -a cpu rate
  IFS=, read -r -a cpu <<< "$cpus"
  IFS=, read -r -a rate <<< "${rates:-}"
  local i ns veth
  for ((i = 0; i < n; i++)); do
    fail_point "host$i"
    ns=$(ns_of $i)
    veth=$(veth_of $i)
    ip netns add "$ns"
    ip link add "$veth" type veth peer name "$NAME-p$i"
    ip link set "$NAME-p$i" netns "$ns"
    ip -n "$ns" link set "$NAME-p$i" name eth0
    ip -n "$ns" addr add "$(addr_of $i)/24" dev eth0
    ip -n "$ns" link set lo up
    ip -n "$ns" link set eth0 up
    ip link set "$veth" master "$BRIDGE"
    ip link set "$veth" up
    mkdir -p "$(cg_of $i)"
    echo "$n" > "$STATE/hosts" # from here on, set-cpu/set-rate know the host exists
    set_cpu $i "${cpu[$i]}"
    set_rate $i "${rate[$i]:-0}"
  done
  trap - ERR INT TERM
  echo "testbed '$NAME': $n hosts on $SUBNET.0/24 (host 0 is $(addr_of 0)); cgroup $CG_VERSION, period $PERIOD_US us"
}

status() {
  local n i
  n=$(host_count)
  for ((i = 0; i < n; i++)); do
    local state
    state=$(ip -o link show "$(veth_of $i)" | grep -q 'state UP' && echo up || echo cut)
    echo "host $i $(addr_of $i) cpu $(cat "$STATE/cpu$i") rate-mbit $(cat "$STATE/rate$i") link $state"
  done
}

throttled_ms() {
  local cg
  cg=$(cg_of "$1")
  if [ "$CG_VERSION" = v2 ]; then
    awk '/^throttled_usec/ { printf "%d\n", $2 / 1000 }' "$cg/cpu.stat"
  else
    awk '/^throttled_time/ { printf "%d\n", $2 / 1e6 }' "$cg/cpu.stat"
  fi
}

cmd=${1:-}
shift || true
case "$cmd" in
  up) up "$@" ;;
  down) down ;;
  check) check ;;
  run)
    host_index "${1:-}"
    i=$1
    shift
    (($#)) || die "run needs a command"
    # The cgroup first, then the namespace: `ip netns exec` and everything it starts inherit both.
    echo $$ > "$(cg_of "$i")/cgroup.procs"
    # `ip netns exec` mounts a fresh /sys, which hides /sys/fs/cgroup: the host's processes would not see the
    # CPU quota they run under, as a container's processes do. So, in a mount namespace of its own, the cgroup
    # mounts are bound aside first and bound back over the fresh /sys/fs/cgroup inside (_bind-cgroups).
    view=$STATE/cgroup-view
    mkdir -p "$view"
    exec unshare --mount --propagation private /bin/bash -c 'mount --rbind /sys/fs/cgroup "$1" && shift && exec "$@"' \
      _ "$view" ip netns exec "$(ns_of "$i")" /bin/bash "$SELF" _bind-cgroups "$view" "$@"
    ;;
  _bind-cgroups) # internal: run's last step, inside the host's namespaces
    view=$1
    shift
    mount --rbind "$view" /sys/fs/cgroup
    exec "$@"
    ;;
  addr) host_index "${1:-}"; addr_of "$1" ;;
  set-cpu)
    host_index "${1:-}"
    [[ ${2:-} =~ ^(none|[0-9]*\.?[0-9]+)$ ]] || die "set-cpu needs a quota in cores or 'none'"
    set_cpu "$1" "$2"
    ;;
  set-rate)
    host_index "${1:-}"
    [[ ${2:-} =~ ^[0-9]*\.?[0-9]+$ ]] || die "set-rate needs a rate in Mbit/s (0 = unshaped)"
    set_rate "$1" "$2"
    ;;
  cut) host_index "${1:-}"; ip link set "$(veth_of "$1")" down ;;
  heal) host_index "${1:-}"; ip link set "$(veth_of "$1")" up ;;
  throttled) host_index "${1:-}"; throttled_ms "$1" ;;
  status) status ;;
  leftovers) leftovers ;;
  *) die "unknown command '${cmd}' (up, run, addr, set-cpu, set-rate, cut, heal, throttled, status, down, check)" ;;
esac
