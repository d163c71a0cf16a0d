#!/bin/bash
# test/ops/fixtures.sh [PSQL ARGS...]: add every fixture case to the
# database psql connects to (test/ops/fixture.psql), from the repository
# root.
set -euo pipefail
for dir in test/fixtures/*/; do
	psql -X -q -v ON_ERROR_STOP=1 -v fixture="$(basename "$dir")" "$@" -f test/ops/fixture.psql
done
