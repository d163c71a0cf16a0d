#!/usr/bin/env bash
# returns_random.sh: random cases of returns against their sale against
# the reference of test/sql/returns_random.sql (docs/reference.md, Returns
# against their sale): returns of a sale dated on or before them, before
# them, of another participant or SKU, of nothing; price credits; rows
# naming a sale that are no return; under standard offers over one and two
# periods and with enrollment, and a stepped offer; every earning row
# compared exactly, for everyone and through a date, and each
# participant's call compared with the call for everyone.
#
# Runs against the server the PG* variables name, normally a throwaway
# cluster: `pg_virtualenv -t bash test/scripts/returns_random.sh`
# (`make check-returns-random` does that after installing).  Works in
# its own database, dropped at the end.  Environment: RETURNS_SEEDS
# (40), the number of cases; TEST_DB.
set -euo pipefail

SEEDS=${RETURNS_SEEDS:-40}
DB=${TEST_DB:-incentives_returns_random}
cd "$(dirname "$0")/../.."
. test/scripts/lib.sh
trap drop_db EXIT

create_db
for n in $(seq 1 "$SEEDS"); do
  seed=$(awk -v n="$n" -v s="$SEEDS" 'BEGIN { printf "%.6f", n / (s + 1) }')
  if out=$(psql_db -At -v seed="$seed" -f test/sql/returns_random.sql 2>&1); then
    line=$(printf '%s\n' "$out" | grep '^returns_random ' || true)
    case "$line" in
      *"row_mismatches=0 alone_mismatches=0 "*) ok "$line" ;;
      *) fail "seed $seed: $out" ;;
    esac
  else
    fail "seed $seed: $out"
  fi
done
finish check-returns-random
