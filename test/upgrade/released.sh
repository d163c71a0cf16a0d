#!/bin/sh
# test/upgrade/released.sh: the released scripts in src/sql/released/ are
# the ones that shipped, byte for byte.  Its README.md lists every released
# script with the md5 it shipped with; this check (make check-released)
# fails when a script differs from its md5, when a script is not listed, or
# when a listed script is missing.  Run from the repository root.
set -eu
dir=src/sql/released
fail=0
listed=$(sed -n 's/^| `\([^`]*\.sql\)` | `\([0-9a-f]\{32\}\)` |$/\2  \1/p' "$dir/README.md")
[ -n "$listed" ] || { echo "check-released: $dir/README.md lists no script" >&2; exit 1; }
n=0
while read -r sum name; do
	n=$((n + 1))
	if [ ! -f "$dir/$name" ]; then
		echo "check-released: $name is listed in $dir/README.md but missing" >&2
		fail=1
	elif [ "$(md5sum < "$dir/$name" | cut -c1-32)" != "$sum" ]; then
		echo "check-released: $dir/$name differs from the released script (md5 $sum): released scripts never change" >&2
		fail=1
	fi
done <<LIST
$listed
LIST
for f in "$dir"/*; do
	name=$(basename "$f")
	case $name in README.md) continue ;; esac
	printf '%s\n' "$listed" | grep -q "  $name\$" || {
		echo "check-released: $dir/$name is not listed (with its md5) in $dir/README.md" >&2
		fail=1
	}
done
[ "$fail" -eq 0 ] || exit 1
echo "check-released: $n released scripts, each byte for byte as released (md5 in $dir/README.md)"
