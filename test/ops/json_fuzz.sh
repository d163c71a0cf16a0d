#!/bin/bash
# test/ops/json_fuzz.sh: make check-json-fuzz on a throwaway cluster
# (PGHOST etc. set by pg_virtualenv), from the repository root: a database
# with the extension and the generated data set, then test/ops/json_fuzz.sql
# with JSON_FUZZ_SEED (1) and JSON_FUZZ_REQUESTS (3000).
set -euo pipefail
export PGOPTIONS="${PGOPTIONS:-} -c client_min_messages=warning"
seed=${JSON_FUZZ_SEED:-1}
requests=${JSON_FUZZ_REQUESTS:-3000}
psql -X -q -d postgres -c "DROP DATABASE IF EXISTS json_fuzz" -c "CREATE DATABASE json_fuzz"
psql -X -q -v ON_ERROR_STOP=1 -d json_fuzz -c 'CREATE EXTENSION incentives'
psql -X -q -v ON_ERROR_STOP=1 -d json_fuzz -v n_transactions=20000 -f test/ops/dataset.psql >/dev/null
start=$(date +%s)
psql -X -q -v ON_ERROR_STOP=1 -d json_fuzz -v seed="$seed" -v requests="$requests" -f test/ops/json_fuzz.sql
echo "check-json-fuzz: $requests requests (seed $seed) in $(( $(date +%s) - start )) s"
