#!/usr/bin/env bash
# spill.sh: a calculation unit larger than work_mem is read in pages from a
# temporary file (docs/operations.md, Memory) and earns exactly what it
# earns in memory.
#
# Runs against the server the PG* environment variables name, normally a
# throwaway cluster (`make check-spill`).  Works in its own database,
# dropped at the end.
#
# Data: every fixture case (test/ops/fixtures.sh), its transactions copied
# COPIES times under new transaction_ids, so that each participant and
# each group's unit holds thousands of rows: standard, stepped, stacked,
# pools, program rules, groups, growth and forecasts all go through pages.
#
# 1. With work_mem = 64kB, incentive_calculate(), a participant's call,
#    forecast() and refresh_earnings() return the very rows they return
#    with the default work_mem (EXCEPT ALL both ways; the refresh's rows
#    without their run_id and calculated_at).
# 2. The pages were used: the DEBUG1 message of the unit read from a file
#    comes with 64kB and not with the default.
# 3. So do the parts of a batch split as it is read back (DEBUG1 too).
set -euo pipefail
DB=${TEST_DB:-incentives_spill}
COPIES=${COPIES:-150}
. "$(dirname "$0")/lib.sh"
trap drop_db EXIT

create_db
bash test/ops/fixtures.sh -d "$DB"
psql_db -c "SET client_min_messages = warning" -c "
INSERT INTO incentives.transactions
SELECT transaction_id || '#' || k, participant_key, transaction_type, transaction_date,
       sku_key, quantity, uom_key, amount
  FROM incentives.transactions, generate_series(1, $COPIES - 1) k" -c "ANALYZE incentives.transactions"
echo "spill: $(val 'SELECT count(*) FROM incentives.transactions') transactions of $(val 'SELECT count(DISTINCT participant_key) FROM incentives.transactions') participants"

# same NAME QUERY: QUERY's rows with work_mem 64kB equal those with the default
same() {
  local name=$1 query=$2 out
  out=$(psql_db -At <<SQL
SET client_min_messages = warning;
CREATE TEMP TABLE in_memory AS $query;
SET work_mem = '64kB';
CREATE TEMP TABLE in_pages AS $query;
RESET work_mem;
SELECT (SELECT count(*) FROM in_memory) || ' '
    || (SELECT count(*) FROM (SELECT * FROM in_memory EXCEPT ALL SELECT * FROM in_pages) d) || ' '
    || (SELECT count(*) FROM (SELECT * FROM in_pages EXCEPT ALL SELECT * FROM in_memory) d);
SQL
)
  read -r rows missing extra <<<"$out"
  if [ "$rows" -gt 0 ] && [ "$missing" -eq 0 ] && [ "$extra" -eq 0 ]; then
    ok "$name: $rows rows, the same with work_mem 64kB"
  else
    fail "$name: $rows rows in memory; with work_mem 64kB $missing missing and $extra more"
  fi
}

same "incentive_calculate()" "SELECT * FROM incentives.incentive_calculate()"
same "incentive_calculate() of a group's member" \
  "SELECT * FROM incentives.incentive_calculate(participant_key => 'groups_accumulate:retailer_001')"
same "incentive_calculate() of a participant" \
  "SELECT * FROM incentives.incentive_calculate(participant_key => 'fixed_amount_pools:retailer_001')"
same "forecast()" "SELECT * FROM incentives.forecast(date '2026-05-31')"
psql_db -c "SET client_min_messages = warning" -c "CALL incentives.refresh_earnings()"
psql_db -c "CREATE TABLE refreshed_in_memory AS SELECT * FROM incentives.earnings" \
  -c "ALTER TABLE refreshed_in_memory DROP COLUMN calculated_at, DROP COLUMN run_id"
PGOPTIONS="-c work_mem=64kB" psql_db -c "SET client_min_messages = warning" -c "CALL incentives.refresh_earnings()"
psql_db -c "CREATE TABLE refreshed_in_pages AS SELECT * FROM incentives.earnings" \
  -c "ALTER TABLE refreshed_in_pages DROP COLUMN calculated_at, DROP COLUMN run_id"
diff=$(val "SELECT count(*) FROM ((SELECT * FROM refreshed_in_memory EXCEPT ALL SELECT * FROM refreshed_in_pages)
                                  UNION ALL (SELECT * FROM refreshed_in_pages EXCEPT ALL SELECT * FROM refreshed_in_memory)) d")
rows=$(val "SELECT count(*) FROM incentives.earnings")
if [ "$rows" -gt 0 ] && [ "$diff" -eq 0 ]; then
  ok "refresh_earnings(): $rows rows, the same with work_mem 64kB"
else
  fail "refresh_earnings(): $diff rows differ with work_mem 64kB"
fi

# debug_lines WORK_MEM PATTERN: the DEBUG1 lines of a calculation that match
debug_lines() {
  psql_db -c "SET client_min_messages = debug1" -c "SET work_mem = '$1'" \
    -c "SELECT count(*) FROM incentives.incentive_calculate()" 2>&1 >/dev/null |
    grep -c "$2" || true
}
paged=$(debug_lines 64kB 'are read in pages from a temporary file')
unpaged=$(debug_lines 4MB 'are read in pages from a temporary file')
if [ "$paged" -gt 0 ] && [ "$unpaged" -eq 0 ]; then
  ok "units read in pages: $paged with work_mem 64kB, none with 4MB"
else
  fail "units read in pages: $paged with work_mem 64kB, $unpaged with 4MB"
fi
# 3. A batch over work_mem when read back is split into parts (the rows of
#    step 1 came through them), and none is with the default.
split=$(debug_lines 64kB "of the calculation's records is read in")
unsplit=$(debug_lines 4MB "of the calculation's records is read in")
if [ "$split" -gt 0 ] && [ "$unsplit" -eq 0 ]; then
  ok "batches read in parts: $split with work_mem 64kB, none with 4MB"
else
  fail "batches read in parts: $split with work_mem 64kB, $unsplit with 4MB"
fi

finish spill
