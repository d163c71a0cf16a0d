#!/bin/sh
# mk/pg_major.sh: print the PostgreSQL major version that make demo, make
# test, make bench and make deb use on this machine, or nothing when none
# is known yet.  In order:
#   1. PG_MAJOR, when set;
#   2. the one major whose server development files are installed
#      (/usr/lib/postgresql/N/bin/pg_config); with several, Debian's default
#      among them, else the newest;
#   3. Debian's default: the last version postgresql-common's
#      supported-versions prints, else the version the `postgresql`
#      package depends on (apt-cache).
set -eu
if [ -n "${PG_MAJOR:-}" ]; then
	echo "$PG_MAJOR"
	exit 0
fi

default=""
if [ -x /usr/share/postgresql-common/supported-versions ]; then
	default=$(/usr/share/postgresql-common/supported-versions 2>/dev/null | tail -n 1)
fi
if [ -z "$default" ] && command -v apt-cache >/dev/null 2>&1; then
	default=$(apt-cache depends postgresql 2>/dev/null |
		sed -n 's/^ *Depends: postgresql-\([0-9][0-9]*\)$/\1/p' | head -n 1)
fi

installed=$(ls -d /usr/lib/postgresql/*/bin/pg_config 2>/dev/null |
	sed -n 's|^/usr/lib/postgresql/\([0-9][0-9]*\)/bin/pg_config$|\1|p' | sort -n)
if [ -n "$installed" ]; then
	if [ -n "$default" ] && printf '%s\n' "$installed" | grep -qx "$default"; then
		echo "$default"
	else
		printf '%s\n' "$installed" | tail -n 1
	fi
	exit 0
fi
[ -n "$default" ] && echo "$default"
exit 0
