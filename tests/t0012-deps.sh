#!/bin/bash
# The dependency check of make test: a python3 on PATH that does not run is
# named once, before any test (exit 1); a test that needs python3, run by
# hand beside such a python3, skips visibly instead of failing.
. "$(dirname "$0")/lib.sh"
mkdir "$T/stub"
printf '#!/bin/sh\necho "python3: broken" >&2\nexit 127\n' >"$T/stub/python3"
chmod +x "$T/stub/python3"
run_ok "with the tests' packages present, kbfs-deps.sh test passes" sh "$TOP/share/kbfs-deps.sh" test
PATH=$T/stub:$PATH sh "$TOP/share/kbfs-deps.sh" test >"$T/out" 2>"$T/err"
is "$?" 1 "a python3 that does not run: kbfs-deps.sh test exits 1"
is "$(wc -l <"$T/err")" 1 "... with one line"
ok "... naming that python3 and what the tests need it for" \
	grep -q "$T/stub/python3 does not run.*check JSON and SVG" "$T/err"
PATH=$T/stub:$PATH bash "$TOP/tests/t0110-kstat-edges.sh" >"$T/out" 2>&1
is "$?" 0 "t0110 beside that python3 exits 0"
ok "... skipping visibly (1..0 # skip, python3 named)" grep -q '^1\.\.0 # skip python3 does not run' "$T/out"
done_testing
