#!/bin/bash
# test/package/check_pgxn.sh ZIP: the PGXN distribution (docs/operations.md,
# Packaging).
#
# META.json: valid JSON with the keys the PGXN Meta Spec 1.0.0 requires
# (name, version, abstract, maintainer, license, provides, meta-spec) and
# those this project promises (description, prereqs with PostgreSQL 15.0.0
# at runtime, release_status, generated_by, tags), each of the type and form
# the spec gives, resources too when there are any (the project has no
# public address yet); a license the spec knows, not "unknown", with the
# LICENSE file at the top; `provides` names exactly the extensions of
# the *.control files, each with a file and docfile that exist, an abstract,
# and the control file's default_version, which is also the
# distribution's version (that of incentives.control).
#
# ZIP (make dist): every entry under incentives-<version>/, exactly the
# files of HEAD, META.json and both control files among them; unpacked, it
# builds and installs (as pgxn install does) the same files as the work
# tree's build in TEST_DESTDIR.
set -euo pipefail
zip=${1:?usage: check_pgxn.sh build/incentives-VERSION.zip}
: "${TEST_DESTDIR:?TEST_DESTDIR is not set (make check-pgxn sets it)}"
PG_CONFIG=${PG_CONFIG:-pg_config}
meta=META.json
failures=0
fail() { echo "check-pgxn: $*" >&2; failures=$((failures + 1)); }
control_version() { sed -n "s/^default_version *= *'\([^']*\)'.*/\1/p" "$1.control"; }
# jq -e exits non-zero when the filter's result is false or null
holds() { jq -e "$1" "$meta" >/dev/null; }

jq -e . "$meta" >/dev/null || { echo "check-pgxn: $meta is not valid JSON" >&2; exit 1; }

semver='^(0|[1-9][0-9]*)\\.(0|[1-9][0-9]*)\\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?$'
term='^[^/\\\\[:space:][:cntrl:]]{2,}$'
licenses='["agpl_3","apache_1_1","apache_2_0","artistic_1","artistic_2","bsd",
  "freebsd","gfdl_1_2","gfdl_1_3","gpl_1","gpl_2","gpl_3","lgpl_2_1",
  "lgpl_3_0","mit","mozilla_1_0","mozilla_1_1","openssl","perl_5",
  "postgresql","qpl_1_0","ssleay","sun","zlib","open_source","restricted",
  "unrestricted","unknown"]'

for key in name version abstract maintainer license provides meta-spec \
	description prereqs release_status generated_by tags; do
	holds "has(\"$key\")" || fail "$meta has no \"$key\""
done
holds ".name | type == \"string\" and test(\"$term\")" || fail "name is not a term"
holds ".version | type == \"string\" and test(\"$semver\")" || fail "version is not a semantic version"
for key in abstract description generated_by; do
	holds ".$key | type == \"string\" and length > 0" || fail "$key is not a non-empty string"
done
holds '.maintainer | (type == "string" and length > 0)
	or (type == "array" and length > 0 and all(.[]; type == "string" and length > 0))' \
	|| fail "maintainer is neither a string nor a list of strings"
