#!/bin/bash
# kpart: every grid stores exactly the symmetrized, self-loop-free, deduplicated
# input, each edge where the layout puts it; --relabel degree (the default)
# round-trips; --relabel none keeps the input's ids; --check passes good
# partitions.
. "$(dirname "$0")/lib.sh"
export LC_ALL=C

# want SCALE: the edge file and its symmetrized, deduplicated "u v" set
want() {
	kgen -q -s "$1" -o "$T/g$1.kg" && kgen -q -s "$1" -f text -o "$T/g$1.txt" &&
		awk '$1 != $2 { print $1, $2; print $2, $1 }' "$T/g$1.txt" | sort -u >"$T/want$1"
}
# value KEY DIR: a manifest value
value() { sed -n "s/^$1 = //p" "$2/manifest"; }
# placed DIR: every "rank u v" line of --dump-layout sits where kpart.h says
placed() {
	local R C nb
	R=$(value R "$1") C=$(value C "$1") nb=$(value nb "$1")
	kpart --dump-layout "$1" | awk -v R="$R" -v C="$C" -v nb="$nb" '
		{ bu = int($2 / nb); bv = int($3 / nb)
		  if ($1 != (bv % R) * C + int(bu / R)) { print "misplaced: " $0; bad = 1; exit } }
		END { exit bad }'
}

# sizes DIR: every rank file is kpart(5)'s size for format 2: the CSC, the
# CSR's row offsets, tdeg (and orig), no column indices (4-byte offsets and
# indices here)
sizes() {
	local R C N nb k=2 r nnz f
	R=$(value R "$1") C=$(value C "$1") N=$(value N "$1") nb=$(value nb "$1")
	[ "$(value version "$1")" = 2.0 ] || return 1
	[ "$(value relabel "$1")" = none ] && [ "$(value source_map "$1")" != yes ] && k=1
	for ((r = 0; r < R * C; r++)); do
		f=$(printf '%s/rank-%05d.kpart' "$1" "$r") nnz=$(value "rank.$(printf %05d "$r").nnz" "$1")
		[ "$(wc -c <"$f")" -eq $((96 + 4 * (N / C + 1 + N / R + 1) + 4 * nnz + 8 * nb * k + 20)) ] || return 1
	done
}

