#!/bin/sh
# mk/destdir_settings.sh PG_CONFIG DESTDIR: the server settings, one
# name=value a line, that make a cluster load the extension installed under
# DESTDIR (`make install DESTDIR=...`) before the server's own copy:
# Debian's extension_destdir up to PostgreSQL 17; from 18, whose Debian
# packages have no such setting, PostgreSQL's own extension_control_path
# (the folder holding extension/) and dynamic_library_path.
set -eu
pg_config=${1:?usage: mk/destdir_settings.sh PG_CONFIG DESTDIR}
destdir=${2:?usage: mk/destdir_settings.sh PG_CONFIG DESTDIR}
major=$("$pg_config" --version | sed -n 's/^PostgreSQL \([0-9][0-9]*\).*/\1/p')
if [ "${major:-0}" -lt 18 ]; then
	echo "extension_destdir=$destdir"
else
	echo "extension_control_path=$destdir$("$pg_config" --sharedir):\$system"
	echo "dynamic_library_path=$destdir$("$pg_config" --pkglibdir):\$libdir"
fi
