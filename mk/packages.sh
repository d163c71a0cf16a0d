#!/bin/sh
# mk/packages.sh GOAL: make sure the Debian packages GOAL needs are
# installed (GOAL: demo, test, server, bench or deb), for the PostgreSQL major of
# mk/pg_major.sh (PG_MAJOR, else the machine's).  Missing ones are installed
# with apt-get, through sudo when not root; when neither is possible, one
# message lists them and the command that installs them.  Quiet when
# nothing is missing.  (test: debhelper, dpkg-dev, fakeroot and
# postgresql-server-dev-all build the Debian package with pg_buildext, jq
# and unzip check the PGXN distribution; mk/package.mk.)
set -eu
goal=${1:?usage: mk/packages.sh demo|test|server|bench|deb}

# as_root CMD...: CMD as root, through sudo when not root; fails with a
# message when neither is possible.
as_root() {
	if [ "$(id -u)" -eq 0 ]; then
		"$@"
	elif command -v sudo >/dev/null 2>&1 && sudo -v; then
		sudo "$@"
	else
		echo "make $goal: this user can neither run apt-get nor use sudo; ask an administrator to run: $*" >&2
		exit 1
	fi
}

apt_update() {
	for attempt in 1 2 3; do
		as_root apt-get update -q </dev/null >/dev/null && return 0
		[ "$attempt" -eq 3 ] && { echo "apt-get update failed" >&2; exit 1; }
		sleep 10
	done
}

# a machine whose package lists are empty knows no default major yet
pg=$(mk/pg_major.sh)
if [ -z "$pg" ]; then
	apt_update
	pg=$(mk/pg_major.sh)
	updated=1
fi
[ -n "$pg" ] || { echo "make $goal: no PostgreSQL version found in the package lists; set PG_MAJOR" >&2; exit 1; }

demo="build-essential postgresql-$pg postgresql-server-dev-$pg libjson-c-dev"
case $goal in
demo) wanted=$demo ;;
test) wanted="$demo postgresql-$pg-pgtap libtap-parser-sourcehandler-pgtap-perl
        postgresql-$pg-cron postgresql-$pg-plproxy clang libclang-rt-dev
        valgrind locales-all
        debhelper dpkg-dev fakeroot postgresql-server-dev-all jq unzip" ;;
server) wanted="$demo postgresql-$pg-pgtap libtap-parser-sourcehandler-pgtap-perl
        postgresql-$pg-cron postgresql-$pg-plproxy locales-all
        debhelper dpkg-dev fakeroot postgresql-server-dev-all jq unzip" ;;
bench) wanted="$demo postgresql-$pg-cron linux-perf" ;;
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

echo "make $goal: installing Debian packages for PostgreSQL $pg:$missing"
[ -n "${updated:-}" ] || apt_update
as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
	-o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold \
	$missing </dev/null
