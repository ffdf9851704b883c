#!/bin/bash
# Every man page renders without a warning (groff -ww, the man macros,
# tables through tbl), at the terminal's width too, and holds no raw
# control byte (a form feed where "\f" was meant renders as garbage).
. "$(dirname "$0")/lib.sh"
command -v groff >/dev/null || skip_all "no groff (package groff-base; make test installs it)"
for p in "$TOP"/man/*.[157]; do
	n=${p##*/}
	run_ok "$n: groff -ww -z -t -man, no warning" sh -c "groff -ww -z -t -man '$p' 2>&1 | grep . >&2 && exit 1 || exit 0"
	run_ok "$n: rendered at 78 columns, no warning" \
		sh -c "LC_ALL=C.UTF-8 groff -t -man -Tutf8 -ww -rLL=78n '$p' 2>&1 >/dev/null | grep . >&2 && exit 1 || exit 0"
	is "$(LC_ALL=C grep -nP '[\x00-\x08\x0b-\x1f\x7f]' "$p" | cut -d: -f1 | tr '\n' ' ')" "" \
		"$n: no control byte but tab and newline (lines listed)"
done
done_testing
