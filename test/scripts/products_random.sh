#!/usr/bin/env bash
# products_random.sh: random cases of offers written on products against
# the set-based reference of test/sql/products_random.sql
# (docs/reference.md, Products): random forests, dated windows, standard
# rates by SKU and by product with exclusions, stepped filters on products
# with exclusions; every earning row compared exactly.
#
# Runs against the server the PG* variables name, normally a throwaway
# cluster: `pg_virtualenv -t bash test/scripts/products_random.sh`
# (`make check-products-random` does that after installing).  Works in its
# own database, dropped at the end.  Environment: PRODUCTS_SEEDS (40), the
# number of cases; TEST_DB.
set -euo pipefail

SEEDS=${PRODUCTS_SEEDS:-40}
DB=${TEST_DB:-incentives_products_random}
cd "$(dirname "$0")/../.."
. test/scripts/lib.sh
trap drop_db EXIT

create_db
for n in $(seq 1 "$SEEDS"); do
  seed=$(awk -v n="$n" -v s="$SEEDS" 'BEGIN { printf "%.6f", n / (s + 1) }')
  line=$(psql_db -At -v seed="$seed" -f test/sql/products_random.sql | grep '^products_random ')
  case "$line" in
    *"row_mismatches=0 "*) ok "$line" ;;
    *) fail "$line" ;;
  esac
done
finish check-products-random
