#!/bin/sh
# Regenerates the same-run golden cases under golden/: each case is ONE fio run with
# --output-format=terse,json+,normal, split into NAME.jsonplus, NAME.txt (normal) and NAME.terse.
# Usage: sh gen.sh DIR_FOR_DATA_FILES   (a directory on a real disk, for the psync/libaio cases)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
dir=${1:-/tmp}
out="$here/golden"
mkdir -p "$out"
run() {
	name=$1; shift
	fio "$@" --output-format=terse,json+,normal > "$out/$name.all" 2>/dev/null
	# normal text: the header lines before the terse line, then everything after the JSON.
	awk '/^3;fio-/{exit} {print}' "$out/$name.all" > "$out/$name.txt"
	awk 'f{print} /^}$/{f=1}' "$out/$name.all" >> "$out/$name.txt"
	grep '^3;fio-' "$out/$name.all" > "$out/$name.terse"
	awk '/^{$/{f=1} f{print} /^}$/{exit}' "$out/$name.all" > "$out/$name.jsonplus"
	rm "$out/$name.all"
}
run null-randrw --name=x --ioengine=null --size=256m --bs=4k --rw=randrw
run null-rate-read --name=r --ioengine=null --size=6m --bs=4k --rw=read --rate=3m
run null-bs512-write --name=w --ioengine=null --size=16m --bs=512 --rw=write
run null-bs1m-kb1000 --name=k --ioengine=null --size=8g --bs=1m --rw=randread --kb_base=1000
run null-bits-rate --name=b --ioengine=null --size=20m --bs=64k --rw=randwrite --rate=10m --unit_base=1
run null-numjobs-group --name=g --ioengine=null --size=128m --bs=8k --rw=randrw --rwmixread=30 --numjobs=2 --group_reporting
run null-two-groups --ioengine=null --size=64m --bs=4k --name=a --rw=read --name=b --rw=randwrite --stonewall
run null-bsrange --name=s --ioengine=null --size=64m --bsrange=4k-64k --rw=randrw --bs_unaligned
run null-trim --name=t --ioengine=null --size=64m --bs=16k --rw=randtrim
run psync-randrw --name=p --ioengine=psync --rw=randrw --bs=4k --size=32m --filename="$dir/iolab-ref.dat" --runtime=1 --time_based
run libaio-randread --name=l --ioengine=libaio --iodepth=16 --direct=1 --rw=randread --bs=4k --size=32m --filename="$dir/iolab-ref.dat" --runtime=1 --time_based
run psync-fsync-write --name=f --ioengine=psync --rw=write --bs=4k --size=8m --fsync=8 --filename="$dir/iolab-ref.dat"
run null-numjobs-nogroup --name=n --ioengine=null --size=32m --bs=4k --rw=randread --numjobs=2
run null-desc-latpct --name=d --ioengine=null --size=32m --rw=randwrite --description=hello --lat_percentiles=1 --percentile_list=50:99.999
run null-kb1000-rate --name=q --ioengine=null --size=4m --bs=4k --rw=write --kb_base=1000 --rate=2m
run null-big-rate --name=m --ioengine=null --size=6g --bs=1m --rw=read --rate=3g
run null-thread-timed --name=h --ioengine=null --size=1g --bs=4k --rw=rw --runtime=1 --time_based --thread
run libaio-qd64-write --name=q64 --ioengine=libaio --iodepth=64 --iodepth_batch_submit=16 --direct=1 --rw=randwrite --bs=16k --size=32m --filename="$dir/iolab-ref.dat" --runtime=1 --time_based
run libaio-cmdprio --name=c --ioengine=libaio --iodepth=4 --rw=randread --bs=4k --size=8m --filename="$dir/iolab-ref.dat" --cmdprio_percentage=50 --cmdprio_class=2 --cmdprio=1
run null-no-io --name=z --ioengine=null --size=1m --nrfiles=1000 --percentile_list=50:99
rm -f "$dir/iolab-ref.dat"
