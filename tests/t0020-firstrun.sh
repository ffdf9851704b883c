#!/bin/bash
# A newcomer's first runs: the README's commands as written (a smaller
# scale), as root and as a normal user, without the Open MPI settings the
# other tests export; make demo's script; the Slurm example under a
# stand-in srun.
. "$(dirname "$0")/lib.sh"
need_mpi
# what a user's shell has: none of lib.sh's Open MPI settings
UENV=(env -u OMPI_ALLOW_RUN_AS_ROOT -u OMPI_ALLOW_RUN_AS_ROOT_CONFIRM -u OMPI_MCA_rmaps_base_oversubscribe)
user_env() { "${UENV[@]}" "$@"; }
# readme_block HEADING: the indented command lines of the README paragraphs
# from the one starting with HEADING up to the next bold heading
readme_block() {
	awk -v h="$1" 'index($0, h) == 1 {on = 1; next} on && /^\*\*/ {exit} on && /^    / {print substr($0, 5)}' "$TOP/README.md"
}
# as_user CMD...: CMD as an unprivileged user when we are root (setpriv; the
# programs copied where that user can reach them), else as we are
as_user() {
	if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
		mkdir -p "$T/ubin" && cp "$BIN"/k* "$T/ubin/" && chmod -R a+rX "$T/ubin"
		setpriv --reuid=65534 --regid=65534 --clear-groups "${UENV[@]}" HOME="$PWD" PATH="$T/ubin:$PATH" "$@"
	else
		"${UENV[@]}" "$@"
	fi
}
chmod 711 "$T"

readme_block '**A laptop' | sed 's/-s 20 /-s 12 /' >"$T/laptop.sh"
ok "the README shows the laptop commands (kgen, kpart, mpirun ... kbfs)" \
	sh -c "grep -q '^kgen -s 12 ' '$T/laptop.sh' && grep -q '^mpirun .*kbfs' '$T/laptop.sh'"
mkdir "$T/laptop"
(cd "$T/laptop" && user_env bash -e ../laptop.sh) >"$T/out" 2>"$T/err"
is "$?" 0 "the laptop commands run as written ($(id -un), $(nproc) cores)"
ok "... and leave the run's JSON and plot" test -s "$T/laptop/run.json" -a -s "$T/laptop/levels.svg"

# the real-graph commands, on the fixture of several components for Enron
readme_block '**A real graph' | sed "s|email-Enron.txt.gz|$FIX/import/components.txt|" >"$T/real.sh"
ok "the README shows the real-graph commands (kgen --from, kpart, kbfs --roots-from largest)" \
	sh -c "grep -q '^kgen --from ' '$T/real.sh' && grep -q -- '--roots-from largest' '$T/real.sh'"
mkdir "$T/real"
(cd "$T/real" && user_env bash -e ../real.sh) >"$T/out" 2>"$T/err"
is "$?" 0 "the real-graph commands run as written"
ok "... the first run warns of the roots in small components" grep -q 'warning: .* roots reached fewer than 1%' "$T/err"
ok "... the second draws from the largest component" grep -q 'roots from the component of vertex' "$T/err"

readme_block '**A workstation with GPUs' | sed 's/-s 26 /-s 12 /' >"$T/gpu.sh"
ok "the README shows the workstation commands (dry run, then the run)" \
	sh -c "grep -q -- '--dry-run' '$T/gpu.sh' && grep -q '^mpirun -np 2 .*kbfs --json' '$T/gpu.sh'"
if [ "$(id -u)" != 0 ] || command -v setpriv >/dev/null; then
	mkdir "$T/ws" && chmod 777 "$T/ws"
	(cd "$T/ws" && as_user bash -e ../gpu.sh) >"$T/out" 2>"$T/err"
	is "$?" 0 "the workstation commands run as written as a normal user (the CPU engine here)"
	ok "... and write the JSON record" test -s "$T/ws/run.json"
else
	skip "root without setpriv: cannot run as a normal user"
fi

