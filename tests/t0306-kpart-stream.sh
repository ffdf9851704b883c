#!/bin/bash
# kgen -o - | kpart -: the edge file never on disk, the same partition as
# from the file (every rank file and the manifest the same bytes but for the
# source's name; build-info the same but for its timings and command line),
# on one process and under mpirun (on one host rank 0 reads the pipe into
# shared memory that every rank reads whole; KBFS_KPART_STAGE=0, or a
# compressed stream: rank 0 deals it out); a stream cut short, corrupt or
# with an id out of range fails with exit 1, one line, no partition behind.
. "$(dirname "$0")/lib.sh"
export LC_ALL=C
kgen -q -s 12 -o "$T/g.kg" && kgen -q -s 12 -f text -o "$T/g.txt" && kgen -q --from "$T/g.txt" -o "$T/m.kg" ||
	{ echo "Bail out! kgen failed"; exit 1; }
size=$(wc -c <"$T/g.kg" | tr -d ' ')

# same_but_source A B: the rank files of A (one at least) are B's bytes, the
# manifests differ in the source's name (and so their checksum) alone, and
# build-info in its timings and command line alone
same_but_source() {
	same_but source "$1" "$2" &&
		cmp -s <(grep -Ev '^([a-z]+_time|command) = ' "$1/build-info") \
			<(grep -Ev '^([a-z]+_time|command) = ' "$2/build-info")
}
# value KEY DIR: a manifest value
value() { sed -n "s/^$1 = //p" "$2/manifest"; }
# none DIR: neither DIR nor a temporary of it is there
none() { ! ls -d "$1" "$1".kbfs-tmp-* >/dev/null 2>&1; }

