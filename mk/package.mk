# mk/package.mk: the Debian package and the PGXN distribution
# (docs/operations.md, Packaging).  Included by the main Makefile (after
# PGXS); `make test` runs check-pgxn and check-package through
# EXTRA_CHECKS.  Versions come from the control files' default_version.
#
#   make deb        build/deb/postgresql-15-incentives_<version>-1_<arch>.deb
#                   (both extensions; and its -dbgsym package): debian/
#                   built by dpkg-buildpackage (unsigned, binary only, the
#                   nocheck profile) in a copy of the tracked files as they
#                   are in the work tree (git stash create), outside the
#                   tree; about 40 s
#   make dist       build/incentives-<version>.zip, the PGXN distribution:
#                   git archive of HEAD (committed files only) under the
#                   folder incentives-<version>/
#   make check-pgxn META.json has the keys of the PGXN Meta Spec 1.0.0 and
#                   the control files' versions; the zip holds HEAD's files
#                   under its folder and, unpacked, builds and installs
#                   what the work tree does (test/package/check_pgxn.sh;
#                   about 30 s)
#   make check-package
#                   make deb, then install the package with apt-get
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
# When debian/changelog's newest entry is older than the control file's
# version, the copy gets an entry "<version>-1" dated like HEAD (what
# `dch -v <version>-1` would add), so the package's version is always the
# extension's.
define _DEB_BUILD_SH
set -euo pipefail
version=$1
repo=$(pwd)
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
latest=$(dpkg-parsechangelog -S Version)
if [ "${latest%-*}" != "$version" ]; then
	maintainer=$(sed -n 's/^Maintainer: *//p' debian/control)
	{ printf 'incentives (%s-1) bookworm; urgency=medium\n\n' "$version"
	  printf '  * New upstream version %s (CHANGELOG.md).\n\n' "$version"
	  printf ' -- %s  %s\n\n' "$maintainer" "$date"
	  cat debian/changelog; } > "$work/changelog"
	mv "$work/changelog" debian/changelog
	echo "make deb: debian/changelog has $latest; building $version-1"
fi
DEB_BUILD_OPTIONS="nocheck${DEB_BUILD_OPTIONS:+ $DEB_BUILD_OPTIONS}" \
	dpkg-buildpackage -us -uc -b -Pnocheck > "$work/build.log" 2>&1 \
	|| { tail -n 60 "$work/build.log"; echo "make deb: dpkg-buildpackage failed" >&2; exit 1; }
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

# the package's file name is dpkg's (version from debian/changelog, the
# architecture of this machine): the one deb just wrote
check-package: deb install-test
	PG_CONFIG=$(PG_CONFIG) test/package/check_package.sh \
	  "$$(ls build/deb/postgresql-*-incentives_$(PKG_VERSION)-*.deb)"

EXTRA_CHECKS += check-pgxn check-package
