#!/bin/bash
# test/package/check_package.sh DEB...: each Debian package (one per
# PostgreSQL major: postgresql-N-incentives, N taken from its name),
# installed as a DBA installs it (docs/operations.md, Packaging), one after
# the other; fails when any fails.  Run from the top of the tree by `make
# check-package`, after `make deb` and `make install-test`.  For each:
#
#  1. apt-get install DEB (through sudo when not root); both extensions'
#     control files and the module are among its files (dpkg -L);
#  2. on a throwaway cluster WITHOUT extension_destdir: pg_regress (sql/
#     against expected/) and pgTAP (test/pgtap) against the installed
#     files; CREATE EXTENSION incentives and incentives_cluster give the
#     control files' versions, and the backend maps the package's module;
#  3. while the package is installed, a cluster with extension_destdir
#     (what every other check of `make test` uses, here a marked copy of
#     TEST_DESTDIR) still reads the destdir's control file and scripts and
#     maps the destdir's module, not the package's.  TEST_DESTDIR holds the
#     build for PG_CONFIG's major; for a package of another major the
#     marked copy is made of the package's own files (dpkg-deb -x).  (Debian's
#     extension_destdir looks in the destdir first, file by file, and lists
#     the scripts of both folders: a script only the package has is seen by
#     such clusters too; the check prints those, if any);
#  4. apt-get remove; every file the package installed is gone, and every
#     folder it listed that is still there belongs to another package or
#     was there before it was installed.
#
# The package is removed at the end whatever happens (EXIT trap).  Other
# checkouts on the machine may run their checks meanwhile: their clusters
# load their own build through extension_destdir, which (3) shows wins
# over the installed package.  Two runs of this check never overlap (a
# lock in /tmp), and it refuses to run when the package was installed
# before it started (it would remove it).
set -euo pipefail
[ $# -gt 0 ] || { echo "usage: check_package.sh build/deb/postgresql-NN-incentives_VERSION_ARCH.deb..." >&2; exit 2; }
if [ $# -gt 1 ]; then
	failed=""
	for deb in "$@"; do
		echo "check-package: ---- $(basename "$deb")"
		"$0" "$deb" || failed="$failed $(basename "$deb")"
	done
	[ -z "$failed" ] || { echo "check-package: failed:$failed" >&2; exit 1; }
	echo "check-package: all $# packages passed"
	exit 0
fi
deb=$(readlink -f "$1")
repo=$(pwd)
pkg=$(dpkg-deb -f "$deb" Package)
major=$(printf '%s\n' "$pkg" | sed -n 's/^postgresql-\([0-9][0-9]*\)-.*/\1/p')
[ -n "$major" ] || { echo "check-package: $pkg is not named postgresql-NN-..." >&2; exit 1; }
pg_config=/usr/lib/postgresql/$major/bin/pg_config
sharedir=$("$pg_config" --sharedir)
pkglibdir=$("$pg_config" --pkglibdir)
: "${TEST_DESTDIR:?TEST_DESTDIR is not set (make check-package sets it)}"
control_version() { sed -n "s/^default_version *= *'\([^']*\)'.*/\1/p" "$1.control"; }
extensions=$(ls ./*.control | sed 's|^\./||; s|\.control$||')

if [ "$(id -u)" -eq 0 ]; then
	sudo=()
elif command -v sudo >/dev/null 2>&1 && sudo -v; then
	sudo=(sudo)
else
	echo "check-package: installs $pkg system-wide, which needs root or sudo" >&2
	exit 1
fi
apt=("${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -y -q
	-o DPkg::Lock::Timeout=600)
status() { dpkg-query -W -f '${db:Status-Status}' "$pkg" 2>/dev/null || echo not-installed; }

lock=/tmp/incentives-check-package.lock
exec 9>>"$lock"
chmod 666 "$lock" 2>/dev/null || true
if ! flock -n 9; then
	echo "check-package: another check-package runs on this machine; waiting (up to 30 min)"
	flock -w 1800 9 || { echo "check-package: gave up waiting for $lock" >&2; exit 1; }
fi
if [ "$(status)" != not-installed ]; then
	echo "check-package: $pkg is installed ($(status)) on this machine; this check would remove it." >&2
	echo "Remove it first (${sudo[*]} apt-get remove $pkg), then run the check again." >&2
	exit 1
fi

work=$(mktemp -d /tmp/incentives-check-package.XXXXXX)
chmod 755 "$work"
cleanup() {
	if [ "$(status)" != not-installed ]; then
		echo "check-package: removing $pkg"
		"${sudo[@]}" dpkg --purge "$pkg" >/dev/null || echo "check-package: could not remove $pkg" >&2
	fi
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

# ---- 1. install ---------------------------------------------------------
# the package's folders that are there already (a `make install` into the
# system leaves them, holding files of other builds): removal keeps them
dpkg-deb --fsys-tarfile "$deb" | tar -t | sed -n 's|^\./\(.*[^/]\)/$|/\1|p' \
	| while IFS= read -r d; do [ -d "$d" ] && echo "$d"; done > "$work/folders_before" || true
echo "check-package: apt-get install $deb"
"${apt[@]}" install --no-install-recommends "$deb" </dev/null >"$work/apt.log" 2>&1 \
	|| { cat "$work/apt.log"; echo "check-package: apt-get install failed" >&2; exit 1; }
[ "$(status)" = installed ] || { echo "check-package: $pkg is $(status) after apt-get install" >&2; exit 1; }
dpkg-query -L "$pkg" > "$work/files"
for f in $(printf "$sharedir/extension/%s.control\n" $extensions) "$pkglibdir/incentives.so"; do
	grep -qx "$f" "$work/files" && [ -f "$f" ] || { echo "check-package: $pkg does not install $f" >&2; exit 1; }
done
nfiles=0
while IFS= read -r f; do
	if [ -f "$f" ]; then nfiles=$((nfiles + 1)); fi
done < "$work/files"
echo "check-package: $pkg $(dpkg-query -W -f '${Version}' "$pkg") installed, $nfiles files"

# ---- 2. the installed package on a cluster without extension_destdir ------
# psql -At -c, failing on error
q() { psql -X -At -v ON_ERROR_STOP=1 "$@"; }
export -f q
cat > "$work/installed.sh" <<'EOF'
set -euo pipefail
[ -z "$(q -c "SELECT coalesce(current_setting('extension_destdir', true), '')")" ] \
	|| { echo "extension_destdir is set" >&2; exit 1; }
make --no-print-directory installcheck PG_CONFIG="$PG_CONFIG" || { cat regression.diffs; exit 1; }
q -q -c "CREATE EXTENSION IF NOT EXISTS pgtap" -c "CREATE EXTENSION IF NOT EXISTS incentives"
pg_prove test/pgtap/*.sql
for ext in $EXTENSIONS; do
	db="package_$ext"
	q -q -c "CREATE DATABASE $db"
	q -q -d "$db" -c "CREATE EXTENSION $ext CASCADE"
	got=$(q -d "$db" -c "SELECT extversion FROM pg_extension WHERE extname = '$ext'")
	want=$(sed -n "s/^default_version *= *'\([^']*\)'.*/\1/p" "$ext.control")
	[ "$got" = "$want" ] || { echo "CREATE EXTENSION $ext gave version $got, $ext.control says $want" >&2; exit 1; }
	echo "check-package: CREATE EXTENSION $ext: version $got"
done
# the backend that ran a function of the module maps the package's file
maps=$(q -d package_incentives -c "SELECT incentives.offer_error('{}') IS NOT NULL" \
	-c "SELECT pg_read_file('/proc/self/maps')" | grep 'incentives\.so$' | awk '{print $NF}' | sort -u)
[ "$maps" = "$PKGLIBDIR/incentives.so" ] || { echo "the backend maps [$maps], not $PKGLIBDIR/incentives.so" >&2; exit 1; }
echo "check-package: the backend maps $maps"
EOF
echo "check-package: pg_regress and pgTAP against the installed package"
PG_CONFIG=$pg_config PG_MAJOR=$major EXTENSIONS=$extensions PKGLIBDIR=$pkglibdir \
	pg_virtualenv -t -v "$major" -c "-p $(mk/free_port.sh)" bash "$work/installed.sh"

# ---- 3. extension_destdir still comes first -----------------------------
# A copy of TEST_DESTDIR whose incentives.control comment and scripts of
# the current version carry a mark: a cluster pointed at it must read those
# and map its module while the package's files are in the server's folders.
destdir=$work/destdir
if [ -f "$TEST_DESTDIR$sharedir/extension/incentives.control" ]; then
	origin=$TEST_DESTDIR
	cp -a "$TEST_DESTDIR" "$destdir"
else
	# TEST_DESTDIR is another major's build: the package's own files
	echo "check-package: TEST_DESTDIR has no build for PostgreSQL $major; the destdir copy is $pkg's files"
	origin=$work/unpacked
	dpkg-deb -x "$deb" "$origin"
	cp -a "$origin" "$destdir"
fi
version=$(control_version incentives)
sed -i "s/^comment *= *'/comment = '[destdir copy] /" "$destdir$sharedir/extension/incentives.control"
marked=0
for script in "$destdir$sharedir/extension/incentives--$version.sql" \
	"$destdir$sharedir/extension/incentives--"*"--$version.sql"; do
	[ -f "$script" ] || continue
	printf '\nCREATE FUNCTION incentives_internal.destdir_copy() RETURNS text LANGUAGE sql AS $$SELECT %s$$;\n' \
		"'$version'" >> "$script"
	marked=$((marked + 1))
done
[ "$marked" -gt 0 ] || { echo "check-package: no script of incentives $version in $origin" >&2; exit 1; }
chmod -R a+rX "$destdir"
only_package=$(grep "^$sharedir/extension/" "$work/files" | while IFS= read -r f; do
	[ -e "$origin$f" ] || basename "$f"; done)
[ -z "$only_package" ] || echo "check-package: files of the package that $origin lacks, seen by destdir clusters meanwhile:" $only_package
cat > "$work/destdir.sh" <<'EOF'
set -euo pipefail
comment=$(q -c "SELECT comment FROM pg_available_extensions WHERE name = 'incentives'")
case $comment in
"[destdir copy] "*) ;;
*) echo "pg_available_extensions shows the comment [$comment], not the destdir copy's" >&2; exit 1 ;;
esac
q -q -c "CREATE EXTENSION incentives"
[ "$(q -c 'SELECT incentives_internal.destdir_copy()')" = "$VERSION" ] \
	|| { echo "CREATE EXTENSION did not run the destdir copy's scripts" >&2; exit 1; }
maps=$(q -c "SELECT incentives.offer_error('{}') IS NOT NULL" \
	-c "SELECT pg_read_file('/proc/self/maps')" | grep 'incentives\.so$' | awk '{print $NF}' | sort -u)
[ "$maps" = "$DESTDIR$PKGLIBDIR/incentives.so" ] \
	|| { echo "the backend maps [$maps], not $DESTDIR$PKGLIBDIR/incentives.so" >&2; exit 1; }
echo "check-package: with extension_destdir: the destdir's control file, scripts and module ($maps)"
EOF
# the cluster's settings that look in the destdir first (Debian's
# extension_destdir; from PostgreSQL 18 its own paths: mk/destdir_settings.sh)
destdir_opts=()
while read -r setting; do destdir_opts+=(-o "$setting"); done < <(mk/destdir_settings.sh "$pg_config" "$destdir")
VERSION=$version DESTDIR=$destdir PKGLIBDIR=$pkglibdir \
	pg_virtualenv -t -v "$major" -c "-p $(mk/free_port.sh)" "${destdir_opts[@]}" \
	bash "$work/destdir.sh"

# ---- 4. remove ----------------------------------------------------------
echo "check-package: apt-get remove $pkg"
"${apt[@]}" remove "$pkg" </dev/null >"$work/apt.log" 2>&1 \
	|| { cat "$work/apt.log"; echo "check-package: apt-get remove failed" >&2; exit 1; }
[ "$(status)" = not-installed ] || { echo "check-package: $pkg is $(status) after apt-get remove" >&2; exit 1; }
left=0
while IFS= read -r f; do
	[ "$f" = "/." ] && continue
	[ -e "$f" ] || [ -L "$f" ] || continue
	if [ -d "$f" ] && [ ! -L "$f" ] && dpkg-query -S "$f" >/dev/null 2>&1; then
		continue    # a folder another package owns too
	fi
	if [ -d "$f" ] && [ ! -L "$f" ] && grep -qxF "$f" "$work/folders_before"; then
		continue    # a folder that was there before the package
	fi
	echo "check-package: left behind after removal: $f" >&2
	left=$((left + 1))
done < "$work/files"
[ "$left" -eq 0 ] || { echo "check-package: $left paths of $pkg left behind" >&2; exit 1; }
echo "check-package: removed; none of its $(wc -l < "$work/files") paths left (folders shared with other packages or there before aside)"
echo "check-package: passed"
