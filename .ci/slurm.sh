#!/usr/bin/env bash
# `srun -n 2 iolab run` under Slurm on this one machine: a controller and a node daemon of our
# own (config, spool and state in a temporary folder, found through SLURM_CONF, so nothing in
# /etc/slurm is touched), munge for their authentication, Open MPI's ranks started by srun
# over PMIx. Checks that the one report has both ranks and an "All clients" entry whose totals
# are their sum. Stops the daemons it started. Needs root and apt (installs slurm-wlm and
# munge when missing), and iolab built with --features mpi (IOLAB=path).
set -euo pipefail
cd "$(dirname "$0")/.."
iolab="${IOLAB:-$PWD/target/release/iolab}"
if [ "$(id -u)" != 0 ]; then
  echo "slurm: skipped: needs root"; exit 0
fi
if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq slurm-wlm munge) \
    >/dev/null 2>&1 || { echo "slurm: skipped: cannot install slurm-wlm and munge"; exit 0; }
fi
"$iolab" --version >/dev/null
work="$(mktemp -d)"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
host="$(hostname)"
mkdir -p "$work/spool" "$work/state"
export SLURM_CONF="$work/slurm.conf"
cat >"$SLURM_CONF" <<EOF
ClusterName=iolabci
SlurmctldHost=$host
SlurmctldPort=16817
SlurmdPort=16818
AuthType=auth/munge
CredType=cred/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
ReturnToService=2
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmdSpoolDir=$work/spool
StateSaveLocation=$work/state
SlurmUser=root
SchedulerType=sched/builtin
SelectType=select/cons_tres
SlurmctldLogFile=$work/slurmctld.log
SlurmdLogFile=$work/slurmd.log
MpiDefault=pmix
NodeName=$host CPUs=$(nproc) RealMemory=1000 State=UNKNOWN
PartitionName=ci Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE
EOF
if ! pgrep -x munged >/dev/null; then
  mkdir -p /run/munge && chown munge:munge /run/munge 2>/dev/null || true
  /usr/sbin/munged --force
fi
slurmctld -D >"$work/ctld.out" 2>&1 & pids+=($!)
slurmd -D >"$work/d.out" 2>&1 & pids+=($!)
for _ in $(seq 1 50); do
  sinfo -h -o %T 2>/dev/null | grep -q idle && break
  sleep 0.2
done
if ! sinfo -h -o %T 2>/dev/null | grep -q idle; then
  echo "slurm: the node did not come up:"; tail -5 "$work"/*.log "$work"/*.out; exit 1
fi
printf '[a]\nioengine=null\nsize=64m\nrw=randread\n' >"$work/j.fio"
(cd "$work" && timeout 120 srun -n 2 -O "$iolab" run j.fio --output-format=json) >"$work/out.json"
python3 - "$work/out.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
e = d["client_stats"]
ranks = sorted(x["rank"] for x in e if x["jobname"] != "All clients")
assert ranks == [0, 1], ranks
allc = [x for x in e if x["jobname"] == "All clients"]
assert len(allc) == 1, allc
total = sum(x["read"]["total_ios"] for x in e if x["jobname"] != "All clients")
assert allc[0]["read"]["total_ios"] == total, (allc[0]["read"]["total_ios"], total)
print(f"slurm: ok: srun -n 2 gave ranks {ranks}, All clients {total} I/Os = their sum")
EOF
