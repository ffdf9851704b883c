#!/bin/bash
# kbfs: the 2D BFS end to end on every grid shape and every algorithm mode.
# Trees must validate; roots, nedge and depths must equal the Graph500
# reference's vectors and an independent serial BFS (tests/tools).
. "$(dirname "$0")/lib.sh"

REF=$T/kbfs-refbfs
cc -O2 -o "$REF" "$TOP/tests/tools/kbfs-refbfs.c" || { echo "Bail out! cannot build kbfs-refbfs"; exit 1; }
[ -x "$BIN/kbfs" ] && [ -x "$BIN/kpart" ] && [ -x "$BIN/kgen" ] || { echo "Bail out! build bin/ first"; exit 1; }
export OMP_NUM_THREADS=1

# kb NP ARGS...: kbfs on NP ranks (plain process for one)
kb() {
	local np=$1
	shift
	if [ "$np" -eq 1 ]; then
		kbfs "$@"
	else
		MPIRUN "$np" kbfs "$@"
	fi
}
json_roots() { sed -n 's/^      "root": \([0-9]*\),$/\1/p' "$1"; }
json_nedge() { sed -n 's/^      "nedge": \([0-9]*\),$/\1/p' "$1"; }

# ---- graphs, partitions, the serial reference ----
declare -A NROOT
for s in 10 11 12 13 14; do
	kgen -s $s -o "$T/g$s.kg" && kgen -s $s -f text -o "$T/g$s.txt" || { echo "Bail out! kgen -s $s"; exit 1; }
