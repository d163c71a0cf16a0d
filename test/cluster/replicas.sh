#!/usr/bin/env bash
# test/cluster/replicas.sh: incentives beside what a DBA runs
# (docs/operations.md, Backups, replicas and refreshes; `make
# check-replicas`, part of `make test`).  On 127.0.0.1, as run.sh starts
# clusters (its functions, CLUSTER_LIB=1):
#
#   primary  wal_level = logical; database pub holds the extension, the
#            generated data set (REPLICAS_N transactions) and its earnings;
#            database bi, the extension too, subscribes to pub's earnings
#            and ledger (logical replication, the same cluster);
#   standby  a streaming standby of primary (pg_basebackup), hot standby.
#
#   1. Backups: pg_dump of pub and full refreshes back to back for
#      REPLICAS_SECONDS each way: with incentives.full_refresh = swap, no
#      deadlock and no failed refresh (a dump that starts the instant a swap
#      commits may still miss the partition it dropped: counted, shown);
#      with in_place, no failure on either side.
#   2. The standby: it has the primary's earnings; refresh_earnings (also
#      changed_only with nothing logged), settle and accrue fail at once
#      with 25006 naming themselves; a read kept open on the standby across
#      a full refresh on the primary is cancelled by the swap's lock (with
#      max_standby_streaming_delay = 1s) and not by a refresh in place.
#   3. Logical replication: pub publishes incentives.earnings (through its
#      root) and the ledger's tables; a refresh of everyone (in place, since
#      the table is published, whatever incentives.full_refresh says: no
#      partition appears), with jobs => 2, of the changed participants, of
#      one participant, settle and accrue each reach bi, whose tables then
#      equal pub's row for row.
set -euo pipefail
CLUSTER_LIB=1
. "$(dirname "${BASH_SOURCE[0]}")/run.sh"
cd "$REPO"

N=${REPLICAS_N:-20000}
SECONDS_EACH=${REPLICAS_SECONDS:-10}
fail() { echo "check-replicas: FAILED: $*" >&2; exit 1; }
quiet="SET client_min_messages = warning"

# digest NAME DB TABLE: count and md5 of the table's rows in order.
digest() {
    val "$1" "$2" -c "SELECT count(*) || ' ' || COALESCE(md5(string_agg(t::text, E'\n' ORDER BY t::text)), '-')
                        FROM $3 AS t"
}

cluster_setup
CLUSTER_CONF="wal_level = logical" cluster_start primary
sql primary postgres -c "CREATE DATABASE pub" -c "CREATE DATABASE bi"
sql primary pub -c "CREATE EXTENSION incentives"
sql primary pub -v n_transactions="$N" -f bench/generate.sql >/dev/null
sql primary pub -c "$quiet" -c "CALL incentives.refresh_earnings()"
log "primary: $N transactions, $(val primary pub -c "SELECT count(*) FROM incentives.earnings") earning rows"

# ---------------------------------------------------------------- backups
# dumps_and_refreshes MODE: both loops for SECONDS_EACH; prints
# "refreshes OK FAILED dumps OK FAILED" and leaves the errors in WORK.
dumps_and_refreshes() {
    local mode=$1 end=$((SECONDS + SECONDS_EACH))
    : >"$WORK/$mode.refresh.err"
    : >"$WORK/$mode.dump.err"
    (ok=0 failed=0
     while [ $SECONDS -lt $end ]; do
         if sql primary pub -c "$quiet" -c "SET incentives.full_refresh = $mode" \
                -c "CALL incentives.refresh_earnings()" 2>>"$WORK/$mode.refresh.err"; then
             ok=$((ok + 1))
         else
             failed=$((failed + 1))
         fi
     done
     echo "$ok $failed" >"$WORK/$mode.refreshes") &
    (ok=0 failed=0
     while [ $SECONDS -lt $end ]; do
         if "$PGBIN/pg_dump" -h 127.0.0.1 -p "${PORT[primary]}" -U postgres -Fc -f "$WORK/pub.dump" pub \
                2>>"$WORK/$mode.dump.err"; then
             ok=$((ok + 1))
         else
             failed=$((failed + 1))
         fi
     done
     echo "$ok $failed" >"$WORK/$mode.dumps") &
    wait
    echo "refreshes $(cat "$WORK/$mode.refreshes") dumps $(cat "$WORK/$mode.dumps")"
}

