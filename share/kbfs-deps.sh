#!/bin/sh
# kbfs-deps.sh [test|fuzz|valgrind]: make sure the build dependencies are
# present (and for `make test` groff, which lints the man pages, and a
# python3 that runs, which checks JSON and SVG output; clang with libFuzzer
# for `make fuzz`, valgrind for `make test VALGRIND=1`).  On
# Debian/Ubuntu as root, installs what is missing (apt-get update once);
# otherwise prints the exact command to run and exits 1.
missing=""
need() { # need PACKAGE TEST...
	pkg=$1
	shift
	if ! "$@" >/dev/null 2>&1; then
		case " $missing " in *" $pkg "*) ;; *) missing="$missing $pkg" ;; esac
	fi
}
need build-essential sh -c 'command -v cc && command -v make'
need libopenmpi-dev sh -c 'command -v mpicc'
need openmpi-bin sh -c 'command -v mpirun'
need zlib1g-dev test -f /usr/include/zlib.h
need perl sh -c 'command -v prove'
case "${1:-}" in
test)
	need groff-base sh -c 'command -v groff'
	need python3 sh -c 'command -v python3'
	;;
fuzz) need clang sh -c 'command -v clang' ;;
valgrind) need valgrind sh -c 'command -v valgrind' ;;
esac
# python3 on PATH that does not run (a broken install, a stub) would fail
# the tests one by one: say so once (installing cannot mend it)
python_runs() {
	[ "${1:-}" = test ] || return 0
	python3 -c 'import json, xml.dom.minidom' >/dev/null 2>&1 && return 0
	echo "kbfs: $(command -v python3) does not run (python3 -c 'import json, xml.dom.minidom' fails);" \
		"the tests need it to check JSON and SVG output: repair it or put a working python3 first on PATH" >&2
	return 1
}
if [ -z "$missing" ]; then
	python_runs "${1:-}" || exit 1
	[ "${1:-}" = fuzz ] || exit 0
	# clang is there: can it link a libFuzzer harness?
	f=$(mktemp -d "${TMPDIR:-/tmp}/kbfs-deps.XXXXXX")
	printf 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n) { return 0; }\n' >"$f/t.c"
	if clang -fsanitize=fuzzer,address,undefined "$f/t.c" -o "$f/t" >/dev/null 2>&1; then
		rm -rf "$f"
		exit 0
	fi
	rm -rf "$f"
	v=$(clang --version | sed -n 's/.*clang version \([0-9]*\).*/\1/p' | head -1)
	echo "kbfs: clang cannot link -fsanitize=fuzzer: its libFuzzer runtime is missing" >&2
	echo "kbfs: run: sudo apt-get update && sudo apt-get install -y libclang-rt-$v-dev (or compiler-rt for clang $v)" >&2
	exit 1
fi
cmd="apt-get install -y --no-install-recommends$missing"
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
	echo "kbfs: installing missing packages:$missing" >&2
	export DEBIAN_FRONTEND=noninteractive
	if apt-get update -qq >&2 && apt-get install -y -qq --no-install-recommends $missing >&2; then
		python_runs "${1:-}" && exit 0
		exit 1
	fi
	echo "kbfs: package installation failed; run: sudo apt-get update && sudo $cmd" >&2
	exit 1
fi
echo "kbfs: missing packages:$missing" >&2
echo "kbfs: run: sudo apt-get update && sudo $cmd" >&2
exit 1
