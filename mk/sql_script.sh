#!/bin/sh
# mk/sql_script.sh KIND EXTENSION VERSION OUTPUT PART...: write an
# extension script: the psql guard line, a note that it is generated, then
# the parts in the order given.  KIND is upgrade (ALTER EXTENSION ...
# UPDATE, and CREATE EXTENSION after the released base script) or
# install.  @extension@ in a part stands for EXTENSION.  See the Makefile
# (which parts, in which order) and docs/architecture.md.
set -eu
kind=$1 extension=$2 version=$3 output=$4
shift 4
case $kind in
install) guard="Use \"CREATE EXTENSION $extension\" to load this file." ;;
upgrade) guard="Use \"ALTER EXTENSION $extension UPDATE TO '$version'\" to load this file." ;;
*) echo "mk/sql_script.sh: unknown kind $kind" >&2; exit 2 ;;
esac
mkdir -p "$(dirname "$output")"
{
	printf -- '-- %s: built by make from the parts of %s %s in src/sql/%s/\n-- (docs/architecture.md); released, it is kept as it is in src/sql/released/.\n' \
		"$(basename "$output")" "$extension" "$version" "$extension"
	printf '\\echo %s \\quit\n' "$guard"
	for part; do
		printf '\n-- ---- %s\n\n' "$part"
		sed "s/@extension@/$extension/g" "$part"
	done
} > "$output.tmp"
mv "$output.tmp" "$output"