holds "$licenses as \$valid | .license | (type == \"string\" and IN(\$valid[]))
	or (type == \"array\" and length > 0 and all(.[]; IN(\$valid[])))
	or (type == \"object\" and length > 0 and all(.[]; type == \"string\" and test(\"^https?://\")))" \
	|| fail "license is not one the spec knows (nor a name => URL object)"
holds '.license != "unknown"' || fail "license is \"unknown\""
[ -f LICENSE ] || fail "there is no LICENSE file"
holds '."meta-spec".version | type == "string" and test("^1\\.0\\.[0-9]+$")' \
	|| fail "meta-spec.version is not 1.0.x"
holds '.release_status | IN("stable", "testing", "unstable")' \
	|| fail "release_status is not stable, testing or unstable"
holds ".tags | type == \"array\" and length > 0 and all(.[]; type == \"string\" and test(\"^[^/\\\\\\\\[:cntrl:]]{2,255}$\"))" \
	|| fail "tags is not a list of tags"
holds '.prereqs.runtime.requires.PostgreSQL == "15.0.0"' \
	|| fail "prereqs.runtime.requires.PostgreSQL is not 15.0.0"
holds '.prereqs | to_entries | all(.key | IN("configure", "build", "test", "runtime", "develop"))' \
	|| fail "prereqs has a phase the spec does not know"
holds '[.prereqs[] | to_entries[]] | all(.key | IN("requires", "recommends", "suggests", "conflicts"))' \
	|| fail "prereqs has a relationship the spec does not know"
holds '(has("resources") | not) or (.resources | type == "object" and (has("homepage") or has("bugtracker") or has("repository"))
	and all(keys[]; IN("homepage", "bugtracker", "repository") or test("^[xX]_.")))' \
	|| fail "resources has none of homepage, bugtracker, repository (or a key the spec does not know)"

# provides: one entry per control file, versions from the control files
extensions=$(ls ./*.control | sed 's|^\./||; s|\.control$||' | sort)
provided=$(jq -r '.provides | keys[]' "$meta" | sort)
[ "$provided" = "$extensions" ] \
	|| fail "provides names [$(echo $provided)], the control files [$(echo $extensions)]"
for ext in $extensions; do
	want=$(control_version "$ext")
	got=$(jq -r --arg e "$ext" '.provides[$e].version // ""' "$meta")
	[ "$got" = "$want" ] || fail "provides.$ext.version is \"$got\", $ext.control's default_version \"$want\""
	for key in file docfile; do
		path=$(jq -r --arg e "$ext" --arg k "$key" '.provides[$e][$k] // ""' "$meta")
		[ -n "$path" ] && [ -f "$path" ] || fail "provides.$ext.$key \"$path\" is not a file of the tree"
	done
	holds ".provides[\"$ext\"].abstract | type == \"string\" and length > 0" \
		|| fail "provides.$ext.abstract is missing"
	holds ".provides[\"$ext\"] // {} | keys | all(IN(\"file\", \"docfile\", \"version\", \"abstract\") or test(\"^[xX]_.\"))" \
		|| fail "provides.$ext has a key the spec does not know"
done
version=$(control_version incentives)
[ "$(jq -r .version "$meta")" = "$version" ] \
	|| fail "version is \"$(jq -r .version "$meta")\", incentives.control's default_version \"$version\""

# the zip: HEAD's files under incentives-<version>/
prefix="incentives-$version/"
[ "$(basename "$zip")" = "incentives-$version.zip" ] || fail "$zip is not named incentives-$version.zip"
entries=$(zipinfo -1 "$zip" | grep -v '/$' | sort)
outside=$(printf '%s\n' "$entries" | grep -cv "^$prefix" || true)
[ "$outside" -eq 0 ] || fail "$outside entries of $zip are not under $prefix"
files=$(git ls-tree -r --name-only HEAD | sed "s|^|$prefix|" | sort)
[ "$entries" = "$files" ] || {
	diff <(printf '%s\n' "$files") <(printf '%s\n' "$entries") | head -n 20 >&2 || true
	fail "$zip does not hold exactly HEAD's files (above: < HEAD, > zip)"
}
for f in META.json incentives.control incentives_cluster.control Makefile; do
	grep -qx "$prefix$f" <<<"$entries" || fail "$zip has no $prefix$f"
done
unzip -p "$zip" "${prefix}META.json" | cmp -s - <(git show HEAD:META.json) \
	|| fail "$zip's META.json is not HEAD's"

# what pgxn install does with the zip: make and make install in the
# unpacked folder; the same files as the work tree's build (TEST_DESTDIR)
work=$(mktemp -d /tmp/incentives-check-pgxn.XXXXXX)
trap 'rm -rf "$work"' EXIT
unzip -q "$zip" -d "$work"
make -s -C "$work/$prefix" PG_CONFIG="$PG_CONFIG" >"$work/build.log" 2>&1 \
	&& make -s -C "$work/$prefix" install PG_CONFIG="$PG_CONFIG" DESTDIR="$work/installed" >>"$work/build.log" 2>&1 \
	|| { tail -n 30 "$work/build.log" >&2; fail "the unpacked zip does not build and install"; }
installed=$(cd "$work/installed" 2>/dev/null && find . -type f | sort)
expected=$(cd "$TEST_DESTDIR" && find . -type f | sort)
[ -n "$installed" ] && [ "$installed" = "$expected" ] || {
	diff <(printf '%s\n' "$expected") <(printf '%s\n' "$installed") | head -n 20 >&2 || true
	fail "make install from the zip (HEAD) installs other files than the work tree's build (above: < work tree, > zip)"
}

if [ "$failures" -gt 0 ]; then
	echo "check-pgxn: $failures failures" >&2
	exit 1
fi
echo "check-pgxn: META.json has the spec's keys, $(echo $extensions | wc -w) extensions at their control files' versions ($version); $zip holds HEAD's $(printf '%s\n' "$entries" | wc -l) files under $prefix and installs the $(printf '%s\n' "$installed" | wc -l) files of the build"