read -r _ ok failed _ dok dfailed <<<"$(dumps_and_refreshes swap)"
log "swap: $ok refreshes ($failed failed), $dok dumps ($dfailed failed) in ${SECONDS_EACH} s"
[ "$ok" -gt 0 ] && [ "$dok" -gt 0 ] || fail "swap: no refresh or no dump finished"
grep -i deadlock "$WORK/swap.refresh.err" "$WORK/swap.dump.err" && fail "swap: a deadlock"
[ "$failed" = 0 ] || { cat "$WORK/swap.refresh.err"; fail "swap: $failed refreshes failed"; }
if [ "$dfailed" != 0 ]; then
    # the one way a dump may fail beside swaps: a partition dropped between
    # its reading of the catalog and its lock (docs/operations.md)
    grep '^pg_dump: error:' "$WORK/swap.dump.err" | grep -v 'relation "incentives_internal\.earnings_run_[0-9_]*" does not exist' &&
        fail "swap: a dump failed otherwise"
    log "swap: the dumps that failed read a swapped-out partition's name in the catalog just before the swap dropped it"
fi
read -r _ ok failed _ dok dfailed <<<"$(dumps_and_refreshes in_place)"
log "in_place: $ok refreshes ($failed failed), $dok dumps ($dfailed failed) in ${SECONDS_EACH} s"
[ "$ok" -gt 0 ] && [ "$dok" -gt 0 ] || fail "in_place: no refresh or no dump finished"
[ "$failed" = 0 ] && [ "$dfailed" = 0 ] ||
    { cat "$WORK/in_place.refresh.err" "$WORK/in_place.dump.err"; fail "in_place: something failed"; }

# ---------------------------------------------------------------- standby
standby="$WORK/standby"
as_postgres "$PGBIN/pg_basebackup" -h 127.0.0.1 -p "${PORT[primary]}" -U postgres -D "$standby" \
    -R -X stream -c fast
port=$(free_port)
sed -i "/^port = /d" "$standby/postgresql.conf"
cat >>"$standby/postgresql.conf" <<EOF
port = $port
hot_standby = on
max_standby_streaming_delay = '1s'
EOF
as_postgres "$PGBIN/pg_ctl" -D "$standby" -l "$standby/server.log" -w -t 60 start >/dev/null
PORT[standby]=$port
STARTED+=("$standby")

# replayed: wait until the standby has replayed what the primary wrote
replayed() {
    local lsn i
    lsn=$(val primary postgres -c "SELECT pg_current_wal_lsn()")
    for i in $(seq 1 120); do
        [ "$(val standby postgres -c "SELECT pg_last_wal_replay_lsn() >= '$lsn'")" = t ] && return 0
        sleep 0.25
    done
    fail "the standby did not replay $lsn"
}
replayed
[ "$(digest standby pub incentives.earnings)" = "$(digest primary pub incentives.earnings)" ] ||
    fail "the standby's earnings differ from the primary's"
log "standby: the primary's earnings, $(digest standby pub incentives.earnings | cut -d' ' -f1) rows"

# every procedure at once, by name, with 25006
for call in "CALL incentives.refresh_earnings()" "CALL incentives.refresh_earnings(changed_only => true)" \
            "CALL incentives.settle('2026-06-30')" "CALL incentives.accrue('2026-06-30')"; do
    name=$(sed 's/^CALL incentives\.\([a-z_]*\).*/\1/' <<<"$call")
    out=$(sql standby pub -v VERBOSITY=verbose -c "$call" 2>&1) && fail "on the standby, $call succeeded"
    grep -q "ERROR:  25006: $name cannot run on a standby" <<<"$out" ||
        { echo "$out"; fail "on the standby, $call did not fail with 25006 naming itself"; }
done
log "standby: refresh_earnings, settle and accrue fail at once with 25006 naming themselves"

# standby_read_across MODE: a read on the standby that holds
# incentives.earnings 4 s while the primary refreshes everyone; prints
# "kept" or "cancelled"
standby_read_across() {
    (sql standby pub -c "BEGIN" -c "SELECT count(*) FROM incentives.earnings" -c "SELECT pg_sleep(4)" \
         -c "SELECT count(*) FROM incentives.earnings" -c "COMMIT" >/dev/null 2>"$WORK/standby_read.err" &&
         echo kept || echo cancelled) >"$WORK/standby_read" &
    sleep 1
    sql primary pub -c "$quiet" -c "SET incentives.full_refresh = $1" -c "UPDATE incentives.transactions SET amount = amount + 1 WHERE transaction_id IN (SELECT transaction_id FROM incentives.transactions ORDER BY 1 LIMIT 5)" \
        -c "CALL incentives.refresh_earnings()"
    wait
    cat "$WORK/standby_read"
}
[ "$(standby_read_across swap)" = cancelled ] || fail "a standby read across a swap was not cancelled"
grep -q 'conflict with recovery' "$WORK/standby_read.err" || { cat "$WORK/standby_read.err"; fail "the standby read failed otherwise"; }
[ "$(standby_read_across in_place)" = kept ] || { cat "$WORK/standby_read.err"; fail "a standby read across a refresh in place was cancelled"; }
log "standby: a 4 s read across a swap is cancelled (max_standby_streaming_delay 1s), across a refresh in place kept"

