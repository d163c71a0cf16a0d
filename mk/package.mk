# mk/package.mk: the Debian package and the PGXN distribution
# (docs/operations.md, Packaging).  Included by the main Makefile (after
# PGXS); `make test` runs check-pgxn and check-package through
# EXTRA_CHECKS.  Versions come from the control files' default_version.
#
#   make deb        build/deb/postgresql-N-incentives_<version>-1_<arch>.deb
#                   (both extensions; and its -dbgsym package) for every
#                   PostgreSQL N whose server development files are
#                   installed (postgresql-server-dev-N) and that
#                   debian/pgversions supports: debian/control generated
#                   from debian/control.in for those versions (pg_buildext
#                   updatecontrol), then debian/ built by dpkg-buildpackage
#                   (unsigned, binary only, the nocheck profile) in a copy
#                   of the tracked files as they are in the work tree (git
#                   stash create), outside the tree; about 40 s a version
#   make dist       build/incentives-<version>.zip, the PGXN distribution:
#                   git archive of HEAD (committed files only) under the
#                   folder incentives-<version>/
#   make check-pgxn META.json has the keys of the PGXN Meta Spec 1.0.0 and
#                   the control files' versions; the zip holds HEAD's files
#                   under its folder and, unpacked, builds and installs
#                   what the work tree does (test/package/check_pgxn.sh;
#                   about 30 s)
#   make check-package
#                   make deb, then for each package it built (one per
#                   PostgreSQL major, in turn): install it with apt-get
#                   (through sudo when not root), run the pg_regress suite
#                   against it on a throwaway cluster without
#                   extension_destdir, check that a cluster with
#                   extension_destdir still loads TEST_DESTDIR's copy
#                   first, remove the package and check that every file it
#                   installed is gone (test/package/check_package.sh;
#                   about 2 min).  Refuses to run when the package was
#                   installed before; one check at a time on a machine.

PKG_VERSION = $(call version,incentives)
DIST_ZIP    = build/incentives-$(PKG_VERSION).zip

# deb: the build runs in a temporary folder; dpkg-buildpackage writes its
# results next to the copy (../*.deb), and they are copied to build/deb/.
# The versions built are `pg_buildext supported-versions`: those of
# debian/pgversions among postgresql-common's supported-versions, which
# PG_SUPPORTED_VERSIONS=installed makes the installed
# postgresql-server-dev-N (postgresql-common's own default is the release's
# one version; set PG_SUPPORTED_VERSIONS to choose others).  The checked-in
# debian/control is what updatecontrol writes on a machine with only the
# minimum version; the copy's is written again for the versions built, and
# the build checks it is current (pg_buildext checkcontrol, after dh_clean).
# When debian/changelog's newest entry is older than the control file's
# version, the copy gets an entry "<version>-1" dated like HEAD (what
# `dch -v <version>-1` would add) for the running system's release
# (VERSION_CODENAME of /etc/os-release, else UNRELEASED), so the package's
# version is always the extension's.
define _DEB_BUILD_SH
set -euo pipefail
version=$1
repo=$(pwd)
export PG_SUPPORTED_VERSIONS=${PG_SUPPORTED_VERSIONS:-installed}
# pg_buildext gives make each version's PG_CONFIG; the calling make's
# PG_MAJOR (exported) must not follow it into the build
unset PG_MAJOR
work=$(mktemp -d /tmp/incentives-deb.XXXXXX)
trap 'rm -rf "$work"' EXIT
src="$work/incentives-$version"
mkdir "$src"
if [ "$(git rev-parse --show-toplevel 2>/dev/null)" -ef "$repo" ]; then
	tree=$(git stash create)
	git archive "${tree:-HEAD}" | tar -x -C "$src"
	date=$(date -R -u -d "@$(git log -1 --format=%ct)")
else
	tar -C "$repo" --exclude=./build --exclude=./.git -cf - . | tar -x -C "$src"
	date=$(date -R)
fi
cd "$src"
pgversions=$(pg_buildext supported-versions | xargs)
[ -n "$pgversions" ] || {
	echo "make deb: no PostgreSQL version is both installed (postgresql-server-dev-N; PG_SUPPORTED_VERSIONS=$PG_SUPPORTED_VERSIONS) and supported by debian/pgversions ($(grep -v '^#' debian/pgversions | xargs))" >&2
	exit 1
}
pg_buildext updatecontrol
echo "make deb: PostgreSQL $pgversions"
latest=$(dpkg-parsechangelog -S Version)
if [ "${latest%-*}" != "$version" ]; then
	maintainer=$(sed -n 's/^Maintainer: *//p' debian/control)
	dist=$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}") || dist=
	dist=${dist:-UNRELEASED}
	{ printf 'incentives (%s-1) %s; urgency=medium\n\n' "$version" "$dist"
	  printf '  * New upstream version %s (CHANGELOG.md).\n\n' "$version"
	  printf ' -- %s  %s\n\n' "$maintainer" "$date"
	  cat debian/changelog; } > "$work/changelog"
	mv "$work/changelog" debian/changelog
	echo "make deb: debian/changelog has $latest; building $version-1 ($dist)"
fi
DEB_BUILD_OPTIONS="nocheck${DEB_BUILD_OPTIONS:+ $DEB_BUILD_OPTIONS}" \
	dpkg-buildpackage -us -uc -b -Pnocheck > "$work/build.log" 2>&1 \
	|| { tail -n 60 "$work/build.log"; echo "make deb: dpkg-buildpackage failed" >&2; exit 1; }
for v in $pgversions; do
	ls "$work/postgresql-$v-incentives_"*.deb >/dev/null 2>&1 \
		|| { tail -n 60 "$work/build.log"; echo "make deb: no postgresql-$v-incentives package was built" >&2; exit 1; }
done
rm -rf "$repo/build/deb"
mkdir -p "$repo/build/deb"
cp "$work"/*.deb "$repo/build/deb/"
for deb in "$repo"/build/deb/*.deb; do echo "make deb: ${deb#$repo/}"; done
endef
export DEB_BUILD_SH := $(value _DEB_BUILD_SH)

.PHONY: deb dist check-pgxn check-package
deb:
	@mk/packages.sh deb
	@bash -c "$$DEB_BUILD_SH" deb "$(PKG_VERSION)"

dist:
	@mkdir -p build
	git archive --format=zip --prefix=incentives-$(PKG_VERSION)/ -o $(DIST_ZIP) HEAD
	@echo "make dist: $(DIST_ZIP)"

check-pgxn: dist install-test
	PG_CONFIG=$(PG_CONFIG) test/package/check_pgxn.sh $(DIST_ZIP)

# the packages' file names are dpkg's (version from debian/changelog, the
# architecture of this machine): every postgresql-N-incentives deb just
# written (not the -dbgsym ones), which the script checks one after the
# other
check-package: deb install-test
	@debs=$$(ls build/deb/postgresql-*-incentives_$(PKG_VERSION)-*.deb 2>/dev/null | xargs); \
	  [ -n "$$debs" ] || { echo "check-package: no build/deb/postgresql-N-incentives_$(PKG_VERSION)-*.deb" >&2; exit 1; }; \
	  echo "PG_CONFIG=$(PG_CONFIG) test/package/check_package.sh $$debs"; \
	  PG_CONFIG=$(PG_CONFIG) test/package/check_package.sh $$debs

EXTRA_CHECKS += check-pgxn check-package