grids="1x1 1x2 2x1 2x2 1x4 4x1 2x3 3x2"
for s in 10 11 12 13 14; do
	want "$s" || { echo "Bail out! kgen -s $s failed"; exit 1; }
	# every grid at scales 10 and 14, three of them in between
	case $s in 10 | 14) these=$grids ;; 11) these="1x2 2x3 4x1" ;; 12) these="2x2 3x2 1x4" ;; *) these="2x1 1x1 2x3" ;; esac
	for g in $these; do
		R=${g%x*} C=${g#*x} P=$T/p$s-$g
		run_ok "scale $s, $g: built" kpart -R "$R" -C "$C" -o "$P" "$T/g$s.kg"
		kpart --dump "$P" | sort >"$T/got"
		ok "scale $s, $g: the stored edges are the symmetrized, deduplicated input" cmp -s "$T/got" "$T/want$s"
		ok "scale $s, $g: every edge in the rank the layout names" placed "$P"
		is "$(value nnz "$P")" "$(wc -l <"$T/want$s" | tr -d ' ')" "scale $s, $g: the manifest counts them"
		is "$(value selfloops "$P")" "$(awk '$1 == $2' "$T/g$s.txt" | wc -l | tr -d ' ')" "scale $s, $g: self-loops counted"
		run_ok "scale $s, $g: kpart --check passes" kpart --check "$P"
		ok "scale $s, $g: format 2.0, rank files of the CSC and the row offsets alone" sizes "$P"
	done
done

# manifest: the generator's parameters and the source's identity
P=$T/p10-2x2
is "$(value scale "$P") $(value edgefactor "$P") $(value seed1 "$P") $(value seed2 "$P")" "10 16 2 3" \
	"the manifest carries scale, edgefactor and seeds"
is "$(value source_bytes "$P")" "$(wc -c <"$T/g10.kg" | tr -d ' ')" "and the source's size"
is "$(value source_program "$P")" "kgen" "and its provenance"
ok "no timestamp or host in the manifest" sh -c "! grep -qiE 'time|host|date' '$P/manifest'"

# --relabel degree: same edges in input ids, a bijection, degrees descending
for g in 1x1 2x3; do
	R=${g%x*} C=${g#*x} P=$T/r-$g
	run_ok "$g relabelled: built" kpart -R "$R" -C "$C" --relabel degree -o "$P" "$T/g12.kg"
	kpart --dump "$P" | sort >"$T/got"
	ok "$g relabelled: edge for edge the unrelabelled partition, after mapping" cmp -s "$T/got" "$T/want12"
	run_ok "$g relabelled: --check (orig is a bijection)" kpart --check "$P"
	# pair each internal id with its input id (same order in both dumps)
	paste -d ' ' <(kpart --dump-layout "$P") <(kpart --dump "$P") | awk '{ print $2, $4; print $3, $5 }' |
		sort -u >"$T/map"
	ok "$g relabelled: internal -> input is a function" sh -c "[ \$(cut -d' ' -f1 '$T/map' | uniq -d | wc -l) = 0 ]"
	ok "$g relabelled: and one to one" sh -c "[ \$(cut -d' ' -f2 '$T/map' | sort | uniq -d | wc -l) = 0 ]"
	ok "$g relabelled: some ids moved" sh -c "awk '\$1 != \$2' '$T/map' | grep -q ."
	# inside each block: degree non-increasing, ties by input id
	nb=$(value nb "$P")
	kpart --dump-layout "$P" | awk 'NR == FNR { id[$1] = $2; next } { deg[$2]++ }
		END { for (v in deg) print v, deg[v], id[v] }' "$T/map" - | sort -n >"$T/deg"
	ok "$g relabelled: high degrees first in every block, ties by id" awk -v nb="$nb" '
		{ if (NR > 1 && int($1 / nb) == int(p / nb) && $1 == p + 1 && ($2 > pd || ($2 == pd && $3 < po))) bad = 1
		  p = $1; pd = $2; po = $3 }
		END { exit bad }' "$T/deg"
done

# --relabel none: the input's order, every id where it was
for g in 1x1 2x3; do
	R=${g%x*} C=${g#*x} P=$T/n-$g
	run_ok "$g --relabel none: built" kpart -R "$R" -C "$C" --relabel none -o "$P" "$T/g12.kg"
	kpart --dump "$P" | sort >"$T/got"
	ok "$g --relabel none: the stored edges are the input's" cmp -s "$T/got" "$T/want12"
	ok "$g --relabel none: every edge in the rank the layout names" placed "$P"
	is "$(value relabel "$P")" "none" "$g --relabel none: the manifest says so"
	ok "$g --relabel none: format 2.0 sizes (no orig)" sizes "$P"
	ok "$g --relabel none: internal ids are input ids" cmp -s <(kpart --dump-layout "$P" | cut -d' ' -f2-) <(kpart --dump "$P")
done
is "$(value relabel "$T/p12-2x2")" "degree" "degree is the default ordering"

# an imported graph with sparse ids: the dump speaks the input's ids
printf '7 42\n42 1000000007\n1000000007 7\n7 7\n9 42\n9 42\n' >"$T/sparse.txt"
kgen -q --from "$T/sparse.txt" -o "$T/sparse.kg"
run_ok "imported graph with an id map" kpart -R 1 -C 2 -o "$T/sp" "$T/sparse.kg"
is "$(kpart --dump "$T/sp" | sort | tr '\n' ' ')" \
	"$(awk '$1 != $2 { print $1, $2; print $2, $1 }' "$T/sparse.txt" | sort -u | tr '\n' ' ')" \
	"imported ids come back as the input's own"
is "$(value seed1 "$T/sp") $(value seed2 "$T/sp")" "2 3" "imported graphs get seeds 2 and 3"
run_ok "--check on it" kpart --check "$T/sp"
ok "format 2.0 sizes (orig for the map)" sizes "$T/sp"

# standard input and a compressed edge file (read as streams)
run_ok "standard input" kpart -R 2 -C 2 -o "$T/stdin" - <"$T/g10.kg"
ok "standard input: same files as from the file" cmp -s "$T/stdin/rank-00003.kpart" "$T/p10-2x2/rank-00003.kpart"
kgen -q -s 10 -z -o "$T/z.kg"
run_ok "a compressed edge file" kpart -R 2 -C 2 -o "$T/z" "$T/z.kg"
ok "compressed: same rank files" sh -c "for r in 0 1 2 3; do cmp -s '$T/z/rank-0000'\$r.kpart '$T/p10-2x2/rank-0000'\$r.kpart || exit 1; done"

# OMP threads do not change a byte
OMP_NUM_THREADS=1 kpart -q -R 2 -C 3 -o "$T/t1" "$T/g14.kg"
OMP_NUM_THREADS=2 kpart -q -R 2 -C 3 -o "$T/t2" "$T/g14.kg"
ok "1 and 2 threads write identical partitions" same_partition "$T/t1" "$T/t2"

# the default output name, --force, --json, -v
(cd "$T" && kpart -q -R 1 -C 1 g10.kg)
ok "default output: EDGEFILE without its extension + .kpart" test -f "$T/g10.kpart/manifest"
run_ok "--force replaces a partition" kpart -R 2 -C 1 --force -o "$T/g10.kpart" "$T/g10.kg"
is "$(value R "$T/g10.kpart")" "2" "the new one is in place"
ok "and no temporary is left" sh -c "! ls -d '$T'/g10.kpart.* 2>/dev/null | grep -q ."
run_ok "--json" kpart --json -R 1 -C 2 -o "$T/j" "$T/g10.kg"
ok "--json: one JSON object with construction_time" grep -q '"construction_time":' "$T/out"
run_ok "-v" kpart -v -R 1 -C 2 -o "$T/v" "$T/g10.kg"
ok "-v: phase timings on stderr" grep -q "sort, dedup" "$T/err"
ok "-v: step 4's parts timed too (degrees summed, degree order, CSC relabelled)" \
	sh -c "grep -q '  tuple degrees summed ' '$T/err' && grep -q '  degrees, degree order ' '$T/err' && grep -q '  CSC relabelled' '$T/err'"

# --engine: cpu and auto build the default's files; without a GPU auto is
# the CPU and cuda is refused (t0645 compares the GPU's files with the
# CPU's; test_kpartdev the device path and auto's choice on a host model)
kpart -q -R 2 -C 2 -o "$T/e-def" "$T/g10.kg"
run_ok "--engine cpu" kpart --engine cpu -R 2 -C 2 -o "$T/e-cpu" "$T/g10.kg"
ok "--engine cpu: the default's files" same_partition "$T/e-def" "$T/e-cpu"
ok "build-info names the engine" grep -q '^engine = cpu$' "$T/e-cpu/build-info"
run_ok "--engine auto -v" kpart -v --engine=auto -R 2 -C 2 -o "$T/e-auto" "$T/g10.kg"
ok "--engine auto: the default's files" same_partition "$T/e-def" "$T/e-auto"
if have_gpu; then
	stderr_has "engine cuda" "auto with a GPU builds on it, and -v says so"
	skip "GPU present: --engine cuda is tested by t0645-gpu-kpart.sh"
else
	stderr_has "engine cpu (" "auto without a GPU builds on the CPU, and -v says why"
	must_fail 4 "--engine cuda without a GPU: exit 4" kpart --engine cuda -R 2 -C 2 -o "$T/e-cuda" "$T/g10.kg"
	stderr_has "use --engine cpu" "the refusal says to use --engine cpu"
	ok "the refused run leaves nothing" sh -c "! ls -d '$T'/e-cuda* 2>/dev/null | grep -q ."
fi
must_fail 2 "--engine gpu is a usage error" kpart --engine gpu -R 1 -C 1 -o "$T/e-x" "$T/g10.kg"
stderr_has "cpu, cuda, auto" "the usage error lists the engines"

# the bucket count is an experiment's knob (KBFS_KPART_BUCKET_BITS): 2 buckets
# (64-bit residuals), 2^7, and the cap; the files never change
kpart -q --engine cpu -R 2 -C 2 -o "$T/bb-def" "$T/g10.kg"
for nb in 1 7 20; do
	run_ok "KBFS_KPART_BUCKET_BITS=$nb: built" env KBFS_KPART_BUCKET_BITS=$nb kpart --engine cpu -R 2 -C 2 -o "$T/bb-$nb" "$T/g10.kg"
	ok "... the same files as the default buckets" same_partition "$T/bb-def" "$T/bb-$nb"
done
run_ok "KBFS_KPART_BUCKET_BITS=0: built anyway" env KBFS_KPART_BUCKET_BITS=0 kpart --engine cpu -R 2 -C 2 -o "$T/bb-0" "$T/g10.kg"
stderr_has "ignoring KBFS_KPART_BUCKET_BITS='0' (want 1 to 20)" "... with a warning naming the variable"
ok "... the same files" same_partition "$T/bb-def" "$T/bb-0"
# keys of 44 bits (scale 22 on one rank): 2^10 buckets of 64-bit residuals by
# default, 2^12 of 32-bit ones with KBFS_KPART_RES32=1 (as when the host is
# short of memory); the same files
kgen -q -s 22 -e 2 -o "$T/g22.kg"
run_ok "scale 22, 1x1: built" kpart -v --engine cpu -R 1 -C 1 -o "$T/r22-64" "$T/g22.kg"
stderr_has "keys: 2^10 buckets a part, 64-bit residuals" "... -v: 2^10 buckets, 64-bit residuals"
run_ok "KBFS_KPART_RES32=1: built" env KBFS_KPART_RES32=1 kpart -v --engine cpu -R 1 -C 1 -o "$T/r22-32" "$T/g22.kg"
stderr_has "keys: 2^12 buckets a part, 32-bit residuals (KBFS_KPART_RES32=1" "... -v: 2^12 buckets, 32-bit residuals, and why"
ok "... the same files" same_partition "$T/r22-64" "$T/r22-32"
rm -rf "$T/g22.kg" "$T/r22-64" "$T/r22-32"
# asked for 32-bit residuals where --wide (64-bit indices, testing) keeps
# them 64-bit: -v says so instead of claiming 32 bits
run_ok "KBFS_KPART_RES32=1 --wide: built" env KBFS_KPART_RES32=1 kpart -v --wide --engine cpu -R 1 -C 1 -o "$T/r10-w" "$T/g10.kg"
stderr_has "64-bit residuals (KBFS_KPART_RES32=1, but --wide keeps them 64-bit)" "... -v: 64-bit residuals, and why not 32"
rm -rf "$T/r10-w"
done_testing
