#!/bin/bash
# man/kpart.1 and man/kpart.5 render cleanly and have the sections they need.
. "$(dirname "$0")/lib.sh"
command -v groff >/dev/null || skip_all "no groff"
M=$TOP/man
for p in kpart.1 kpart.5; do
	run_ok "$p renders without warnings" sh -c "groff -t -man -Tutf8 -ww -rLL=78n '$M/$p' 2>&1 >/dev/null | grep . >&2 && exit 1 || exit 0"
done
groff -t -man -Tutf8 "$M/kpart.1" 2>/dev/null | sed 's/.\x08//g' >"$T/k1"
for s in NAME SYNOPSIS DESCRIPTION OPTIONS "EXIT STATUS" EXAMPLES "SEE ALSO"; do
	ok "kpart(1) has $s" grep -q "^$s" "$T/k1"
done
for c in 0 1 2 3 4; do
	ok "kpart(1) documents exit status $c" sh -c "awk '/^EXIT STATUS/,/^ENVIRONMENT/' '$T/k1' | grep -q '^ *$c  '"
done
# every long option of --help is in the man page
for o in $(kpart --help | grep -o -- '--[a-z][a-z-]*' | sort -u); do
	ok "kpart(1) documents $o" grep -q -- "$o" "$T/k1"
done
groff -t -man -Tutf8 "$M/kpart.5" 2>/dev/null | sed 's/.\x08//g' >"$T/k5"
for w in "89 4B 50 41 52 54 0D 0A" "KEND" "checksum =" "rank.NNNNN.crc32" "colptr" "colidx" "tdeg" "orig" "build-info"; do
	ok "kpart(5) describes $w" grep -q -- "$w" "$T/k5"
done
done_testing
