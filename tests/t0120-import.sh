#!/bin/bash
# kgen --from: SNAP/GAP text, Matrix Market, METIS, gzip'd or not; id maps; bad input.
. "$(dirname "$0")/lib.sh"
I=$FIX/import

# import FILE: the summary line kgen prints on stderr
summary() { kgen --from "$1" -o "$T/g.kg" 2>&1 >/dev/null; }

for f in snap.txt snap.txt.gz; do
	kgen --from "$I/$f" -o "$T/g.kg" 2>"$T/err"
	stderr_has "11 lines read, 8 edges kept, 1 self-loops, 0 malformed lines skipped, 10 vertices" "$f: counts"
	run_ok "kstat reads the imported $f" kstat "$T/g.kg"
	ok "$f: 10 vertices, 8 edges" sh -c "grep -q '^vertices: *10$' '$T/out' && grep -q '^edges: *8$' '$T/out'"
done
kgen -q --from "$I/snap.txt" -f text -o "$T/snap.out"
is "$(grep -v '^#' "$I/snap.txt" | awk '{print $1, $2}' | cksum)" "$(cksum <"$T/snap.out")" "dense ids are kept as they are"

# sparse ids travel with the file; text output and the map print the input's ids
kgen -q --from "$I/sparse.txt" --map "$T/sparse.map" -o "$T/sparse.kg"
is "$(cat "$T/sparse.map" | tr '\n' ' ')" "0 7 1 42 2 1000000007 3 1000000009 " "--map writes internal original lines"
kgen -q --from "$I/sparse.txt" -f text -o "$T/sparse.out"
is "$(cksum <"$T/sparse.out")" "$(awk '{print $1, $2}' "$I/sparse.txt" | cksum)" "text output prints the input's own ids"
run_ok "kstat on the sparse graph" kstat "$T/sparse.kg"
ok "kstat names the input id of the top vertex" grep -q 'vertex 1000000007)' "$T/out"

# CSV as cuGraph and pandas write it: commas, a header of names, pandas'
# index column, weights, CRLF; each gives snap.txt's edges
grep -v '^#' "$I/snap.txt" | awk '{print $1 "," $2}' >"$T/plain.csv"
{ echo "src,dst"; cat "$T/plain.csv"; } >"$T/cugraph.csv"
{ echo ",src,dst"; awk '{print NR - 1 "," $0}' "$T/plain.csv"; } >"$T/pandas.csv"
{ echo "source, target, weight"; awk -F, '{print $1 ", " $2 ", 0.5"}' "$T/plain.csv"; } >"$T/weighted.csv"
{ printf 'src,dst\r\n'; sed 's/$/\r/' "$T/plain.csv"; } >"$T/crlf.csv"
{ printf 'FromNodeId\tToNodeId\n'; grep -v '^#' "$I/snap.txt"; } >"$T/header.tsv"
for f in plain.csv cugraph.csv pandas.csv weighted.csv crlf.csv header.tsv; do
	kgen --from "$T/$f" -f text -o "$T/csv.out" 2>"$T/err"
	is "$?" 0 "$f: imported"
	is "$(cksum <"$T/csv.out")" "$(cksum <"$T/snap.out")" "... the edges of snap.txt"
done
kgen -q --from "$I/pandas-index.csv" -f text -o "$T/csv.out"
is "$(cksum <"$T/csv.out")" "$(cksum <"$T/snap.out")" "pandas-index.csv (the fixture the import fuzzers start from): snap.txt's edges"
kgen --from "$T/pandas.csv" -o "$T/g.kg" 2>"$T/err"
stderr_has "'$T/pandas.csv' (edgelist, CSV, a header on line 1): 9 lines read, 8 edges kept" "... and kgen says it read a CSV with a header"
printf 'src,dst\n1,,2\n' >"$T/empty.csv"
must_fail 1 "a CSV line with an empty field" kgen --from "$T/empty.csv" -o "$T/g.kg"
stderr_has "empty.csv:2: an empty field in a CSV line" "... is named, not read as 1 2"
printf 'src,dst\n1,2\nx,y\n' >"$T/bad.csv"
must_fail 1 "a CSV with names past the header" kgen --from "$T/bad.csv" -o "$T/g.kg"
printf 'abc\n1 2\n' >"$T/word.txt"
must_fail 1 "a first line of one word is no header" kgen --from "$T/word.txt" -o "$T/g.kg"
run_ok "kstat reads a CSV too" kstat "$T/cugraph.csv"
ok "... 10 vertices, 8 edges" sh -c "grep -q '^vertices: *10$' '$T/out' && grep -q '^edges: *8$' '$T/out'"

