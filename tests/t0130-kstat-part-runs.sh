#!/bin/bash
# kstat on partitions (per-rank table, JSON, heat map) and on kbfs run reports.
. "$(dirname "$0")/lib.sh"
need_mpi
need_python
kgen -s 12 -o "$T/g.kg"
kpart -q -R 2 -C 3 -o "$T/g.2x3" "$T/g.kg"
run_ok "kstat DIR" kstat "$T/g.2x3"
ok "names the grid and sizes" grep -q '2x3 grid, 4096 vertices' "$T/out"
is "$(grep -cE '^ +[0-9]+ +[01] +[012] ' "$T/out")" "6" "one line per rank"
ok "reports the imbalance" grep -q '^edge imbalance (max/mean nnz): ' "$T/out"
run_ok "kstat --json DIR" kstat --json "$T/g.2x3"
ok "JSON: six ranks whose edges add up" python3 -c "
import json; d=json.load(open('$T/out')); assert len(d['ranks'])==6
assert sum(r['nnz'] for r in d['ranks'])==d['nnz'], d"
run_ok "kstat --svg DIR" kstat --svg "$T/hm.svg" "$T/g.2x3"
ok "heat map SVG is well-formed" python3 -c "import xml.dom.minidom; xml.dom.minidom.parse('$T/hm.svg')"
imb=$(kstat "$T/g.2x3" | sed -n 's/^edge imbalance (max\/mean nnz): //p')
is "$(sed -n 's/.*<title>Adjacency entries per rank (an edge is two) of .* (2 x 3), largest\/mean \([0-9.]*\)<\/title>.*/\1/p' "$T/hm.svg")" \
	"$(printf '%.3g' "$imb")" "heat map: titled adjacency entries (not edges), with kstat's imbalance"
ok "... its colour bar labelled, from 0" sh -c "grep -q '>adjacency entries per rank</text>' '$T/hm.svg' && grep -q '>0</text>' '$T/hm.svg'"
must_fail 1 "a directory without a manifest is not a partition" kstat "$T"
stderr_has "manifest" "names the missing manifest"

# runs
kpart -q -R 1 -C 2 -o "$T/g.1x2" "$T/g.kg"
MPIRUN 2 kbfs -q --threads 1 -n 8 --json "$T/r2.json" "$T/g.1x2" >"$T/block2"
kpart -q -R 1 -C 1 -o "$T/g.1x1" "$T/g.kg"
MPIRUN 1 kbfs -q --threads 1 -n 8 --json "$T/r1.json" "$T/g.1x1" >"$T/block1"
run_ok "kstat RUN.json" kstat "$T/r1.json"
ok "the block equals the one kbfs printed" cmp -s "$T/out" "$T/block1"
run_ok "kstat --svg on one run (per-level breakdown)" kstat --svg "$T/lv.svg" "$T/r1.json"
ok "breakdown SVG is well-formed and names the phases" sh -c "python3 -c \"import xml.dom.minidom; xml.dom.minidom.parse('$T/lv.svg')\" && grep -q expand '$T/lv.svg'"
is "$(grep -o '>[a-z]*: [^<]*</text>' "$T/lv.svg" | sed 's/^>\([a-z]*\):.*/\1/' | sort | tr '\n' ' ')" \
	"allreduce expand fold local sv update " "... each phase explained in the legend (\"sv: visited bits shared ...\")"
