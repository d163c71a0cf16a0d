#!/usr/bin/env bash
# growth_random.sh: random cases of growth over a baseline and of the
# forecast against the set-based reference of test/sql/growth_random.sql
# (docs/reference.md, Growth over a baseline; Forecast): both baseline
# kinds, baselines of 0, negative and missing, every payout basis (all the
# volume, the growth only, band by band, a fixed pool) and growth
# requirements, each row's incentive amount, each growth percentage and
# the forecasts at random dates compared exactly.
#
# Runs against the server the PG* variables name, normally a throwaway
# cluster: `pg_virtualenv -t bash test/scripts/growth_random.sh`
# (`make check-growth-random` does that after installing).  Works in its
# own database, dropped at the end.  Environment: GROWTH_SEEDS (50), the
# number of cases; TEST_DB.
set -euo pipefail

SEEDS=${GROWTH_SEEDS:-50}
DB=${TEST_DB:-incentives_growth_random}
cd "$(dirname "$0")/../.."
. test/scripts/lib.sh
trap drop_db EXIT

create_db
for n in $(seq 1 "$SEEDS"); do
  seed=$(awk -v n="$n" -v s="$SEEDS" 'BEGIN { printf "%.6f", n / (s + 1) }')
  line=$(psql_db -At -v seed="$seed" -f test/sql/growth_random.sql | grep '^growth_random ')
  case "$line" in
    *"row_mismatches=0 progress_mismatches=0 forecast_mismatches=0 "*) ok "$line" ;;
    *) fail "$line" ;;
  esac
done
finish check-growth-random