for f in mtx-sym.mtx mtx-sym.mtx.gz; do
	kgen --from "$I/$f" -o "$T/m.kg" 2>"$T/err"
	stderr_has "(mtx): 9 lines read, 6 edges kept, 1 self-loops" "$f: Matrix Market symmetric counts"
done
kgen -q --from "$I/mtx-sym.mtx" -f text -o "$T/m.txt"
ok "Matrix Market ids stay 1-based" sh -c "! grep -qw 0 '$T/m.txt'"
for f in metis.graph metis.graph.gz metis-ew.graph metis-vw.graph.gz; do
	kgen --from "$I/$f" -o "$T/me.kg" 2>"$T/err"
	stderr_has "(metis):" "$f: detected as METIS"
done
kgen --from "$I/metis.graph" -o "$T/me.kg" 2>"$T/err"
stderr_has "6 edges kept, 0 self-loops, 0 malformed lines skipped, 6 vertices" "METIS counts (isolated vertex kept)"
# stdin, gzip'd
kgen --from - -o "$T/s.kg" <"$I/snap.txt.gz" 2>"$T/err"
stderr_has "8 edges kept" "gzip'd standard input"

# malformed input: file:line: reason, exit 1; --skip-bad goes on
must_fail 1 "a bad token stops with file:line" kgen --from "$I/bad-token.txt" -o "$T/x.kg"
stderr_has "bad-token.txt:2: " "names the file and the line"
ok "nothing written after a failed import" test ! -e "$T/x.kg"
kgen --from "$I/bad-token.txt" --skip-bad -o "$T/x.kg" 2>"$T/err"
stderr_has "1 malformed lines skipped" "--skip-bad counts and skips"
must_fail 1 "a negative id" kgen --from "$I/negative-id.txt" -o "$T/x.kg"
must_fail 1 "a line with a single id" kgen --from "$I/single-id.txt" -o "$T/x.kg"
must_fail 1 "no edges" kgen --from "$I/no-edges.txt" -o "$T/x.kg"
must_fail 1 "a truncated gzip file" kgen --from "$I/truncated.txt.gz" -o "$T/x.kg"
must_fail 1 "a corrupt gzip file" kgen --from "$I/corrupt.txt.gz" -o "$T/x.kg"
must_fail 1 "a bad Matrix Market header" kgen --from "$I/mtx-bad-header.mtx" -o "$T/x.kg"
must_fail 1 "a Matrix Market entry out of range" kgen --from "$I/mtx-entry-out-of-range.mtx" -o "$T/x.kg"
stderr_has "mtx-entry-out-of-range.mtx:[0-9]*: " "names the line"
must_fail 1 "too few Matrix Market entries" kgen --from "$I/mtx-too-few-entries.mtx" -o "$T/x.kg"
must_fail 1 "a METIS edge-count mismatch" kgen --from "$I/metis-edge-count-mismatch.graph" -o "$T/x.kg"
must_fail 1 "a METIS neighbour out of range (forced format)" kgen --import-format metis --from "$I/metis-neighbour-out-of-range.graph" -o "$T/x.kg"
must_fail 3 "a missing input" kgen --from "$T/nope.txt" -o "$T/x.kg"
must_fail 2 "--map without --from" kgen -s 4 --map "$T/m"
must_fail 2 "-s with --from" kgen -s 4 --from "$I/snap.txt"
must_fail 2 "a bad --import-format" kgen --from "$I/snap.txt" --import-format xml

# the real METIS graphs of Debian's libmetis-doc (GRAPH500.md section 7)
if G=$(fetch_metis); then
	for g in 4elt copter2 mdual; do
		f=$G/$g.graph
		[ -f "$f" ] || f=$G/$g.graph.gz
		n=$(zcat -f "$f" | grep -v '^%' | head -1 | awk '{print $1}')
		m=$(zcat -f "$f" | grep -v '^%' | head -1 | awk '{print $2}')
		kgen --from "$f" -o "$T/$g.kg" 2>"$T/err"
		stderr_has "$m edges kept, 0 self-loops, 0 malformed lines skipped, $n vertices" "$g: $n vertices, $m edges"
	done
else
	skip "cannot fetch libmetis-doc (apt-get download): real METIS graphs"
fi
done_testing
