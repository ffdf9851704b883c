#!/bin/bash
# kbfs on real graphs: the METIS finite-element graphs of Debian's libmetis-doc
# (4elt, copter2, mdual; 1-based ids, deep BFS trees), imported with kgen --from,
# searched on several grids and in every direction mode.  Trees must validate
# and depths must equal an independent serial BFS, in the input's own ids.
. "$(dirname "$0")/lib.sh"
need_mpi
need_python
G=$(fetch_metis) || skip_all "cannot fetch libmetis-doc with apt-get download"
REF=$T/kbfs-refbfs
cc -O2 -o "$REF" "$TOP/tests/tools/kbfs-refbfs.c" || { echo "Bail out! cannot build kbfs-refbfs"; exit 1; }
export OMP_NUM_THREADS=1

json_roots() { sed -n 's/^      "root": \([0-9]*\),$/\1/p' "$1"; }
# same_depths_1based OUT REF: each kbfs depth file equals the serial one (vertex 0,
# absent from 1-based inputs, dropped from the reference)
same_depths_1based() {
	local f n=0
	for f in "$1"/depth-*.txt; do
		grep -v '^0 ' "$2/$(basename "$f")" | cmp -s "$f" - || { echo "#   $f differs"; return 1; }
		n=$((n + 1))
	done
	[ "$n" -gt 0 ]
}

for g in 4elt copter2 mdual; do
	f=$G/$g.graph
	kgen -q --from "$f" -o "$T/$g.kg" || { echo "Bail out! import $g"; exit 1; }
	kgen -q --from "$f" -f text -o "$T/$g.txt"
	nv=$(zcat -f "$f" | grep -v '^%' | head -1 | awk '{print $1}')
	grids="1x1 2x2 1x3"
	[ $g = mdual ] && grids="2x2"
	for grid in $grids; do
		r=${grid%x*} c=${grid#*x}
		kpart -q -R $r -C $c -o "$T/$g.$grid" "$T/$g.kg"
		for dir in auto top-down bottom-up; do
			[ $g = mdual ] && [ $dir != auto ] && continue
			rm -rf "$T/d" "$T/p" "$T/ref"
			run_ok "$g $grid $dir: kbfs validates every tree" MPIRUN $((r * c)) kbfs -q -n 4 --direction $dir \
				--json "$T/j.json" --depth-out "$T/d" --pred-out "$T/p" "$T/$g.$grid"
			mkdir -p "$T/ref"
			"$REF" -n $((nv + 1)) -o "$T/ref" "$T/$g.txt" $(json_roots "$T/j.json") >"$T/ref.nedge"
			ok "$g $grid $dir: depths equal the serial BFS (input ids)" same_depths_1based "$T/d" "$T/ref"
			python3 -c "import json; d=json.load(open('$T/j.json'))
print('\n'.join('%d %d' % (r['root'], r['nedge']) for r in d['roots']))" >"$T/k.nedge"
			ok "$g $grid $dir: nedge equals the serial count" cmp -s "$T/k.nedge" "$T/ref.nedge"
		done
	done
	run_ok "$g: kvalidate accepts kbfs's trees against the imported file" kvalidate -q "$T/$g.kg" "$T/p"
done
done_testing
