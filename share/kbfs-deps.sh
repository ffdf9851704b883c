#!/bin/sh
# kbfs-deps.sh [test|fuzz|valgrind]: make sure the build dependencies are
# present (and groff for `make test`, which lints the man pages; clang with
# libFuzzer for `make fuzz`, valgrind for `make test VALGRIND=1`).  On
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
	;;
fuzz) need clang sh -c 'command -v clang' ;;
valgrind) need valgrind sh -c 'command -v valgrind' ;;
esac
if [ -z "$missing" ]; then
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
	apt-get update -qq >&2 && apt-get install -y -qq --no-install-recommends $missing >&2 && exit 0
	echo "kbfs: package installation failed; run: sudo apt-get update && sudo $cmd" >&2
	exit 1
fi
echo "kbfs: missing packages:$missing" >&2
echo "kbfs: run: sudo apt-get update && sudo $cmd" >&2
exit 1
