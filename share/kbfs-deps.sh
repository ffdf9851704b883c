#!/bin/sh
# kbfs-deps.sh: make sure the build and test dependencies are present.
# On Debian/Ubuntu as root, installs what is missing (apt-get update once);
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
[ -z "$missing" ] && exit 0
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
