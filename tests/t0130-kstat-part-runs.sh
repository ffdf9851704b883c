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
# one search: the root of median time, each level's bar labelled with its direction
med=$(python3 -c "
import json; r=json.load(open('$T/r1.json'))['roots']; r=sorted(r, key=lambda x: x['time'])[(len(r)-1)//2]
print(r['root'], ' '.join('%d %s' % (l['level'], 'TD' if l['direction'] == 'top-down' else 'BU') for l in r['levels']))")
is "$(sed -n 's/.*<title>Levels of root \([0-9]*\), the median time of 8.*/\1/p' "$T/lv.svg") $(grep -o '>[0-9]* [TB][DU]</text>' "$T/lv.svg" | tr -d '<>/' | sed 's/text$//' | tr '\n' ' ' | sed 's/ $//')" \
	"$med" "breakdown: the median root's levels, each labelled TD or BU as the JSON says"
run_ok "kstat --svg on two runs (TEPS against ranks)" kstat --svg "$T/sc.svg" "$T/r1.json" "$T/r2.json"
ok "scaling SVG is well-formed" python3 -c "import xml.dom.minidom; xml.dom.minidom.parse('$T/sc.svg')"
ok "scaling: each point labelled with its grid" sh -c "grep -q '>1x1</text>' '$T/sc.svg' && grep -q '>1x2</text>' '$T/sc.svg'"
run_ok "kstat --json on two runs" kstat --json "$T/r1.json" "$T/r2.json"
ok "JSON array of two runs with TEPS" python3 -c "
import json; d=json.load(open('$T/out')); assert len(d)==2 and d[0]['harmonic_mean_teps']>0 and d[1]['ranks']==2, d"
echo '{"program": "other", "roots": []}' >"$T/other.json"
must_fail 1 "a JSON document that is not a kbfs run" kstat "$T/other.json"
printf '{"program": "kbfs", "roots": [' >"$T/trunc.json"
must_fail 1 "a truncated run report" kstat "$T/trunc.json"
done_testing