done
part() { # part SCALE R C [SUFFIX kpart-options]: $T/pS-RxC[SUFFIX]
	local s=$1 r=$2 c=$3 suffix=${4:-}
	shift 3
	[ $# -gt 0 ] && shift
	kpart -q -R "$r" -C "$c" "$@" -o "$T/p$s-${r}x$c$suffix" "$T/g$s.kg" || { echo "Bail out! kpart $s ${r}x$c"; exit 1; }
}
for g in 1x1 1x2 2x1 2x2 1x4 4x1 2x3; do part 10 ${g%x*} ${g#*x}; done
for g in 1x1 1x2 2x2 2x3; do part 12 ${g%x*} ${g#*x}; done
part 11 2 1; part 13 1 2; part 14 2 2; part 14 1 1; part 12 2 2 relabel --relabel degree; part 10 2 2 wide --wide

# reference depths for the sampler's roots (taken from a first kbfs run)
refbfs() { # refbfs SCALE ROOT...: $T/refS/depth-ROOT.txt, $T/refS.nedge
	local s=$1
	shift
	mkdir -p "$T/ref$s"
	"$REF" -n $((1 << s)) -o "$T/ref$s" "$T/g$s.txt" "$@" >>"$T/ref$s.nedge"
}

if ! have_mpi; then
	skip_all "no mpirun"
fi

# ---- scale 10 and 12: the reference's 64 roots on every grid ----
for s in 10 12; do
	refbfs $s $(cat "$VEC/s$s/roots.txt")
	grep -v '^#' "$VEC/s$s/nedge_per_root.txt" | awk '{print $2, $3}' >"$T/vec$s.nedge"
done
run_grid() { # run_grid SCALE RxC NAME ARGS...
	local s=$1 g=$2 name=$3 c=${2#*x}
	local np=$((${2%x*} * ${c%%[!0-9]*}))
	shift 3
	rm -rf "$T/d" "$T/j.json"
	run_ok "s$s $g $name: every tree validates" kb $np "$T/p$s-$g" --json "$T/j.json" --depth-out "$T/d" "$@"
	cp "$T/out" "$T/block"
}
# vs_vectors SCALE GRID: the 64 default roots on GRID; roots and nedge equal
# the reference's vectors, depths the serial BFS's
vs_vectors() {
	local s=$1 g=$2
	run_grid "$s" "$g" "64 roots"
	is "$(json_roots "$T/j.json" | tr '\n' ' ')" "$(tr '\n' ' ' <"$VEC/s$s/roots.txt")" "s$s $g: the 64 roots are the reference's"
	is "$(paste -d' ' <(json_roots "$T/j.json") <(json_nedge "$T/j.json") | cksum)" "$(cksum <"$T/vec$s.nedge")" \
		"s$s $g: nedge per root equals the reference 3.0.1 count"
	ok "s$s $g: depths of all 64 trees equal the serial BFS" same_depths "$T/d" "$T/ref$s"
}
for g in 1x1 1x2 2x1 2x2 1x4 4x1 2x3; do vs_vectors 10 $g; done
ok "s10: root 0's depths equal the reference's depth.root0.txt" cmp -s "$T/d/depth-$(head -1 "$VEC/s10/roots.txt").txt" "$VEC/s10/depth.root0.txt"
kstat "$T/j.json" >"$T/kstat.out" 2>"$T/err"
ok "kstat recomputes the same statistics block from the JSON" cmp -s "$T/kstat.out" "$T/block"
grep -q '"levels": \[' "$T/j.json" && grep -q '"allreduce":' "$T/j.json" && grep -q '"hosts":' "$T/j.json"
ok "the JSON records levels, phase times and hosts" test $? -eq 0

for g in 1x1 1x2 2x2 2x3; do vs_vectors 12 $g; done
ok "s12: root 0's depths equal the reference's depth.root0.txt" cmp -s "$T/d/depth-$(head -1 "$VEC/s12/roots.txt").txt" "$VEC/s12/depth.root0.txt"
run_grid 12 2x2relabel "--relabel degree (input ids through orig)" -n 16
ok "s12 relabelled: depths in input ids equal the serial BFS" same_depths "$T/d" "$T/ref12"
is "$(json_roots "$T/j.json" | tr '\n' ' ')" "$(head -16 "$VEC/s12/roots.txt" | tr '\n' ' ')" "s12 relabelled: same roots"

# ---- every mode on every grid (8 roots each) ----
MODES=(
	"--direction top-down --exchange bitmap"
	"--direction top-down --exchange list --no-sv"
	"--direction bottom-up --exchange bitmap --no-sv"
	"--direction bottom-up --exchange list --no-compress"
	"--direction auto --exchange list --no-compress --no-sv"
	"--direction auto --exchange bitmap --alpha 2 --beta 100"
)
k=0
for g in 1x1 1x2 2x1 2x2 1x4 4x1 2x3; do
	for m in 0 1 2 3 4 5; do
		# every grid gets three modes, every mode runs on several grids
		[ $(((m + k) % 2)) -eq 0 ] || continue
		run_grid 10 $g "${MODES[$m]}" -n 8 ${MODES[$m]}
		ok "s10 $g ${MODES[$m]}: depths equal the serial BFS" same_depths "$T/d" "$T/ref10"
	done
	k=$((k + 1))
done
for m in 0 1 2 3; do
	run_grid 12 2x3 "${MODES[$m]}" -n 4 ${MODES[$m]}
	ok "s12 2x3 ${MODES[$m]}: depths equal the serial BFS" same_depths "$T/d" "$T/ref12"
done
for m in 0 3; do
	run_grid 10 2x2wide "u64 indices (kpart --wide) ${MODES[$m]}" -n 8 ${MODES[$m]}
	ok "s10 u64 indices ${MODES[$m]}: depths equal the serial BFS" same_depths "$T/d" "$T/ref10"
done
for m in 1 3 5; do
	KBFS_TEST_STAGE=1 run_grid 10 2x3 "host staging (KBFS_TEST_STAGE) ${MODES[$m]}" -n 8 ${MODES[$m]}
	ok "s10 staged ${MODES[$m]}: depths equal the serial BFS" same_depths "$T/d" "$T/ref10"
done
run_grid 10 2x2 "bottom-up only" -n 2 --direction bottom-up
ok "--direction bottom-up: every level is bottom-up" sh -c "! grep '\"direction\": \"top-down\"' '$T/j.json'"
run_grid 10 2x2 "top-down only" -n 2 --direction top-down
ok "--direction top-down: every level is top-down" sh -c "! grep '\"direction\": \"bottom-up\"' '$T/j.json'"

# ---- --bu-substeps: bottom-up levels in C sub-steps along the row ----
examined() { python3 -c "import json; print(sum(l['edges_examined'] for r in json.load(open('$1'))['roots'] for l in r['levels']))"; }
for gm in "1x2 " "1x4 " "2x2 --exchange list" "2x3 --no-sv" "2x3 --direction bottom-up" "1x4 --exchange bitmap"; do
	set -- $gm
	g=$1
	shift
	run_grid 10 $g "--bu-substeps $*" -n 8 --bu-substeps "$@"
	ok "s10 $g --bu-substeps $*: depths equal the serial BFS" same_depths "$T/d" "$T/ref10"
	ok "s10 $g --bu-substeps $*: the record says the sub-steps ran" grep -q '"bu_substeps": true' "$T/j.json"
done
KBFS_TEST_STAGE=1 run_grid 12 2x3 "--bu-substeps, host staging" -n 4 --bu-substeps
ok "s12 2x3 --bu-substeps staged: depths equal the serial BFS" same_depths "$T/d" "$T/ref12"
run_grid 10 1x4 "bottom-up, rows whole" -n 8 --direction bottom-up
whole=$(examined "$T/j.json")
run_grid 10 1x4 "bottom-up, sub-steps" -n 8 --direction bottom-up --bu-substeps
sub=$(examined "$T/j.json")
ok "s10 1x4 --bu-substeps: fewer entries examined ($sub) than whole rows ($whole)" test "$sub" -lt "$whole"
run_grid 10 4x1 "--bu-substeps on one column" -n 2 --bu-substeps
ok "--bu-substeps on a grid of one column: nothing to split, the record says so" grep -q '"bu_substeps": false' "$T/j.json"

# ---- scales 11, 13, 14: depths against the serial BFS ----
for sg in "11 2x1" "13 1x2" "14 2x2" "14 1x1"; do
	set -- $sg
	run_grid $1 $2 "16 sampled roots" -n 16
	refbfs $1 $(json_roots "$T/j.json")
	ok "s$1 $2: depths equal the serial BFS" same_depths "$T/d" "$T/ref$1"
	is "$(paste -d' ' <(json_roots "$T/j.json") <(json_nedge "$T/j.json") | cksum)" "$(tail -16 "$T/ref$1.nedge" | cksum)" \
		"s$1 $2: nedge equals the serial count"
done
run_grid 14 1x1 "top-down, raw lists" -n 3 --direction top-down --exchange list --no-compress
ok "s14 1x1 top-down lists: depths equal the serial BFS" same_depths "$T/d" "$T/ref14"

# ---- roots given, files written ----
head -5 "$VEC/s10/roots.txt" | sed '2s/$/  /; 3i# a comment' >"$T/roots.txt"
run_ok "--roots FILE" kb 4 "$T/p10-2x2" --roots "$T/roots.txt" --json "$T/j.json" --no-warmup
is "$(json_roots "$T/j.json" | tr '\n' ' ')" "$(head -5 "$VEC/s10/roots.txt" | tr '\n' ' ')" "--roots FILE: those roots, in order"
run_ok "-r twice" kb 2 "$T/p10-1x2" -r 458 -r 214 --json "$T/j.json" -q
is "$(json_roots "$T/j.json" | tr '\n' ' ')" "458 214 " "-r ROOT -r ROOT"
rm -rf "$T/pred" "$T/d"
run_ok "--pred-out text" kb 4 "$T/p10-2x2" -n 4 --pred-out "$T/pred" --depth-out "$T/d"
"$REF" --from-pred "$T/pred/pred-458.txt" >"$T/pd.txt"
ok "depths from the predecessor file equal the reported depths" cmp -s "$T/pd.txt" "$T/d/depth-458.txt"
is "$(grep -c '^[0-9]' "$T/pred/pred-458.txt")" 1024 "the predecessor file lists every vertex"
run_ok "--pred-out binary" kb 2 "$T/p10-2x1" -n 2 --pred-out "$T/predb" --pred-format bin
is "$(head -c 5 "$T/predb/pred-458.bin" | tail -c 4)" "KPRD" "binary predecessor files carry the kpred magic"
run_ok "--no-validate" kb 1 "$T/p10-1x1" -n 4 --no-validate
ok "--no-validate says so in the block" grep -q '^validation: *skipped$' "$T/out"
run_ok "-v prints per-level lines" kb 1 "$T/p10-1x1" -n 1 -v
stderr_has "level 1 " "-v: per-level lines on stderr"

# ---- bad input ----
must_fail 2 "a partition for another grid is refused" kb 1 "$T/p10-2x2"
stderr_has "2x2 grid (4 ranks) but this job has 1 rank" "the message names both sizes"
MPIRUN 2 kbfs "$T/p10-2x3" >"$T/out" 2>"$T/err"
rc=$?
is "$rc $(grep -c 'partitioned for a 2x3 grid (6 ranks) but this job has 2 ranks' "$T/err")" "2 1" \
	"under mpirun: exit 2, one message naming 6 and 2"
must_fail 3 "a missing partition directory" kb 1 "$T/nope"
must_fail 2 "no directory at all" kb 1
must_fail 2 "an unknown option" kb 1 --frobnicate "$T/p10-1x1"
must_fail 2 "-n with -r" kb 1 -n 3 -r 458 "$T/p10-1x1"
must_fail 2 "--exchange nonsense" kb 1 --exchange smoke "$T/p10-1x1"
must_fail 2 "--bu-batch 3 (not a power of two)" kb 1 --bu-batch 3 "$T/p10-1x1"
stderr_has "is not 1, 2, 4 or 8" "--bu-batch 3: the message lists the allowed values"
must_fail 2 "--bu-rows 3" kb 1 --bu-rows 3 "$T/p10-1x1"
must_fail 2 "--validator device with --engine cpu" kb 1 --engine cpu --validator device "$T/p10-1x1"
stderr_has "needs the CUDA engine" "--validator device: the message names the CUDA engine"
must_fail 2 "--validator nonsense" kb 1 --validator gpu "$T/p10-1x1"
run_ok "--engine cpu --validator host" kb 1 --engine cpu --validator host -n 2 --json "$T/vh.json" "$T/p10-1x1"
ok "the CPU engine validates on the host (JSON options.validator)" grep -q '"validator": "host"' "$T/vh.json"
ok "the CPU engine validates on the host (JSON validated_on)" grep -q '"validated_on": "host"' "$T/vh.json"
if ! have_gpu; then
	must_fail 4 "--validator device without a GPU (--engine auto)" kb 1 --validator device "$T/p10-1x1"
	stderr_has "use --validator host" "no GPU: the message says what to do"
fi
must_fail 1 "a root out of range" kb 1 "$T/p10-1x1" -r 1024
iso=$(awk '$2 == -1 {print $1}' "$VEC/s10/depth.root0.txt" | while read -r v; do
	grep -q -e "^$v " -e " $v\$" "$T/g10.txt" || { echo "$v"; break; }
done)
must_fail 1 "a root without edges" kb 1 "$T/p10-1x1" -r "$iso"
printf '458\n12x\n' >"$T/bad-roots.txt"
must_fail 1 "a malformed roots file" kb 1 "$T/p10-1x1" --roots "$T/bad-roots.txt"
if have_gpu; then skip "GPU present: --engine cuda is tested by the GPU tests"; else
	must_fail 4 "--engine cuda without a GPU" kb 1 --engine cuda "$T/p10-1x1"
fi
KBFS_TEST_CORRUPT_PRED=1 kb 4 "$T/p10-2x2" -n 2 >"$T/out" 2>"$T/err"
rc=$?
is "$rc" 1 "a failed validation exits 1 (KBFS_TEST_CORRUPT_PRED)"
ok "... after printing the statistics block" grep -q 'harmonic_mean_TEPS' "$T/out"
stderr_has "validation failed for root 458: rule" "... naming the root and the rule"
# a fatal error on one rank ends the whole job
cp -r "$T/p10-2x2" "$T/broken"
truncate -s 1000 "$T/broken/rank-00003.kpart"
MPI_TIMEOUT=120 MPIRUN 4 kbfs "$T/broken" >"$T/out" 2>"$T/err"
rc=$?
ok "a corrupt rank file on one rank ends the job with exit 1, no hang (exit $rc)" test "$rc" -eq 1
stderr_has "rank 3" "... with that rank's message"

# KBFS_LOAD_MMAP=1 (an experiment): the row indices mapped from the rank
# file instead of read; the same depths on one rank and on 2x2
rm -rf "$T/dm0" "$T/dm1"
kb 4 "$T/p10-2x2" -n 4 --depth-out "$T/dm0" >/dev/null 2>&1
run_ok "KBFS_LOAD_MMAP=1, 2x2: every tree validates" MPIRUN 4 env KBFS_LOAD_MMAP=1 kbfs "$T/p10-2x2" -n 4 --depth-out "$T/dm1"
ok "... the depths of the default's" same_depths "$T/dm0" "$T/dm1"
rm -rf "$T/dm0" "$T/dm1"
kb 1 "$T/p10-1x1" -n 4 --depth-out "$T/dm0" >/dev/null 2>&1
run_ok "KBFS_LOAD_MMAP=1, 1x1: every tree validates" env KBFS_LOAD_MMAP=1 kbfs -v "$T/p10-1x1" -n 4 --depth-out "$T/dm1"
stderr_has "rank-00000.kpart': row indices mapped from the file" "... -v names the mapping"
ok "... the depths of the default's" same_depths "$T/dm0" "$T/dm1"
run_ok "KBFS_LOAD_MMAP=1: kpart --check reads it" env KBFS_LOAD_MMAP=1 kpart --check "$T/p10-1x1"
# a bit flipped in the row indices: the CRC over the mapping finds it
cp -r "$T/p10-1x1" "$T/flip"
f="$T/flip/rank-00000.kpart"
sz=$(stat -c %s "$f")
printf '\377' | dd of="$f" bs=1 seek=$((sz / 2)) conv=notrunc 2>/dev/null
must_fail 1 "KBFS_LOAD_MMAP=1: a changed byte in the rank file" env KBFS_LOAD_MMAP=1 kbfs -n 1 "$T/flip"
stderr_has "checksum mismatch (corrupt rank file)" "... is a checksum mismatch"
# the file cut short under the mapping (KBFS_TEST_LOAD_CUT): a line and
# exit 1, not a SIGBUS
rm -rf "$T/flip"
cp -r "$T/p10-1x1" "$T/cut"
must_fail 1 "KBFS_LOAD_MMAP=1: the rank file cut short under the mapping" \
	env KBFS_LOAD_MMAP=1 KBFS_TEST_LOAD_CUT=1 kbfs -n 1 "$T/cut"
stderr_has "rank-00000.kpart': the rank file was cut short while in use" "... says so"
rm -rf "$T/cut"

# a 1x1 block is symmetric: its CSC serves as its CSR, checked, no
# transpose; KBFS_SYM=0 transposes it as on any grid: the same depths
rm -rf "$T/ds0" "$T/ds1"
run_ok "1x1: the symmetric block kept once, every tree validates" kbfs -v "$T/p10-1x1" -n 4 --depth-out "$T/ds1"
stderr_has "rank-00000.kpart': the block is symmetric (checked in" "... -v says so"
run_ok "1x1, KBFS_SYM=0: every tree validates" env KBFS_SYM=0 kbfs -v "$T/p10-1x1" -n 4 --depth-out "$T/ds0"
stderr_has "rank-00000.kpart': column indices made from the CSC in" "... -v says they were made"
ok "... the same depths" same_depths "$T/ds0" "$T/ds1"
rm -rf "$T/ds1"
run_ok "1x1 with KBFS_LOAD_MMAP=1: the mapped row indices serve both ways" \
	env KBFS_LOAD_MMAP=1 kbfs -v "$T/p10-1x1" -n 4 --depth-out "$T/ds1"
ok "... the same depths" same_depths "$T/ds0" "$T/ds1"
rm -rf "$T/ds0" "$T/ds1"

done_testing
