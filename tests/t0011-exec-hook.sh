#!/bin/bash
# KBFS_EXEC reaches every program a test runs by name, as git's bin-wrappers
# do for --valgrind: directly, in a pipe, and under mpirun on every rank.  A
# logging prefix stands in for valgrind; lib.sh is sourced again under it.
. "$(dirname "$0")/lib.sh"
cat >"$T/logexec" <<LOG
#!/bin/sh
echo "\$(basename "\$1")" >>"$T/exec.log"
exec "\$@"
LOG
chmod +x "$T/logexec"
cat >"$T/inner.sh" <<'INNER'
. "$TOP/tests/lib.sh"
kgen -q -s 6 -o "$OUT/g.kg"
kgen -q -s 6 -f text | kstat - >/dev/null
kpart -q -R 1 -C 2 -o "$OUT/p" "$OUT/g.kg"
MPIRUN 2 kbfs -q -n 2 --pred-out "$OUT/pred" "$OUT/p" >/dev/null
kvalidate -q "$OUT/g.kg" "$OUT/pred"
INNER
mkdir "$T/o"
KBFS_EXEC=$T/logexec OUT=$T/o TOP=$TOP bash -c '. "$1"' "$TOP/tests/t0011-exec-hook.sh" "$T/inner.sh" >"$T/out" 2>"$T/err"
is "$?" 0 "the programs run under a KBFS_EXEC prefix"
sort "$T/exec.log" | uniq -c | awk '{print $2 "=" $1}' | tr '\n' ' ' >"$T/counts"
is "$(cat "$T/counts")" "kbfs=2 kgen=2 kpart=1 kstat=1 kvalidate=1 " \
	"every call went through the prefix: each rank of mpirun, both ends of a pipe"
ok "without KBFS_EXEC the wrappers run the programs as they are" sh -c "kgen --version | grep -q '^kgen (kbfs)'"
ok "the programs on PATH are the wrappers" sh -c "command -v kbfs | grep -q '/bin-wrappers/kbfs\$'"
done_testing
