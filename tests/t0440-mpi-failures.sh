#!/bin/bash
# Under mpirun, one rank's bad input or death ends the whole job within 10
# seconds, and what is printed names that rank (kbfs(7): "A fatal error on
# any rank ends the whole job at once").
. "$(dirname "$0")/lib.sh"
need_mpi
LIMIT=10

kgen -q -s 12 -o "$T/g.kg" && kpart -q -R 2 -C 2 -o "$T/p" "$T/g.kg" &&
	MPIRUN 4 kbfs -q -n 1 --no-validate --pred-out "$T/tree" "$T/p" >/dev/null ||
	{ echo "Bail out! cannot make the partition and a tree"; exit 1; }

# timed NAME CMD...: run CMD with a limit of 60 s; rc and secs are set
timed() {
	local t0 t1
	t0=$(date +%s.%N)
	MPI_TIMEOUT=60 "$@" >"$T/out" 2>"$T/err"
	rc=$?
	t1=$(date +%s.%N)
	secs=$(echo "$t1 $t0" | awk '{printf "%.1f", $1 - $2}')
}
# within NAME: the last timed command ended in less than LIMIT seconds
within() { ok "$1 ends within $LIMIT s ($secs s)" awk -v s="$secs" -v l=$LIMIT 'BEGIN { exit !(s < l) }'; }

# ---- bad input on one rank ----
cp -r "$T/p" "$T/short3"
truncate -s 1000 "$T/short3/rank-00003.kpart"
timed MPIRUN 4 kbfs "$T/short3"
is "$rc" 1 "kbfs: rank 3's rank file truncated: exit 1"
within "kbfs: rank 3's bad input"
stderr_has "kbfs\[rank 3\]: .*rank-00003.kpart'" "kbfs: the message names rank 3 and its file"

cp -r "$T/p" "$T/flip2"
perl -e 'open(F, "+<", $ARGV[0]) or die; seek(F, 200, 0); read(F, $c, 1); seek(F, 200, 0); print F chr(ord($c) ^ 1)' \
	"$T/flip2/rank-00002.kpart"
timed MPIRUN 4 kvalidate "$T/flip2" "$T/tree"
is "$rc" 1 "kvalidate: rank 2's rank file damaged: exit 1"
within "kvalidate: rank 2's bad input"
stderr_has "kvalidate\[rank 2\]: .*rank-00002.kpart'" "kvalidate: the message names rank 2 and its file"

printf '1\n12x\n' >"$T/bad-roots.txt"
timed MPIRUN 4 kbfs --roots "$T/bad-roots.txt" "$T/p"
is "$rc" 1 "kbfs: a bad roots file (read by rank 0): exit 1"
within "kbfs: rank 0's bad input"
stderr_has "kbfs\[rank 0\]: .*bad-roots.txt:2" "kbfs: the message names rank 0, the file and the line"

# ---- a rank dies ----
# every rank blocks: rank 0 reads the roots from standard input (a fifo
# that stays open and silent), the others wait for them; then rank 1 is
# killed with SIGKILL.  Each rank writes its pid first (the wrapper execs
# the program, so the pid stays the program's).
mkfifo "$T/fifo"
exec 3<>"$T/fifo"
MPI_TIMEOUT=60 MPIRUN 4 sh -c 'echo $$ >"$0.$OMPI_COMM_WORLD_RANK"; exec kbfs --roots - "$1"' "$T/pid" "$T/p" \
	<"$T/fifo" >"$T/out" 2>"$T/err" &
job=$!
for _ in $(seq 300); do
	[ -s "$T/pid.0" ] && [ -s "$T/pid.1" ] && [ -s "$T/pid.2" ] && [ -s "$T/pid.3" ] && break
	sleep 0.1
done
sleep 1
t0=$(date +%s.%N)
kill -9 "$(cat "$T/pid.1")"
wait $job
rc=$?
secs=$(echo "$(date +%s.%N) $t0" | awk '{printf "%.1f", $1 - $2}')
exec 3>&-
ok "kbfs: rank 1 killed: the job fails (exit $rc)" test "$rc" -ne 0 -a "$rc" -ne 124
within "kbfs: after rank 1's death, the job"
stderr_has "rank 1 .*signal 9" "the report names rank 1 and its signal"
# (a rank may take a moment to be reaped after mpirun has returned)
alive() { for p in $(cat "$T"/pid.*); do ! kill -0 "$p" 2>/dev/null || return 0; done; return 1; }
for _ in $(seq 50); do alive || break; sleep 0.1; done
left=$(for p in $(cat "$T"/pid.*); do kill -0 "$p" 2>/dev/null && echo "$p"; done)
is "$left" "" "no rank is left running 5 s later"
done_testing
