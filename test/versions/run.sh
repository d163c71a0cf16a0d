#!/bin/bash
# test/versions/run.sh [SYSTEM ...]: the tests of `make test-versions` in
# minimal Debian systems of Debian's own packages, one per PostgreSQL major
# this machine's Debian does not ship (docs/architecture.md, Tests):
#   trixie   Debian 13, PostgreSQL 17, json-c 0.18
#   forky    Debian testing, PostgreSQL 18 (debootstrap's sid script)
# Each system is made with debootstrap under VERSIONS_ROOT
# (/var/tmp/chroots) when missing and kept there for the next run.  The
# work tree's files (tracked and untracked, not ignored) are copied into
# the system's /build (a repository whose HEAD is that copy), then `make test-server` runs there as root with
# the same mk/packages.sh installing what it needs.  Before that, the
# host's PostgreSQL writes a dump of a database with earnings,
# statements, accruals and users' views (test/ops/dump_across.sh dump),
# which every system restores and compares (test/ops/dump_across.sh
# restore).  Prints the time of each system's part; fails on the first
# failing system.  Needs root (debootstrap, mount, chroot).
set -euo pipefail
cd "$(dirname "$0")/../.."
root=${VERSIONS_ROOT:-/var/tmp/chroots}
mirror=${VERSIONS_MIRROR:-http://deb.debian.org/debian}
systems=("$@")
[ ${#systems[@]} -gt 0 ] || systems=(trixie forky)
[ "$(id -u)" -eq 0 ] || { echo "make test-versions: needs root (debootstrap, mount, chroot)" >&2; exit 1; }

if ! command -v debootstrap >/dev/null 2>&1; then
	apt-get update -q </dev/null >/dev/null
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends debootstrap </dev/null
fi

# the dump every system restores, made by this machine's PostgreSQL
across=$(mktemp -d /tmp/incentives-across.XXXXXX)
mounted=()
cleanup() {
	local m
	for m in "${mounted[@]}"; do umount -l "$m" 2>/dev/null || true; done
	rm -rf "$across"
}
trap cleanup EXIT
start=$(date +%s)
make --no-print-directory dump-across ACROSS_DIR="$across"
echo "test-versions: the dump of PostgreSQL $(cat "$across/major") took $(( $(date +%s) - start )) s"

for sys in "${systems[@]}"; do
	args=("$sys" "$root/$sys" "$mirror")
	case $sys in
	trixie) ;;
	# debootstrap before Debian 13 has no script for forky: sid's serves
	forky) [ -e /usr/share/debootstrap/scripts/forky ] || args+=(/usr/share/debootstrap/scripts/sid) ;;
	*) echo "test-versions: unknown system $sys (trixie, forky)" >&2; exit 2 ;;
	esac
	start=$(date +%s)
	r=$root/$sys
	if [ ! -x "$r/usr/bin/make" ]; then
		echo "test-versions: debootstrap $sys into $r"
		rm -rf "$r"
		mkdir -p "$root"
		debootstrap --variant=minbase --include=build-essential,git,ca-certificates,sudo,make \
			"${args[@]}" > "$root/$sys.debootstrap.log" 2>&1 \
			|| { tail -n 20 "$root/$sys.debootstrap.log"; echo "test-versions: debootstrap $sys failed" >&2; exit 1; }
	fi
	for m in proc dev dev/shm dev/pts; do
		if mountpoint -q "$r/$m"; then umount -l "$r/$m"; fi
	done
	mount -t proc proc "$r/proc"; mounted=("$r/proc" "${mounted[@]}")
	mount --bind /dev "$r/dev"; mounted=("$r/dev" "${mounted[@]}")
	mount -t tmpfs tmpfs "$r/dev/shm"; mounted=("$r/dev/shm" "${mounted[@]}")
	mount -t devpts -o newinstance devpts "$r/dev/pts"; mounted=("$r/dev/pts" "${mounted[@]}")
	cp /etc/resolv.conf "$r/etc/resolv.conf" 2>/dev/null || true
	# testing's Release file is valid for a week only: a mirror that is a
	# snapshot older than that would refuse every apt-get update
	echo 'Acquire::Check-Valid-Until "false";' > "$r/etc/apt/apt.conf.d/99incentives-valid-until"

	rm -rf "$r/build"
	mkdir -p "$r/build/build"
	git ls-files -z --cached --others --exclude-standard | tar --null -T - -cf - | tar -x -C "$r/build"
	# a repository whose HEAD is the copy, for make dist and make deb
	git -C "$r/build" init -q
	git -C "$r/build" add -A
	git -C "$r/build" -c user.name=test-versions -c user.email=test-versions@localhost \
		commit -q -m "the work tree, copied by test/versions/run.sh"
	cp -R "$across" "$r/build/build/across"
	status=0
	chroot "$r" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		HOME=/root LANG=C.UTF-8 CI="${CI:-}" DEBIAN_FRONTEND=noninteractive \
		bash -c 'cd /build && make test-server ACROSS_DIR=/build/build/across' </dev/null || status=$?
	for m in "${mounted[@]}"; do umount -l "$m" 2>/dev/null || true; done
	mounted=()
	if [ "$status" -ne 0 ]; then
		[ -s "$r/build/regression.diffs" ] && cat "$r/build/regression.diffs"
		echo "test-versions: $sys FAILED after $(( $(date +%s) - start )) s" >&2
		exit "$status"
	fi
	echo "test-versions: $sys passed in $(( $(date +%s) - start )) s"
done
