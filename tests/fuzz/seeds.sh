#!/bin/sh
# seeds.sh BIN OUT: the fuzzers' seeds, small files the programs in BIN
# write (edge files raw, compressed and with an id map, partitions of 1, 2
# and 4 ranks, trees in text and binary, a run report) and the repository's
# fixtures, one directory per harness under OUT (build/fuzz/seeds).
set -e
BIN=$(cd "$1" && pwd)
OUT=$2
TOP=$(cd "$(dirname "$0")/../.." && pwd)
FIX=$TOP/tests/fixtures
rm -rf "$OUT"
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
W=$(mktemp -d "${TMPDIR:-/tmp}/kbfs-seeds.XXXXXX")
trap 'rm -rf "$W"' EXIT
cd "$W"
export PATH=$BIN:$PATH OMP_NUM_THREADS=1
for d in kedge kpart_manifest kpart_rank kpred kio_lines run_json roots build_info import_auto import_edgelist \
	import_mtx import_metis import_dimacs import_sg; do
	mkdir -p "$OUT/$d"
done

# edge files: raw, compressed, 8-byte ids, an id map; the fixtures
kgen -q -s 3 -e 2 -o g3.kg
kgen -q -s 3 -e 2 -z -o g3z.kg
kgen -q -s 4 -e 1 --seed1 7 -o g4.kg
kgen -q --from "$FIX/import/sparse.txt" -o sparse.kg
kgen -q --from "$FIX/import/mtx-sym.mtx" -z -o mtxz.kg
cp g3.kg g3z.kg g4.kg sparse.kg mtxz.kg "$OUT/kedge/"
cp "$FIX"/kedge/*.kedge "$OUT/kedge/"

# partitions: the manifests and the rank files
n=0
for spec in "1 1 g3.kg" "1 2 g4.kg" "2 2 sparse.kg" "2 1 g3z.kg"; do
	set -- $spec
	kpart -q -R "$1" -C "$2" -o "p$n" "$3"
	cp "p$n/manifest" "$OUT/kpart_manifest/manifest-$1x$2"
	cp "p$n/build-info" "$OUT/build_info/build-info-$1x$2"
	for f in "p$n"/rank-*.kpart; do
		cp "$f" "$OUT/kpart_rank/$1x$2-$(basename "$f")"
	done
	n=$((n + 1))
done
kpart -q -R 1 -C 1 --relabel none -o pnone g3.kg
cp pnone/manifest "$OUT/kpart_manifest/manifest-none"
cp pnone/rank-00000.kpart "$OUT/kpart_rank/none-rank-00000.kpart"

# trees (text, binary, gzip'd) and a run report
kbfs -q -n 2 --no-warmup --pred-out tt --json run.json p0 >/dev/null
kbfs -q -n 2 --no-warmup --pred-out tb --pred-format bin p0 >/dev/null
for f in tt/pred-*; do
	cp "$f" "$OUT/kpred/"
	cp "$f" "$OUT/kio_lines/"
	gzip -c "$f" >"$OUT/kpred/$(basename "$f").gz"
done
cp tb/pred-* "$OUT/kpred/"
cp "$FIX"/pred/* "$OUT/kpred/"
cp "$FIX"/pred/* "$FIX"/roots/* "$OUT/kio_lines/"
gzip -c "$FIX/roots/ok-crlf-no-final-newline.txt" >"$OUT/kio_lines/roots.gz"

# roots files: the fixtures, a list with comments, blanks and a byte order
# mark, gzip'd; build-info with the values kbfs must refuse
cp "$FIX"/roots/* "$OUT/roots/"
printf '\357\273\277# roots\n  1\t\n\n010\r\n18446744073709551615\n' >"$OUT/roots/mixed.txt"
gzip -c "$OUT/roots/mixed.txt" >"$OUT/roots/mixed.txt.gz"
printf '1\n0x10\n' >"$OUT/roots/hex.txt"
printf 'construction_time = inf\ngeneration_time = nan\nread_time = 1e999\nbuild_time = 2.5\n' \
	>"$OUT/build_info/not-finite"
printf 'construction_time = 0.25\0junk\nprocesses = 4\n' >"$OUT/build_info/nul"
cp run.json "$OUT/run_json/"
cp "$FIX"/run/*.json "$OUT/run_json/"

# a gapbs serialized graph (undirected, 3 vertices, the path 0-1-2)
perl -e 'print pack("C Q< Q<", 0, 4, 3), pack("Q<*", 0, 1, 3, 4), pack("l<*", 1, 0, 2, 1)' >path3.sg
# the importers: every import fixture, in each format's harness
for d in auto sg; do
	cp path3.sg "$OUT/import_$d/"
done
for d in auto edgelist mtx metis dimacs sg; do
	for f in "$FIX"/import/*; do
		[ "$(wc -c <"$f")" -le 65536 ] && cp "$f" "$OUT/import_$d/"
	done
done
