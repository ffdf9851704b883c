#!/bin/sh
# layers.sh: libcommon's layers kept (libcommon/README.md says what they are).
#
#   sh tests/tools/layers.sh [-C TOP] [--objects BUILD]
#
# Reads the layer table of TOP/libcommon/README.md (its rows "| N | name/ |
# ...": a layer's number and folder, lowest first) and checks every
# #include "..." of TOP/libcommon/*/*.[ch]: the header must be one of
# libcommon's, in the includer's layer or a lower one.  An include of a
# header of a higher layer climbs; one of cmd/ or gpu/ (or of no file of
# libcommon at all) reaches outside; both fail.  build/kbuild.h, which the
# Makefile writes, is the one header from outside that any file may include.
# With --objects, the objects of those sources (BUILD/libcommon/LAYER/*.o,
# made by make) are checked the same way at link level (nm): no object uses a symbol that an object of a higher
# layer defines, and no objects call each other in a circle (A uses B, B
# uses ... A).  Prints one line per violation and a summary; exit 1 on any,
# 2 on a usage error or a missing table.
top=.
objs=
while [ $# -gt 0 ]; do
	case $1 in
	-C) top=$2; shift 2 ;;
	--objects) objs=$2; shift 2 ;;
	*) echo "usage: layers.sh [-C TOP] [--objects BUILD]" >&2; exit 2 ;;
	esac
done
lib=$top/libcommon
table=$(awk -F'|' '$2 ~ /^ *[0-9]+ *$/ { n = $2; d = $3; gsub(/[ `\/]/, "", n); gsub(/[ `\/]/, "", d); print n, d }' \
	"$lib/README.md" 2>/dev/null)
if [ -z "$table" ]; then
	echo "layers.sh: no layer table in $lib/README.md" >&2
	exit 2
fi
bad=0

# ---- includes ----
# every header of libcommon, as "name layer"; then every include, as
# "file line layer header"; awk decides
heads=$(for f in "$lib"/*/*.h; do d=${f%/*}; echo "${f##*/} ${d##*/}"; done)
outside=$(cd "$top" && find cmd gpu -name '*.h' -o -name '*.cuh' 2>/dev/null | sed 's|.*/||' | sort -u)
out=$(for f in "$lib"/*/*.c "$lib"/*/*.h; do
	d=${f%/*}
	grep -n '^[ 	]*#[ 	]*include[ 	]*"' "$f" | sed "s|^\([0-9]*\):.*\"\(.*\)\".*|${f#"$top"/} \1 ${d##*/} \2|"
done | awk -v table="$table" -v heads="$heads" -v outside="$outside" '
BEGIN {
	n = split(table, t, "\n"); for (i = 1; i <= n; i++) { split(t[i], p, " "); rank[p[2]] = p[1] + 0 }
	n = split(heads, t, "\n"); for (i = 1; i <= n; i++) { split(t[i], p, " "); if (p[1] in where) dup[p[1]] = 1; where[p[1]] = p[2] }
	n = split(outside, t, "\n"); for (i = 1; i <= n; i++) out[t[i]] = 1
}
{
	file = $1; line = $2; mine = $3; h = $4; total++
	if (!(mine in rank)) { printf "%s: the folder %s is not a layer of libcommon/README.md\n", file, mine; bad++; next }
	if (h == "kbuild.h") next
	if (h ~ /\//) { printf "%s:%s: includes \"%s\": a path; libcommon includes its headers by name\n", file, line, h; bad++; next }
	if (!(h in where)) {
		printf "%s:%s: includes \"%s\", %s\n", file, line, h, (h in out) ? "a header of cmd/ or gpu/: libcommon never reaches into them" : "not a header of libcommon"
		bad++; next
	}
	if (h in dup) { printf "%s:%s: includes \"%s\", a name two layers have\n", file, line, h; bad++; next }
	if (rank[where[h]] > rank[mine]) {
		printf "%s:%s: includes \"%s\" of %s/, a layer above %s/ (it climbs)\n", file, line, h, where[h], mine
		bad++
	}
}
END { printf "layers: %d includes in libcommon checked, %d wrong\n", total, bad; exit bad > 0 }')
rc=$?
echo "$out"
[ $rc = 0 ] || bad=1

# ---- objects ----
if [ -n "$objs" ]; then
	# the objects of the sources there are (not those of files gone)
	set --
	for f in "$lib"/*/*.c; do
		d=${f%/*}
		o=$objs/libcommon/${d##*/}/$(basename "$f" .c).o
		if [ ! -f "$o" ]; then
			echo "layers.sh: $o is not built (run make first)" >&2
			exit 2
		fi
		set -- "$@" "$o"
	done
	out=$(for o in "$@"; do d=${o%/*}; n=${o##*/}; nm "$o" | awk -v f="${d##*/}/${n%.o}" '
		NF == 2 && $1 == "U" { print "U", f, $2 }
		NF == 3 && $2 ~ /^[TDRBCV]$/ { print "D", f, $3 }'
	done | awk -v table="$table" '
	BEGIN { n = split(table, t, "\n"); for (i = 1; i <= n; i++) { split(t[i], p, " "); rank[p[2]] = p[1] + 0 } }
	$1 == "D" { def[$3] = $2; files[$2] = 1; next }
	{ use[++nu] = $2 " " $3; files[$2] = 1 }
	function layer(f) { sub(/\/.*/, "", f); return f }
	END {
		for (i = 1; i <= nu; i++) {
			split(use[i], p, " "); f = p[1]; s = p[2]
			if (!(s in def) || def[s] == f) continue
			g = def[s]
			if (rank[layer(g)] > rank[layer(f)]) {
				printf "%s.o uses %s of %s.o, a layer above it\n", f, s, g; bad++
			}
			if (!((f, g) in edge)) { edge[f, g] = 1; out[f] = out[f] " " g }
		}
		# peel: a file whose callees are all gone goes; what never goes is
		# in a circle or calls into one
		do {
			gone = 0
			for (f in files) {
				if (f in peeled) continue
				m = split(out[f], c, " "); left = 0
				for (k = 1; k <= m; k++) if (!(c[k] in peeled)) left = 1
				if (!left) { peeled[f] = 1; gone = 1 }
			}
		} while (gone)
		for (f in files) {
			if (f in peeled) continue
			m = split(out[f], c, " "); left = ""
			for (k = 1; k <= m; k++) if (!(c[k] in peeled)) left = left " " c[k] ".o"
			printf "%s.o is in a circle of calls, or calls into one (it uses%s)\n", f, left; bad++
		}
		printf "layers: %d objects of libcommon checked, %d wrong\n", length(files), bad
		exit bad > 0
	}')
	rc=$?
	echo "$out"
	[ $rc = 0 ] || bad=1
fi
exit $bad
