#!/usr/bin/env bash
# test/docs/run.sh [FILE.md ...]: run the SQL examples of the documents
# (README.md and docs/*.md by default) and compare what psql prints with
# the outputs the documents show (`make check-docs`, part of `make test`).
#
# Each document gets a fresh database (UTF8, C locale) with the extension
# created; its blocks run in order, in one psql session (-X -q, errors and
# notices in the output), from the repository root, so a document can build
# up state and \i test/sql/load_fixture.psql.  test/docs/blocks.pl reads the
# blocks; the conventions are in docs/architecture.md, "Examples are tests".
# Outputs are compared line for line after dropping spaces at line ends and
# blank lines at the end; a block whose document shows no output must print
# nothing.  A difference prints a unified diff naming the document and the
# line of the block; the exit status is then 1.
#
# Needs a server that can load the extension (PGHOST etc. set, a role that
# may create databases): `make check-docs` runs it under pg_virtualenv.
set -euo pipefail

cd "$(dirname "$0")/../.."
here=test/docs
if [ "$#" -gt 0 ]; then
	files=("$@")
else
	files=(README.md docs/*.md)
fi

# DOCS_WORK=DIR keeps the scripts and outputs in DIR (for a look after a failure).
if [ -n "${DOCS_WORK:-}" ]; then
	work=$DOCS_WORK
	rm -rf "$work" && mkdir -p "$work"
else
	work=$(mktemp -d "${TMPDIR:-/tmp}/incentives-docs.XXXXXX")
	trap 'rm -rf "$work"' EXIT
fi

# The same output whatever the server's and the client's settings.
export PGOPTIONS="-c lc_messages=C -c TimeZone=UTC -c DateStyle=ISO,MDY -c IntervalStyle=postgres"
export PGCLIENTENCODING=UTF8 LC_ALL=C.UTF-8
unset PSQLRC

# norm FILE: the text as compared (no spaces at line ends, no blank lines
# at the end).
norm() {
	sed -e 's/[[:space:]]*$//' "$1" | awk '{ line[NR] = $0 } NF { last = NR } END { for (i = 1; i <= last; i++) print line[i] }'
}

failed=0 executed=0 compared=0 k=0
for f in "${files[@]}"; do
	k=$((k + 1))
	dir="$work/$k"
	mkdir -p "$dir"
	if ! perl "$here/blocks.pl" "$f" "$dir"; then
		failed=$((failed + 1))
		continue
	fi
	db="incentives_docs_$k"
	PGOPTIONS="$PGOPTIONS -c client_min_messages=warning" dropdb --if-exists "$db"
	createdb -T template0 -E UTF8 --locale=C "$db"
	psql -X -q -v ON_ERROR_STOP=1 -d "$db" -c 'CREATE EXTENSION incentives'
	status=0
	psql -X -q -d "$db" < "$dir/script.sql" > "$dir/actual" 2>&1 || status=$?
	dropdb "$db"

	# actual.N: what block N printed (between its marker and the next).
	awk -v dir="$dir" '
		/^@@docs-block [0-9a-z]+@@$/ { if (out) close(out); split($0, w, /[ @]+/); out = dir "/actual." w[3]; printf "" > out; next }
		out { print > out }
	' "$dir/actual"

	file_failed=0
	while IFS=$'\t' read -r n line kind exp_line; do
		executed=$((executed + 1))
		if [ ! -e "$dir/actual.$n" ]; then
			echo "$f:$line: not run (psql stopped before this block, exit status $status):"
			tail -n 20 "$dir/actual"
			file_failed=1
			break
		fi
		norm "$dir/actual.$n" > "$dir/got"
		if [ "$exp_line" != "-" ]; then
			compared=$((compared + 1))
			norm "$dir/expected.$n" > "$dir/want"
			what="the output differs from the block at line $exp_line"
		else
			: > "$dir/want"
			what="it prints output, but the document shows none"
		fi
		if ! cmp -s "$dir/want" "$dir/got"; then
			echo "$f:$line: $what:"
			diff -u --label "$f:$line (document)" --label "$f:$line (psql)" "$dir/want" "$dir/got" || true
			file_failed=1
		fi
	done < "$dir/blocks"
	if [ ! -e "$dir/actual.end" ]; then
		[ "$file_failed" -eq 1 ] || { echo "$f: psql stopped early (exit status $status)"; tail -n 20 "$dir/actual"; }
		file_failed=1
	fi
	failed=$((failed + file_failed))
done

echo "check-docs: ${#files[@]} documents, $executed blocks executed, $compared outputs compared, $failed documents failed"
[ "$failed" -eq 0 ]
