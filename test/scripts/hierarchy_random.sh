#!/usr/bin/env bash
# hierarchy_random.sh: random cases of offers aggregated over participant
# hierarchies against the reference of test/sql/hierarchy_random.sql
# (docs/reference.md, Participant groups; Participant hierarchies):
# locations in chains, chains in regions, regions in a national group,
# with dated windows and moves; stepped offers by group at each level, by
# group without a level and by participant, and a standard offer; every
# earning row compared exactly, and calls for a participant or for some
# offers compared with the call for everyone.
#
# Runs against the server the PG* variables name, normally a throwaway
# cluster: `pg_virtualenv -t bash test/scripts/hierarchy_random.sh`
# (`make check-hierarchy-random` does that after installing).  Works in
# its own database, dropped at the end.  Environment: HIERARCHY_SEEDS
# (40), the number of cases; TEST_DB.
set -euo pipefail

SEEDS=${HIERARCHY_SEEDS:-40}
DB=${TEST_DB:-incentives_hierarchy_random}
cd "$(dirname "$0")/../.."
. test/scripts/lib.sh
trap drop_db EXIT

create_db
for n in $(seq 1 "$SEEDS"); do
  seed=$(awk -v n="$n" -v s="$SEEDS" 'BEGIN { printf "%.6f", n / (s + 1) }')
  if out=$(psql_db -At -v seed="$seed" -f test/sql/hierarchy_random.sql 2>&1); then
    line=$(printf '%s\n' "$out" | grep '^hierarchy_random ' || true)
    case "$line" in
      *"row_mismatches=0 alone_mismatches=0 "*) ok "$line" ;;
      *) fail "seed $seed: $out" ;;
    esac
  else
    fail "seed $seed: $out"
  fi
done
finish check-hierarchy-random
