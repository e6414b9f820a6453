#!/usr/bin/env bash
# Two hosts on one machine: `mpirun --host A,B -np 2 iolab run` across two network namespaces,
# each with its own host name (UTS namespace) and address behind a bridge in a third
# namespace; Open MPI reaches the second "host" through an rsh agent that enters its
# namespace instead of ssh. Checks that the one report names both hosts and that the
# "All clients" totals are the sum of the two. Touches only the namespaces it makes.
# Needs root, ip, unshare, mpirun and iolab built with --features mpi (IOLAB=path).
set -euo pipefail
cd "$(dirname "$0")/.."
iolab="${IOLAB:-$PWD/target/release/iolab}"
if [ "$(id -u)" != 0 ] || ! command -v ip >/dev/null || ! command -v mpirun >/dev/null; then
  echo "mpi-two-hosts: skipped: needs root, ip and mpirun"; exit 0
fi
"$iolab" --version >/dev/null
tag="iolab$$"
h1="${tag}a" h2="${tag}b" br="${tag}br"
a1=10.231.77.1 a2=10.231.77.2
work="$(mktemp -d)"
cleanup() {
  for ns in "$h1" "$h2" "$br"; do ip netns del "$ns" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
for ns in "$h1" "$h2" "$br"; do ip netns add "$ns"; ip -n "$ns" link set lo up; done
ip -n "$br" link add br0 type bridge
ip -n "$br" link set br0 up
i=0
for pair in "$h1:$a1" "$h2:$a2"; do
  ns="${pair%%:*}" addr="${pair#*:}"
  i=$((i + 1))
  ip link add "v${tag}$i" netns "$ns" type veth peer name "p$i" netns "$br"
  ip -n "$ns" link set "v${tag}$i" name eth0
  ip -n "$ns" addr add "$addr/24" dev eth0
  ip -n "$ns" link set eth0 up
  ip -n "$br" link set "p$i" master br0
  ip -n "$br" link set "p$i" up
done

# The rsh agent: Open MPI calls it as `agent HOST COMMAND...`, as it would call ssh.
cat >"$work/agent" <<AGENT
#!/bin/sh
host="\$1"; shift
case "\$host" in
  $a1) ns=$h1 name=node-a ;;
  $a2) ns=$h2 name=node-b ;;
  *) echo "agent: unknown host \$host" >&2; exit 1 ;;
esac
exec ip netns exec "\$ns" unshare --uts sh -c "hostname \$name; \$*"
AGENT
chmod +x "$work/agent"
cat >"$work/j.fio" <<'JOB'
[global]
ioengine=psync
size=4m
bs=4k
[a]
rw=randread
JOB
cd "$work"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
ip netns exec "$h1" unshare --uts sh -c "hostname node-a; exec timeout 120 mpirun \
  --mca plm_rsh_agent $work/agent --mca oob_tcp_if_include 10.231.77.0/24 \
  --mca btl tcp,self --mca btl_tcp_if_include 10.231.77.0/24 \
  --host $a1,$a2 -np 2 $iolab run j.fio --output-format=json+" >out.json 2>err.txt || {
  cat err.txt; exit 1; }
python3 - <<'CHECK'
import json
d = json.load(open("out.json"))
c = d["client_stats"]
hosts = sorted(e["hostname"] for e in c if e["jobname"] != "All clients")
assert hosts == ["node-a", "node-b"], hosts
alls = [e for e in c if e["jobname"] == "All clients"]
assert len(alls) == 1, len(alls)
s = sum(e["read"]["total_ios"] for e in c if e["jobname"] != "All clients")
assert alls[0]["read"]["total_ios"] == s == 2048, (alls[0]["read"]["total_ios"], s)
print("mpi-two-hosts: ok: one report from", ", ".join(hosts), "with", s, "reads in All clients")
CHECK
ls node-a.0.a.0.0 node-b.1.a.0.0 >/dev/null