# make demo's script: a directory of its own, nothing left in TMPDIR
mkdir "$T/tmp"
user_env TMPDIR="$T/tmp" DEMO_DIR="$T/demo" DEMO_SCALE=10 sh "$TOP/share/demo.sh" >"$T/out" 2>"$T/err"
is "$?" 0 "share/demo.sh runs"
ok "the demo prints its commands, PATH first" sh -c "head -1 '$T/err' | grep -q 'export PATH='"
ok "the demo leaves its files in DEMO_DIR" test -s "$T/demo/run.json"
ok "... and nothing in TMPDIR" sh -c "! ls -A '$T/tmp' | grep -q ."
ok "... and prints the redirections with the commands, as typed" \
	sh -c "grep -q -- '^+ mpirun .* --depth-out - $T/demo/g.2x2 >$T/demo/depths.txt\$' '$T/err' &&
		grep -q -- '^+ kstat --svg .* >/dev/null\$' '$T/err'"
# the installed demo: the programs on PATH, its files in ./kbfs-demo, the
# install tree left as it was
if env -u MAKEFLAGS -u MFLAGS make -s -C "$TOP" install-files PREFIX=/usr DESTDIR="$T/stage" >/dev/null 2>&1; then
	chmod -R a+rX "$T/stage"
	tree() { (cd "$T/stage" && find . -exec ls -ld --time-style=+%s {} + | sort -k 9 | md5sum); }
	before=$(tree)
	mkdir "$T/cwd" && chmod 777 "$T/cwd"
	(cd "$T/cwd" && as_user env PATH="$T/stage/usr/bin:$PATH" DEMO_SCALE=10 sh "$T/stage/usr/share/kbfs/demo.sh") >"$T/out" 2>"$T/err"
	is "$?" 0 "the installed demo.sh runs from another directory"
	ok "... writes ./kbfs-demo there" test -s "$T/cwd/kbfs-demo/run.json" -a -s "$T/cwd/kbfs-demo/depths.txt"
	is "$(tree)" "$before" "... and nothing in the install tree"
	(cd "$T/cwd" && as_user env PATH="$T/stage/usr/bin:$PATH" DEMO_SCALE=10 sh "$T/stage/usr/share/kbfs/demo.sh") >"$T/out" 2>"$T/err"
	is "$?" 0 "... a second run replaces its own kbfs-demo"
	mkdir "$T/cwd2" "$T/cwd2/kbfs-demo" && touch "$T/cwd2/kbfs-demo/mine" && chmod -R 777 "$T/cwd2"
	(cd "$T/cwd2" && as_user env PATH="$T/stage/usr/bin:$PATH" DEMO_SCALE=10 sh "$T/stage/usr/share/kbfs/demo.sh") >"$T/out" 2>"$T/err"
	is "$? $(wc -l <"$T/err")" "3 1" "... but refuses, in one line, a kbfs-demo that is not an earlier demo's"
	ok "... and leaves it alone" test -f "$T/cwd2/kbfs-demo/mine"
else
	ok "make install-files" false
fi

# the Slurm example, srun standing in as mpirun -np $SLURM_NTASKS
mkdir -p "$T/sb/bin"
cat >"$T/sb/bin/srun" <<'SRUN'
#!/bin/sh
while [ $# -gt 0 ]; do case $1 in --*) shift ;; *) break ;; esac; done
exec mpirun --allow-run-as-root --oversubscribe -np "$SLURM_NTASKS" "$@"
SRUN
chmod +x "$T/sb/bin/srun"
(cd "$T/sb" && PATH=$T/sb/bin:$PATH SLURM_NTASKS=4 SLURM_JOB_ID=7 SLURM_CPUS_PER_TASK=1 SCALE=11 \
	bash "$TOP/share/kbfs.sbatch") >"$T/out" 2>"$T/err"
is "$?" 0 "share/kbfs.sbatch runs (4 tasks, scale 11)"
ok "... on a 2x2 grid, with its JSON record" test -d "$T/sb/kbfs-s11/g.2x2" -a -s "$T/sb/kbfs-s11/run-7.json"
ok "... and the statistics block in the job's output" grep -q 'harmonic_mean_TEPS' "$T/out"
done_testing
