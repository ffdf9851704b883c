#!/bin/bash
# kpart --dry-run: what a partition and a kbfs run will need, from a scale
# and a grid or from an edge file's header, on any machine (no GPU, nothing
# built): upper estimates that hold against the partitions kpart builds.
. "$(dirname "$0")/lib.sh"
need_python
# jget FILE KEY: a number from a JSON object
jget() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])" "$1" "$2"; }

kgen -s 14 -o "$T/g14.kg"
for g in 1x1 2x2 1x4 4x2; do
	R=${g%x*} C=${g#*x}
	kpart --dry-run --json -s 14 -R "$R" -C "$C" >"$T/est.json" 2>"$T/err"
	kpart -q -R "$R" -C "$C" -o "$T/p$g" "$T/g14.kg"
	kstat --json "$T/p$g" >"$T/real.json"
	est=$(jget "$T/est.json" device_bytes_max) real=$(jget "$T/real.json" device_bytes_max)
	ok "scale 14 $g: device memory estimate $est >= the partition's $real, within 1.5x" \
		test "$est" -ge "$real" -a "$((est * 2))" -le "$((real * 3))"
	bytes=$(du -b "$T/p$g"/rank-*.kpart | sort -n | tail -1 | cut -f1)
	est=$(jget "$T/est.json" rank_file_bytes_max)
	ok "scale 14 $g: rank file estimate $est >= the largest built ($bytes), within 1.5x" \
		test "$est" -ge "$bytes" -a "$((est * 2))" -le "$((bytes * 3))"
done
# host memory: the estimate holds against kbfs --dry-run's plan (CPU engine)
# of the busiest rank of the built partition
bytes_of() { awk '{u = $2; m = u == "B" ? 1 : u == "KiB" ? 1024 : u == "MiB" ? 1048576 : u == "GiB" ? 1073741824 : -1; printf "%.0f\n", $1 * m}'; }
for g in 1x1 2x2; do
	R=${g%x*} C=${g#*x}
	kpart --dry-run --json -s 14 -R "$R" -C "$C" >"$T/est.json"
	if [ "$g" = 1x1 ]; then kbfs --engine cpu --dry-run "$T/p$g"; else have_mpi && MPIRUN 4 kbfs --engine cpu --dry-run "$T/p$g"; fi >"$T/plan" 2>&1
	real=$(sed -n 's/^rank [0-9]* ([^)]*): needs \([0-9.]* [KMG]*i*B\) .*/\1/p' "$T/plan" | bytes_of | sort -n | tail -1)
	est=$(jget "$T/est.json" host_bytes_max)
	ok "scale 14 $g: host memory estimate $est >= kbfs --dry-run's ${real:-?}, within 1.5x" \
		test -n "$real" -a "$est" -ge "${real:-0}" -a "$((est * 2))" -le "$((${real:-0} * 3))"
done
ok "the human report names the host memory per rank" sh -c "kpart --dry-run -s 14 -R 2 -C 2 | grep -q '^  host memory per rank    up to [0-9.]* MiB (kbfs --engine cpu'"

est=$(jget "$T/est.json" edge_file_bytes) size=$(stat -c %s "$T/g14.kg")
ok "the edge file estimate ($est) is its size ($size) within 1%" test "$((est * 100))" -ge "$((size * 99))" -a "$((est * 100))" -le "$((size * 101))"

# from an edge file's header: the same estimate as from its scale
kpart --dry-run --json -R 2 -C 2 "$T/g14.kg" >"$T/hdr.json"
kpart --dry-run --json -s 14 -R 2 -C 2 >"$T/sc.json"
is "$(jget "$T/hdr.json" device_bytes_max) $(jget "$T/hdr.json" nnz_rank_max)" \
	"$(jget "$T/sc.json" device_bytes_max) $(jget "$T/sc.json" nnz_rank_max)" "an edge file's header gives the estimate its scale gives"

# the human report, and a GPU size
run_ok "kpart --dry-run -s 26 -R 2 -C 2 --gpu-memory 80G" kpart --dry-run -s 26 -R 2 -C 2 --gpu-memory 80G
ok "... in human units (GiB), device memory per GPU" grep -q '^  device memory per GPU   up to [0-9.]* GiB' "$T/out"
ok "... fits" grep -q '^  fits GPUs of 80.0 GiB' "$T/out"
ok "... kgen's need on the GPU (--engine cuda)" grep -q '^  kgen on the GPU         [0-9.]* MiB per rank' "$T/out"
ok "... kpart's own need on the GPU (--engine cuda)" grep -q '^  kpart on the GPU        up to [0-9.]* GiB per GPU' "$T/out"
kpart --dry-run --json -s 20 -R 1 -C 2 >"$T/b.json"
b=$(jget "$T/b.json" build_device_bytes_max) n=$(jget "$T/b.json" nnz_rank_max)
ok "kpart on the GPU: at least the keys and their sort buffer ($b >= 16 x $n)" test "$b" -ge "$((16 * n))"
ok "... kpart's own need on the host: the keys, the tuples once" \
	grep -q '^  kpart on the host       up to [0-9.]* GiB of keys per rank .*, and the tuples once, [0-9.]* GiB' "$T/out"
kt=$(jget "$T/b.json" build_tuples_bytes) kk=$(jget "$T/b.json" build_keys_bytes_max)
is "$kt" "$((2 * 16 * (1 << 20) * 4))" "kpart on the host at scale 20: the tuples' bytes, 2 x 4 B x 16 x 2^20"
is "$kk" "$((8 * n))" "... and the busiest rank's keys, 8 B each of its $n"
k=$(jget "$T/b.json" kgen_device_bytes)
ok "kgen on the GPU: its two buffers of 2^24 edges and more ($k)" test "$k" -gt "$((2 * 16777216 * 16))"
kpart --dry-run -s 30 -R 1 -C 1 --gpu-memory 80G >"$T/o2" 2>"$T/err"
is "$? $(grep -c '^  does not fit GPUs of 80.0 GiB' "$T/o2")" "4 1" "scale 30 on one 80 GiB GPU: does not fit, exit 4"
ok "... and the report names the fewest GPUs that would" grep -q '^  fewest GPUs of 80.0 GiB that fit: [0-9]* (grid [0-9]*x[0-9]*' "$T/o2"
kpart --dry-run --json -s 30 -R 1 -C 1 --gpu-memory 80G >"$T/f.json"
P=$(jget "$T/f.json" fewest_gpus)
python3 -c "import json; g=json.load(open('$T/f.json'))['fewest_grid']; print(g['R'], g['C'])" >"$T/grid"
read -r FR FC <"$T/grid"
kpart --dry-run -s 30 -R "$FR" -C "$FC" --gpu-memory 80G >/dev/null
ok "the fewest grid ($FR x $FC = $P GPUs) does fit" test $? -eq 0
half=$((P / 2))
if [ "$half" -ge 1 ]; then
	read -r HR HC < <(python3 -c "
import math; p=$half; r=int(math.isqrt(p))
while r > 1 and p % r: r -= 1
print(r, p // r)")
	kpart --dry-run -s 30 -R "$HR" -C "$HC" --gpu-memory 80G >/dev/null
	ok "half as many ($HR x $HC) does not" test $? -eq 4
fi

# kbfs --dry-run on a built partition speaks the same units
if have_mpi; then
	MPIRUN 4 kbfs --engine cpu --dry-run "$T/p2x2" >"$T/out" 2>"$T/err"
	ok "kbfs --dry-run (cpu): each rank's needs in binary units" \
		sh -c "test \$(grep -c '^rank [0-3] (.*): needs [0-9.]* [KMG]iB (partition [0-9.]* [KMG]iB, ' '$T/out') -eq 4"
else
	skip "no mpirun"
fi

# usage
must_fail 2 "--dry-run without a grid" kpart --dry-run -s 20
must_fail 2 "--dry-run with -s and an edge file" kpart --dry-run -s 20 -R 1 -C 1 "$T/g14.kg"
must_fail 2 "--dry-run with neither" kpart --dry-run -R 1 -C 1
must_fail 2 "--gpu-memory without --dry-run" kpart -R 1 -C 1 --gpu-memory 80G "$T/g14.kg"
must_fail 2 "a size that is not one" kpart --dry-run -s 20 -R 1 -C 1 --gpu-memory 80X
must_fail 2 "--gpu-memory 80: 80 bytes, refused" kpart --dry-run -s 20 -R 1 -C 1 --gpu-memory 80
stderr_has "'80' is 80 bytes, less than 1 MiB: give a unit (like 80G)" "... saying to give a unit"
must_fail 2 "--gpu-memory 512K: under 1 MiB, refused" kpart --dry-run -s 20 -R 1 -C 1 --gpu-memory 512K
run_ok "--gpu-memory 1M: the smallest taken" kpart --dry-run -s 10 -R 1 -C 1 --gpu-memory 1M
must_fail 2 "-s 43" kpart --dry-run -s 43 -R 1 -C 1
must_fail 1 "a file that is not an edge file" kpart --dry-run -R 1 -C 1 "$TOP/README.md"
done_testing