for g in 1x1 2x1 1x2 2x2; do
	R=${g%x*} C=${g#*x} np=$((R * C))
	kpart -q -R "$R" -C "$C" -o "$T/f-$g" "$T/g.kg" || { echo "Bail out! kpart $g failed"; exit 1; }
	run_ok "$g, one process: kgen -o - | kpart -" sh -c "kgen -q -s 12 -o - | kpart -q -R $R -C $C -o '$T/s-$g' -"
	ok "$g, one process: the file's partition (rank files, manifest but its source, build-info)" \
		same_but_source "$T/f-$g" "$T/s-$g"
	if [ "$np" -gt 1 ] && have_mpi; then
		MPIRUN "$np" kpart -q -R "$R" -C "$C" -o "$T/fm-$g" "$T/g.kg"
		run_ok "$g, mpirun -np $np: kgen -o - | mpirun kpart - (rank 0 reads, deals)" \
			sh -c "kgen -q -s 12 -o - | mpirun --oversubscribe -np $np kpart -q -R $R -C $C -o '$T/m-$g' -"
		ok "$g, mpirun -np $np: the file's partition under mpirun" same_but_source "$T/fm-$g" "$T/m-$g"
		run_ok "$g, mpirun -np $np, KBFS_KPART_STAGE=0 (rank 0 deals it out)" \
			sh -c "kgen -q -s 12 -o - | KBFS_KPART_STAGE=0 mpirun --oversubscribe -np $np kpart -q -R $R -C $C -o '$T/d-$g' -"
		ok "$g, mpirun -np $np, dealt: the same partition" same_but_source "$T/fm-$g" "$T/d-$g"
	elif [ "$np" -gt 1 ]; then
		for k in 1 2 3 4; do skip "$g under mpirun: no mpirun"; done
	fi
done
is "$(value source "$T/s-1x1")" "-" "the stream's manifest names its source '-'"
is "$(value source_bytes "$T/s-1x1")" "$size" "and the bytes it read: the edge file's size"
is "$(value source_crc32 "$T/s-1x1")" "$(value source_crc32 "$T/f-1x1")" "and the edge data's CRC"

# a named pipe under mpirun (what kpart(1) suggests instead of mpirun's
# forwarding of standard input): rank 0 alone opens it
if have_mpi; then
	mkfifo "$T/edges.fifo"
	kgen -q -s 12 -o "$T/edges.fifo" &
	kg=$!
	MPIRUN 4 kpart -q -R 2 -C 2 -o "$T/p-fifo" "$T/edges.fifo"
	is "$?" 0 "mpirun -np 4 kpart NAMED-PIPE: built"
	wait "$kg"
	is "$?" 0 "... kgen wrote it all"
	ok "... the file's partition under mpirun" same_but_source "$T/fm-2x2" "$T/p-fifo"
else
	skip "a named pipe under mpirun: no mpirun"
fi

# KBFS_IO_PIPE (an experiment): the pipe's size asked for, the same
# partition; a value out of range is ignored with a warning
run_ok "KBFS_IO_PIPE=2: kgen -o - | kpart -" sh -c "kgen -q -s 12 -o - | KBFS_IO_PIPE=2 kpart -q -R 1 -C 1 -o '$T/pipe2' -"
ok "... the file's partition" same_but_source "$T/f-1x1" "$T/pipe2"
KBFS_IO_PIPE=0 kgen -s 12 -o - 2>"$T/err" | cat >/dev/null
ok "KBFS_IO_PIPE=0: one warning that names it" grep -q "warning: ignoring KBFS_IO_PIPE='0' (want MiB from 1 to 1024)" "$T/err"
KBFS_IO_PIPE=+2 kgen -s 12 -o - 2>"$T/err" | cat >/dev/null
ok "KBFS_IO_PIPE=+2: refused as every number with a sign is (knum)" grep -q "warning: ignoring KBFS_IO_PIPE='+2' (want MiB from 1 to 1024)" "$T/err"

# a compressed stream, and an imported graph (its id map on the way)
run_ok "kgen -z -o - | kpart -" sh -c "kgen -q -s 12 -z -o - | kpart -q -R 2 -C 2 -o '$T/z' -"
ok "compressed: the same rank files" sh -c "cd '$T/f-2x2' && for f in rank-*; do cmp -s \$f '$T/z/'\$f || exit 1; done"
kpart -q -R 2 -C 1 -o "$T/f-map" "$T/m.kg"
run_ok "kgen --from g.txt -o - | kpart -" sh -c "kgen -q --from '$T/g.txt' -o - | kpart -q -R 2 -C 1 -o '$T/s-map' -"
ok "imported: the file's partition" same_but_source "$T/f-map" "$T/s-map"

# cut_stream N CMD...: kgen's stream, its first N bytes only, into CMD;
# CMD's exit status (kgen ends quietly on the broken pipe)
cut_stream() {
	local n=$1
	shift
	kgen -q -s 12 -o - | head -c "$n" | "$@"
	return "${PIPESTATUS[2]}"
}
for n in 20 100000 $((size - 10)); do
	must_fail 1 "a stream cut after $n bytes: exit 1" cut_stream "$n" kpart -q -R 1 -C 1 -o "$T/cut" -
	stderr_has "truncated" "... called truncated"
	ok "... no partition, no temporary" none "$T/cut"
	if have_mpi; then
		cut_stream "$n" mpirun --oversubscribe -np 4 kpart -q -R 2 -C 2 -o "$T/mcut" - >"$T/out" 2>"$T/err"
		is "$?" 1 "mpirun -np 4, a stream cut after $n bytes: exit 1"
		stderr_has "truncated" "... called truncated"
		ok "... no partition, no temporary" none "$T/mcut"
	fi
done

# a stream whose bytes are damaged: in the payload (an id beyond nv, so
# also a CRC that no longer matches), in the payload with every id still
# below nv (an id's low bit flipped: the CRC alone catches it), in the
# trailer; each on one process and
# under mpirun, held in shared memory and (KBFS_KPART_STAGE=0) dealt out
hdr=$((size - 20 - $(kgen -q -s 12 -o - | head -c 36 | od -An -t u8 -j 28 -N 8 | tr -d ' ') * 8))
bad_id=$T/bad-id.kg bad_crc=$T/bad-crc.kg bad_trl=$T/bad-trl.kg
cp "$T/g.kg" "$bad_id" && printf '\377' | dd of="$bad_id" bs=1 seek=$((hdr + 4 * 7 + 3)) conv=notrunc 2>/dev/null
b=$(od -An -t u1 -j $((hdr + 4 * 1001)) -N 1 "$T/g.kg" | tr -d ' ')
cp "$T/g.kg" "$bad_crc" && printf "\\$(printf %o $((b ^ 1)))" | dd of="$bad_crc" bs=1 seek=$((hdr + 4 * 1001)) conv=notrunc 2>/dev/null
cp "$T/g.kg" "$bad_trl" && printf '\001' | dd of="$bad_trl" bs=1 seek=$((size - 9)) conv=notrunc 2>/dev/null
for c in "$bad_id|beyond the 4096 vertices declared|an id beyond nv" "$bad_crc|checksum mismatch|an id's low bit flipped" \
	"$bad_trl|corrupt trailer|a damaged trailer"; do
	IFS='|' read -r f msg what <<<"$c"
	for st in 1 0; do
		must_fail 1 "$what, a stream (KBFS_KPART_STAGE=$st): exit 1" \
			sh -c "KBFS_KPART_STAGE=$st kpart -q -R 1 -C 1 -o '$T/bad' - <'$f'"
		stderr_has "$msg" "... says so"
		ok "... no partition, no temporary" none "$T/bad"
		if have_mpi; then
			KBFS_KPART_STAGE=$st mpirun --oversubscribe -np 4 kpart -q -R 2 -C 2 -o "$T/mbad" - <"$f" >"$T/out" 2>"$T/err"
			is "$?" 1 "$what, mpirun -np 4, KBFS_KPART_STAGE=$st: exit 1"
			ok "... said once: $msg" test "$(grep -c "$msg" "$T/err")" = 1
			ok "... no partition, no temporary" none "$T/mbad"
		fi
	done
done

# a header that announces far more edges than the stream holds (2^29
# tuples, 4 GiB; its CRC made right): held in shared memory all the same
# (not dealt out), refused as truncated where the stream ends
L=$(od -An -t u4 -j 36 -N 4 "$T/g.kg" | tr -d ' ')
cp "$T/g.kg" "$T/lie.kg"
printf '\000\000\000\040\000\000\000\000' | dd of="$T/lie.kg" bs=1 seek=28 conv=notrunc 2>/dev/null
head -c $((40 + L)) "$T/lie.kg" | gzip -c | tail -c 8 | head -c 4 | dd of="$T/lie.kg" bs=1 seek=$((40 + L)) conv=notrunc 2>/dev/null
for np in 1 4; do
	if [ "$np" = 1 ]; then
		kpart -v -R 1 -C 1 -o "$T/lie" - <"$T/lie.kg" >"$T/out" 2>"$T/err"
	elif have_mpi; then
		mpirun --oversubscribe -np 4 kpart -v -R 2 -C 2 -o "$T/lie" - <"$T/lie.kg" >"$T/out" 2>"$T/err"
	else
		skip "a lying header under mpirun: no mpirun"; skip "..."; skip "..."; continue
	fi
	is "$?" 1 "a header announcing 2^29 edges, a stream of 2^16 ($np process(es)): exit 1"
	ok "... said: truncated, not dealt out" sh -c "grep -q truncated '$T/err' && ! grep -q 'dealt out' '$T/err'"
	ok "... no partition, no temporary" none "$T/lie"
done
done_testing