# one search: the root of median time, each level's bar labelled with its direction
med=$(python3 -c "
import json; r=json.load(open('$T/r1.json'))['roots']; r=sorted(r, key=lambda x: x['time'])[(len(r)-1)//2]
print(r['root'], ' '.join('%d %s' % (l['level'], 'TD' if l['direction'] == 'top-down' else 'BU') for l in r['levels']))")
is "$(sed -n 's/.*<title>Levels of root \([0-9]*\), the median time of 8.*/\1/p' "$T/lv.svg") $(grep -o '>[0-9]* [TB][DU]</text>' "$T/lv.svg" | tr -d '<>/' | sed 's/text$//' | tr '\n' ' ' | sed 's/ $//')" \
	"$med" "breakdown: the median root's levels, each labelled TD or BU as the JSON says"
run_ok "kstat --svg on two runs (TEPS against ranks)" kstat --svg "$T/sc.svg" "$T/r1.json" "$T/r2.json"
ok "scaling SVG is well-formed" python3 -c "import xml.dom.minidom; xml.dom.minidom.parse('$T/sc.svg')"
ok "scaling: each point labelled with its grid" sh -c "grep -q '>1x1</text>' '$T/sc.svg' && grep -q '>1x2</text>' '$T/sc.svg'"
ok "scaling: one graph, one series (Kronecker scale 12)" \
	sh -c "grep -c '>Kronecker scale 12, edgefactor 16, best grid</text>' '$T/sc.svg' | grep -qx 1"
# an imported graph of the same scale (ceil(log2 nv) = 12): its own series,
# never merged with the Kronecker graph's
kgen -q --from "$T/g.kg" -f text -o "$T/real.txt"
kgen -q --from "$T/real.txt" -o "$T/real.kg"
kpart -q -R 1 -C 1 -o "$T/real.1x1" "$T/real.kg"
MPIRUN 1 kbfs -q --threads 1 -n 8 --json "$T/rr.json" "$T/real.1x1" >/dev/null
is "$(python3 -c "import json; d=json.load(open('$T/rr.json')); g=d['graph']; print(d['scale'], g['kind'], g['name'], g['source_crc32'] == open('$T/real.1x1/manifest').read().split('source_crc32 = ')[1].split()[0])")" \
	"12 import real.txt True" "the record names the graph: kind, the imported file, the edge file's CRC"
is "$(python3 -c "import json; g=json.load(open('$T/r1.json'))['graph']; print(g['kind'], g['name'])")" \
	"kronecker Kronecker scale 12, edgefactor 16" "... and a generated graph by its parameters"
run_ok "kstat --svg on a Kronecker and a real graph of one scale" kstat --svg "$T/sc2.svg" "$T/r1.json" "$T/r2.json" "$T/rr.json"
is "$(grep -o '>[^<]*best grid</text>' "$T/sc2.svg" | sort | tr '\n' ';')" \
	">Kronecker scale 12, edgefactor 16, best grid</text>;>real.txt (scale 12), best grid</text>;" \
	"... two series, one per graph, each named"
# two imported files of one name that differ: told apart by their CRC
mkdir "$T/other"
head -n 20000 "$T/real.txt" >"$T/other/real.txt"
kgen -q --from "$T/other/real.txt" -o "$T/other/real.kg"
kpart -q -R 1 -C 1 -o "$T/other/real.1x1" "$T/other/real.kg"
MPIRUN 1 kbfs -q --threads 1 -n 4 --json "$T/ro.json" "$T/other/real.1x1" >/dev/null
kstat --svg "$T/sc3.svg" "$T/rr.json" "$T/ro.json" >/dev/null
is "$(grep -c '>real.txt (scale 12) \[crc32 [0-9a-f]\{8\}\], best grid</text>' "$T/sc3.svg")" 2 \
	"two graphs of one name: two series, each with its CRC"
MPIRUN 1 kbfs -q --threads 1 -n 8 --json "$T/r1b.json" "$T/g.1x1" >/dev/null
kstat --svg "$T/sc4.svg" "$T/r1.json" "$T/r1b.json" >/dev/null
ok "the same grid run twice: the better on the line, the other a point of 'other runs'" \
	sh -c "grep -q '>Kronecker scale 12, edgefactor 16, other runs</text>' '$T/sc4.svg' && ! grep -q 'other grids' '$T/sc4.svg'"
run_ok "kstat --json on two runs" kstat --json "$T/r1.json" "$T/r2.json"
ok "JSON array of two runs with TEPS" python3 -c "
import json; d=json.load(open('$T/out')); assert len(d)==2 and d[0]['harmonic_mean_teps']>0 and d[1]['ranks']==2, d
assert d[0]['graph'] == 'Kronecker scale 12, edgefactor 16', d"
echo '{"program": "other", "roots": []}' >"$T/other.json"
must_fail 1 "a JSON document that is not a kbfs run" kstat "$T/other.json"
printf '{"program": "kbfs", "roots": [' >"$T/trunc.json"
must_fail 1 "a truncated run report" kstat "$T/trunc.json"
done_testing