# ---------------------------------------------------------------- logical
ledger="incentives.statements incentives.statement_lines incentives.accruals incentives.accrual_lines"
sql primary pub -c "CREATE PUBLICATION incentives_bi FOR TABLE incentives.earnings, $(sed 's/ /, /g' <<<"$ledger")
                    WITH (publish_via_partition_root = true)"
sql primary pub -c "SELECT pg_create_logical_replication_slot('incentives_bi', 'pgoutput')" >/dev/null
sql primary bi -c "CREATE EXTENSION incentives"
sql primary bi -c "CREATE SUBSCRIPTION incentives_bi
                   CONNECTION 'host=127.0.0.1 port=${PORT[primary]} dbname=pub user=postgres'
                   PUBLICATION incentives_bi WITH (create_slot = false, slot_name = 'incentives_bi')"

# caught_up: wait until bi has applied everything pub wrote
caught_up() {
    local lsn i
    lsn=$(val primary pub -c "SELECT pg_current_wal_lsn()")
    for i in $(seq 1 240); do
        [ "$(val primary pub -c "SELECT confirmed_flush_lsn >= '$lsn' FROM pg_replication_slots WHERE slot_name = 'incentives_bi'")" = t ] &&
            [ "$(val primary bi -c "SELECT bool_and(srsubstate = 'r') FROM pg_subscription_rel")" = t ] && return 0
        sleep 0.25
    done
    grep -i error "$WORK/primary/server.log" | tail -5 >&2 || true
    fail "bi did not apply pub's changes up to $lsn"
}
# same WHAT: bi's earnings and ledger equal pub's, row for row.  The slot's
# confirmed position can pass the last commit a moment before bi's apply
# worker makes it visible, so a difference is read again for up to 10 s.
same() {
    local t i ours theirs
    caught_up
    for t in incentives.earnings $ledger; do
        for i in $(seq 1 40); do
            ours=$(digest primary bi "$t")
            theirs=$(digest primary pub "$t")
            [ "$ours" = "$theirs" ] && break
            sleep 0.25
        done
        [ "$ours" = "$theirs" ] || fail "$1: bi's $t differs from pub's ($ours against $theirs)"
    done
    log "logical: after $1, bi's earnings and ledger equal pub's ($(digest primary bi incentives.earnings | cut -d' ' -f1) earning rows)"
}
partitions() {
    val primary pub -c "SELECT string_agg(relid::regclass::text, ' ' ORDER BY 1) FROM pg_partition_tree('incentives.earnings')"
}
same "the initial copy"
before=$(partitions)
sql primary pub -c "UPDATE incentives.transactions SET amount = amount * 2 WHERE participant_key < 'retailer_0100'"
sql primary pub -c "$quiet" -c "SET incentives.full_refresh = swap" -c "CALL incentives.refresh_earnings()"
[ "$(partitions)" = "$before" ] || fail "a refresh of everyone swapped a partition of the published table"
same "a refresh of everyone (in place: published)"
sql primary pub -c "UPDATE incentives.transactions SET amount = amount * 2 WHERE participant_key < 'retailer_0200'"
sql primary pub -c "$quiet" -c "CALL incentives.refresh_earnings(jobs => 2)"
same "a refresh of everyone with jobs => 2"
sql primary pub -c "UPDATE incentives.transactions SET amount = amount + 10 WHERE participant_key IN ('retailer_0003', 'retailer_0007')"
sql primary pub -c "$quiet" -c "CALL incentives.refresh_earnings(changed_only => true)"
same "a refresh of the changed participants"
sql primary pub -c "UPDATE incentives.transactions SET amount = amount + 10 WHERE participant_key = 'retailer_0011'"
sql primary pub -c "$quiet" -c "CALL incentives.refresh_earnings(participant_key => 'retailer_0011')"
same "a refresh of one participant"
sql primary pub -c "$quiet" -c "CALL incentives.settle('2026-06-30')" -c "CALL incentives.accrue('2026-06-30')"
same "settle and accrue"
log "check-replicas: passed"
