#!/bin/sh
# mk/packages.sh GOAL: make sure the Debian packages GOAL needs are
# installed (GOAL: demo, test, bench or deb).  Missing ones are installed with
# apt-get, through sudo when not root; when neither is possible, one
# message lists them and the command that installs them.  Quiet when
# nothing is missing.  (test: debhelper, dpkg-dev, fakeroot and
# postgresql-server-dev-all build the Debian package with pg_buildext, jq
# and unzip check the PGXN distribution; mk/package.mk.)
set -eu
goal=${1:?usage: mk/packages.sh demo|test|bench|deb}
pg=${PG_MAJOR:-15}

demo="build-essential postgresql-$pg postgresql-server-dev-$pg libjson-c-dev"
case $goal in
demo) wanted=$demo ;;
test) wanted="$demo postgresql-$pg-pgtap libtap-parser-sourcehandler-pgtap-perl
        postgresql-$pg-cron postgresql-$pg-plproxy clang libclang-rt-14-dev
        valgrind locales-all
        debhelper dpkg-dev fakeroot postgresql-server-dev-all jq unzip" ;;
bench) wanted="$demo linux-perf" ;;
deb) wanted="$demo debhelper dpkg-dev fakeroot postgresql-server-dev-all" ;;
*) echo "mk/packages.sh: unknown goal $goal" >&2; exit 2 ;;
esac

missing=""
for p in $wanted; do
	if ! dpkg-query -W -f '${Status}' "$p" 2>/dev/null | grep -q 'ok installed'; then
		missing="$missing $p"
	fi
done
[ -z "$missing" ] && exit 0

echo "make $goal: installing Debian packages:$missing"
if [ "$(id -u)" -eq 0 ]; then
	sudo=""
elif command -v sudo >/dev/null 2>&1 && sudo -v; then
	sudo="sudo"
else
	echo "make $goal needs these Debian packages, and this user can neither install them nor use sudo:" >&2
	echo "   $missing" >&2
	echo "Ask an administrator to run: apt-get install$missing" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
for attempt in 1 2 3; do
	$sudo apt-get update -q </dev/null >/dev/null && break
	[ "$attempt" -eq 3 ] && { echo "apt-get update failed" >&2; exit 1; }
	sleep 10
done
$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
	-o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold \
	$missing </dev/null
