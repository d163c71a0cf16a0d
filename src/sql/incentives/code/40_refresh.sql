------------------------------------------------------------------------
-- CALL incentives.refresh_earnings(...): the materialized earnings
-- (docs/lifecycle.md, "Refreshing the earnings")
--
-- Three kinds of run, one procedure:
--
--   everyone (participant_key NULL): every participant of the relation.
--     By a role that owns incentives.earnings (or is a member of its
--     owner) the rows are calculated in one snapshot, by jobs processes,
--     and written from C straight into a new, unindexed table
--     incentives_internal.earnings_run_<run_id>
--     (incentives_internal.refresh_write, 41_refresh_write.sql), indexed
--     once, and swapped in as the table's one partition in the same
--     transaction (the old one is detached and dropped): no row-by-row
--     delete, and readers see the old earnings or the new ones, never a
--     mix.  Any other role with INSERT and DELETE on the table replaces
--     the rows batch by batch in one transaction (the same result,
--     slower; one process).
--   one participant: its rows are calculated again and replace its old
--     ones.
--   changed_only: the participants incentives.earnings_changes
--     names (their transactions, properties or enrollments changed; under
--     incentives.changed_only_limit the ones logged first), or everyone
--     when it says so (an offer, SKU or unit conversion changed), always
--     in place, never swapped.
-- Every row is written by refresh_write (refresh_earnings_rows): into
-- the new partition, or, in place, into a temporary table whose rows then
-- replace the batch's rows that differ from them.
--
-- on_error => 'skip': a participant whose calculation fails for a data
-- reason (SQLSTATE class 22 or 23) keeps its previous earnings and gets a
-- row in incentives.calculation_exceptions; the run ends
-- completed_with_exceptions.  refresh_write skips a participant whose
-- calculation fails (every member of a participant group's unit that
-- fails) and reports it; a read that fails (a NULL key, a repeated
-- transaction_id) runs in a subtransaction, and what failed is read and
-- calculated again participant by participant.
--
-- The run log: the 'running' row is committed before the work when the
-- procedure may commit (incentives_internal.transaction_control_allowed(),
-- never an error message's text), and the run holds a session advisory
-- lock keyed by its run_id until it ends.  A 'running' row whose lock is
-- free belongs to a session (or server) that died: the next refresh marks
-- it interrupted.  A crash loses nothing else: the earnings change only
-- when the run's transaction commits.
------------------------------------------------------------------------

CREATE OR REPLACE FUNCTION incentives_internal.refresh_run_locked(run_id bigint)
RETURNS boolean
LANGUAGE sql
VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $function$
    -- true when some session holds the run's lock (it is still running);
    -- our own try-lock is released at once
    SELECT CASE WHEN pg_try_advisory_lock(hashtext('incentives.calculation_runs'), ($1 % 2147483647)::integer)
                THEN NOT pg_advisory_unlock(hashtext('incentives.calculation_runs'), ($1 % 2147483647)::integer)
                ELSE true END
$function$;
COMMENT ON FUNCTION incentives_internal.refresh_run_locked(bigint) IS
  'Part of incentives.refresh_earnings: true while the session running the given run holds its advisory lock';

CREATE OR REPLACE FUNCTION incentives_internal.refresh_earnings_begin(
    participant_key text,
    transactions    regclass,
    on_error        text,
    changed_only    boolean)
RETURNS bigint
LANGUAGE plpgsql
VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    v_run bigint;
BEGIN
    -- Runs left 'running' by a session or server that died.
    UPDATE incentives.calculation_runs AS r
       SET status = 'interrupted',
           finished_at = clock_timestamp(),
           error = format('run %s was interrupted: its session ended (killed, or the server stopped) before it finished; nothing it did was kept',
                          r.run_id)
     WHERE r.status = 'running'
       AND NOT incentives_internal.refresh_run_locked(r.run_id);

    INSERT INTO incentives.calculation_runs (participant_key, transactions, on_error, changed_only)
    VALUES ($1, $2::text, $3, $4)
    RETURNING run_id INTO v_run;
    -- held by this session until refresh_earnings_end (or its end); never
    -- waited for: a session of any role could hold the key first, and
    -- then the run only looks alive to the next refresh while it does
    -- (docs/operations.md, Concurrency)
    PERFORM pg_try_advisory_lock(hashtext('incentives.calculation_runs'), (v_run % 2147483647)::integer);
    RETURN v_run;
END
$function$;
COMMENT ON FUNCTION incentives_internal.refresh_earnings_begin(text, regclass, text, boolean) IS
  'Part of incentives.refresh_earnings (call the procedure, not this): marks dead runs interrupted, logs a new run as running, takes its lock and returns its run_id';

CREATE OR REPLACE FUNCTION incentives_internal.refresh_earnings_end(run_id bigint)
RETURNS void
LANGUAGE sql
VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $function$
    -- only if this session holds it (the try-lock of begin may not have
    -- got it)
    SELECT pg_advisory_unlock(hashtext('incentives.calculation_runs'), ($1 % 2147483647)::integer)
      FROM pg_locks AS l
     WHERE l.locktype = 'advisory' AND l.pid = pg_backend_pid() AND l.granted
       AND l.classid = hashtext('incentives.calculation_runs')::oid
       AND l.objid = (($1 % 2147483647)::integer)::oid
       AND l.objsubid = 2
     LIMIT 1;
$function$;
COMMENT ON FUNCTION incentives_internal.refresh_earnings_end(bigint) IS
  'Part of incentives.refresh_earnings: releases the run''s lock';

-- refresh_earnings_failed: the run marked failed, with its error
-- (docs/security.md, The run log).  A run of one participant is read by
-- every role that sees that participant; when its calculation failed on a
-- transaction of another member of its group, the row says only that a
-- transaction of another member of the group cannot be calculated (as
-- incentives.calculation_exceptions says it to the participant's rows),
-- and the error with the transaction goes to calculation_exceptions under
-- the member's key, where only the roles that see the member read it (the
-- owner among them), when the caller may write it there.
CREATE OR REPLACE FUNCTION incentives_internal.refresh_earnings_failed(
    run_id      bigint,
    participant text,
    state       text,
    message     text,
    detail      text,
    context     text)
RETURNS void
LANGUAGE plpgsql
VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    v_full    text := message
                      || CASE WHEN detail IS NULL OR detail = '' THEN '' ELSE chr(10) || 'DETAIL: ' || detail END;
    v_member  text;
    v_txn     text;
    v_group   text;
    v_error   text;
BEGIN
    IF participant IS NOT NULL THEN
        SELECT f.participant_key, f.transaction_id INTO v_member, v_txn
          FROM incentives_internal.calculation_failure() AS f;
    END IF;
    IF v_member IS NULL OR v_member = participant THEN
        v_error := v_full || CASE WHEN context IS NULL THEN '' ELSE chr(10) || 'CONTEXT: ' || context END;
    ELSE
        -- the group the two share: the participant's (the one the member
        -- is in first), or the participant itself, a group buying directly
        SELECT COALESCE((SELECT g.group_key FROM incentives.participant_groups AS g
                          WHERE g.participant_key = refresh_earnings_failed.participant
                          ORDER BY (g.group_key = v_member
                                    OR EXISTS (SELECT FROM incentives.participant_groups AS h
                                                WHERE h.participant_key = v_member
                                                  AND h.group_key = g.group_key)) DESC,
                                   g.start_date
                          LIMIT 1),
                        refresh_earnings_failed.participant)
          INTO v_group;
        v_error := format('a transaction of another member of group "%s" cannot be calculated', v_group);
        IF NOT row_security_active('incentives.transactions'::regclass)
           OR v_member IN (SELECT incentives.visible_participants()) THEN
            INSERT INTO incentives.calculation_exceptions (run_id, participant_key, transaction_id, sqlstate, message)
            VALUES (refresh_earnings_failed.run_id, v_member, v_txn, state, v_full)
            ON CONFLICT DO NOTHING;
            v_error := v_error || chr(10) || 'DETAIL: incentives.calculation_exceptions of this run names it to the roles that see that member.';
        END IF;
    END IF;
    UPDATE incentives.calculation_runs AS r
       SET status = 'failed',
           finished_at = clock_timestamp(),
           sqlstate = state,
           error = v_error
     WHERE r.run_id = refresh_earnings_failed.run_id;
END
$function$;
COMMENT ON FUNCTION incentives_internal.refresh_earnings_failed(bigint, text, text, text, text, text) IS
  'Part of incentives.refresh_earnings: marks the run failed with its error; a run of one participant that failed on a transaction of another member of its group says only that, the transaction going to calculation_exceptions under that member''s key (docs/security.md, The run log)';

CREATE OR REPLACE FUNCTION incentives_internal.refresh_earnings_check(
    participant_key text,
    transactions    regclass,
    on_error        text,
    changed_only    boolean,
    jobs            integer)
RETURNS void
LANGUAGE plpgsql
STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $function$
BEGIN
    IF jobs IS NULL OR jobs < 1 OR jobs > 1024 THEN
        PERFORM incentives_internal.raise_error(
            '22023', format('jobs must be between 1 and 1024, not %s', COALESCE(jobs::text, 'NULL')), '', '');
    END IF;
    IF on_error IS NULL OR on_error NOT IN ('raise', 'skip') THEN
        PERFORM incentives_internal.raise_error(
            '22023', format('on_error must be ''raise'' or ''skip'', not %s', COALESCE(quote_literal(on_error), 'NULL')),
            '', '');
    END IF;
    IF changed_only IS NULL THEN
        PERFORM incentives_internal.raise_error('22023', 'changed_only must be true or false, not NULL', '', '');
    END IF;
    IF transactions IS NULL THEN
        PERFORM incentives_internal.raise_error('22023', 'transactions must not be NULL', '', '');
    END IF;
    IF changed_only AND participant_key IS NOT NULL THEN
        PERFORM incentives_internal.raise_error(
            '22023', 'changed_only refreshes whoever changed: give no participant_key', '',
            'CALL incentives.refresh_earnings(participant_key => ...) refreshes one participant.');
    END IF;
    IF changed_only AND transactions <> 'incentives.transactions'::regclass THEN
        PERFORM incentives_internal.raise_error(
            '0A000', format('changed_only needs the transactions of incentives.transactions, not %s', transactions),
            format('Changes to %s cannot be tracked: only incentives.transactions has the change-tracking triggers.', transactions),
            format('Refresh from %s without changed_only.', transactions));
    END IF;
END
$function$;
COMMENT ON FUNCTION incentives_internal.refresh_earnings_check(text, regclass, text, boolean, integer) IS
  'Part of incentives.refresh_earnings: refuses arguments it cannot run with (22023; 0A000 for changed_only over anything but incentives.transactions)';

COMMENT ON COLUMN incentives.earnings.calculated_at IS
  'Start of the transaction of the refresh that wrote the row (a refresh in place leaves a row whose figures did not move as it was)';
COMMENT ON COLUMN incentives.earnings.run_id IS
  'The incentives.calculation_runs row of the refresh that wrote it (the partition key; a refresh in place leaves a row whose figures did not move as it was)';

-- refresh_earnings_rows: the rows of batch (the caller's relation, or a
-- temporary view of part of it; participant: only it, with its groups'
-- members) calculated and written from C by refresh_write, in one
-- snapshot, by jobs processes.  replace_filter NULL: into target, a table
-- this transaction created (the run's new partition).  Else into a
-- temporary table, then moved in place: the rows of incentives.earnings
-- that match replace_filter (a condition on t) and differ from the new
-- ones are deleted and the new ones not already there inserted, with the
-- caller's privileges and row-level security.
-- With skip, a participant whose calculation fails keeps its previous
-- earnings (in place, or copied into target; rows written before it
-- failed go first), gets a row in incentives.calculation_exceptions and
-- stays marked as changed for the next changed_only refresh.  A NOTICE
-- every progress_every participants (0: none).  Returns the participants
-- read, the rows written and their total (the skipped ones' not
-- counted), and how many were skipped.
CREATE OR REPLACE FUNCTION incentives_internal.refresh_earnings_rows(
    target            regclass,
    run_id            bigint,
    batch             regclass,
    participant       text,
    skip              boolean,
    replace_filter    text,
    progress_every    integer,
    jobs              integer,
    OUT participants  integer,
    OUT rows          bigint,
    OUT total         numeric,
    OUT exceptions    integer)
LANGUAGE plpgsql
VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $function$
#variable_conflict use_column
DECLARE
    v_run     bigint   := refresh_earnings_rows.run_id;
    v_replace boolean  := refresh_earnings_rows.replace_filter IS NOT NULL;
    v_rows    regclass := refresh_earnings_rows.target;
    v_w       record;
    v_same_key     text;
    v_same_figures text;
BEGIN
    IF v_replace THEN
        -- Runtime DDL, not a declaration: the batch's rows before they
        -- move (a table this transaction creates, as refresh_write needs)
        IF to_regclass('pg_temp.incentives_refresh_rows') IS NOT NULL THEN
            DROP TABLE pg_temp.incentives_refresh_rows;
        END IF;
        CREATE TEMPORARY TABLE incentives_refresh_rows (LIKE incentives.earnings) ON COMMIT DROP;
        v_rows := 'pg_temp.incentives_refresh_rows'::regclass;
    END IF;
    SELECT * INTO v_w
      FROM incentives_internal.refresh_write(v_rows, v_run, refresh_earnings_rows.batch,
                                             refresh_earnings_rows.progress_every,
                                             refresh_earnings_rows.skip, refresh_earnings_rows.jobs,
                                             refresh_earnings_rows.participant);
    participants := v_w.participants;
    rows := v_w.rows;
    total := v_w.total;
    exceptions := COALESCE(cardinality(v_w.failed_participants), 0);
    IF exceptions > 0 THEN
        IF cardinality(v_w.partial_participants) > 0 THEN
            EXECUTE format('DELETE FROM %s AS t WHERE t.participant_key = ANY ($1)', v_rows)
              USING v_w.partial_participants;
        END IF;
        INSERT INTO incentives.calculation_exceptions (run_id, participant_key, transaction_id, sqlstate, message)
        SELECT v_run, f.p, f.t, f.s, f.m
          FROM unnest(v_w.failed_participants, v_w.failed_transactions, v_w.failed_sqlstates,
                      v_w.failed_messages) AS f(p, t, s, m);
        INSERT INTO incentives.earnings_changes (participant_key)
        SELECT unnest(v_w.failed_participants);
    END IF;
    IF v_replace THEN
        -- A row whose figures did not move stays as it is, with the run
        -- and the time that wrote it; the others are deleted and the new
        -- rows that are not already there inserted (docs/lifecycle.md,
        -- changed_only => true).  The same row: the same primary key and,
        -- byte for byte, every other column but run_id and calculated_at.
        -- Both statements join the batch's rows to the earnings in primary
        -- key order: the index spares them a sort or a hash of the whole
        -- batch, which spill to disk beyond work_mem.
        CREATE INDEX ON pg_temp.incentives_refresh_rows (participant_key, offer_key, incentive_rate_key, transaction_id);
        v_same_key := 'n.participant_key = t.participant_key AND n.offer_key = t.offer_key
                       AND n.incentive_rate_key = t.incentive_rate_key AND n.transaction_id = t.transaction_id';
        SELECT format('record_image_eq(ROW(%s), ROW(%s))',
                      string_agg(format('n.%I', a.attname), ', ' ORDER BY a.attnum),
                      string_agg(format('t.%I', a.attname), ', ' ORDER BY a.attnum))
          INTO v_same_figures
          FROM pg_attribute AS a
         WHERE a.attrelid = 'incentives.earnings'::regclass
           AND a.attnum > 0 AND NOT a.attisdropped
           AND a.attname NOT IN ('participant_key', 'offer_key', 'incentive_rate_key', 'transaction_id',
                                 'run_id', 'calculated_at');
        EXECUTE format('DELETE FROM incentives.earnings AS t WHERE (%s) AND t.participant_key <> ALL ($1)
                          AND NOT EXISTS (SELECT FROM pg_temp.incentives_refresh_rows AS n WHERE %s AND %s)',
                       refresh_earnings_rows.replace_filter, v_same_key, v_same_figures)
          USING COALESCE(v_w.failed_participants, '{}');
        EXECUTE format('INSERT INTO incentives.earnings
                        SELECT n.* FROM pg_temp.incentives_refresh_rows AS n
                         WHERE NOT EXISTS (SELECT FROM incentives.earnings AS t WHERE (%s) AND %s)',
                       refresh_earnings_rows.replace_filter, v_same_key);
        DROP TABLE pg_temp.incentives_refresh_rows;
    ELSIF exceptions > 0 THEN
        EXECUTE format('INSERT INTO %s SELECT * FROM incentives.earnings AS e WHERE e.participant_key = ANY ($1)',
                       v_rows)
          USING v_w.failed_participants;
    END IF;
END
$function$;
COMMENT ON FUNCTION incentives_internal.refresh_earnings_rows(regclass, bigint, regclass, text, boolean, text, integer, integer) IS
  'Part of incentives.refresh_earnings (call the procedure, not this): writes the calculated rows of a relation (or of one participant) from C into a new partition, or in place of the earnings that match a filter; with skip, a failing participant keeps its previous earnings and is logged';

-- refresh_earnings_one: one participant, in a subtransaction, for
-- on_error => 'skip' when a batch's read failed (a NULL key, a repeated
-- transaction_id).  Replaces its rows in incentives.earnings (replace)
-- or adds them to a new partition (not replace).  A failure for a data
-- reason keeps its previous rows (copied into the new partition when not
-- replace), logs the exception and logs the participant as changed, so
-- that the next changed_only refresh tries it again.
CREATE OR REPLACE FUNCTION incentives_internal.refresh_earnings_one(
    target      regclass,
    replace     boolean,
    run_id      bigint,
    participant text,
    relation    regclass,
    OUT rows    bigint,
    OUT total   numeric,
    OUT failed  boolean)
LANGUAGE plpgsql
VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $function$
#variable_conflict use_column
DECLARE
    v_state   text;
    v_message text;
    v_detail  text;
    v_txn     text;
    v_done    record;
BEGIN
    BEGIN
        SELECT * INTO v_done
          FROM incentives_internal.refresh_earnings_rows(
                   target, run_id, relation, participant, true,
                   CASE WHEN replace THEN format('t.participant_key = %L', participant) END, 0, 1);
        rows := v_done.rows;
        total := v_done.total;
        failed := v_done.exceptions > 0;
    EXCEPTION WHEN data_exception OR integrity_constraint_violation THEN
        GET STACKED DIAGNOSTICS v_state = RETURNED_SQLSTATE, v_message = MESSAGE_TEXT,
                                v_detail = PG_EXCEPTION_DETAIL;
        SELECT f.transaction_id INTO v_txn FROM incentives_internal.calculation_failure() AS f;
        failed := true;
        rows := 0;
        total := 0.00;
        INSERT INTO incentives.calculation_exceptions (run_id, participant_key, transaction_id, sqlstate, message)
        VALUES (refresh_earnings_one.run_id, participant, v_txn, v_state,
                CASE WHEN v_detail = '' THEN v_message ELSE v_message || chr(10) || 'DETAIL: ' || v_detail END);
        INSERT INTO incentives.earnings_changes (participant_key) VALUES (participant);
        IF NOT replace THEN
            EXECUTE format('INSERT INTO %s SELECT * FROM incentives.earnings AS e WHERE e.participant_key = $1',
                           target)
              USING participant;
        END IF;
    END;
END
$function$;
COMMENT ON FUNCTION incentives_internal.refresh_earnings_one(regclass, boolean, bigint, text, regclass) IS
  'Part of incentives.refresh_earnings(on_error => ''skip''): one participant in a subtransaction; on a data error (class 22 or 23) it keeps its previous earnings and the exception is logged';

-- refresh_earnings_plan: whom a run refreshes, with the locks that keep
-- other refreshes off them, and the change log consumed.  everyone: every
-- participant of the relation; else keys, in byte order (one participant,
-- or the changed ones with their groups' members).  grouped: an offer
-- aggregates by participant group and there are memberships (docs/
-- lifecycle.md, Participant groups), so a group's members are calculated
-- together, never split between batches.
CREATE OR REPLACE FUNCTION incentives_internal.refresh_earnings_plan(
    participant_key  text,
    transactions     regclass,
    changed_only     boolean,
    OUT everyone     boolean,
    OUT keys         text[],
    OUT grouped      boolean)
LANGUAGE plpgsql
VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $function$
#variable_conflict use_column
DECLARE
    v_participant text     := refresh_earnings_plan.participant_key;
    v_tracked     boolean  := refresh_earnings_plan.transactions = 'incentives.transactions'::regclass;
    v_everyone    boolean;
    v_changed     text[];
    v_first       text[];
    v_keys        text[];
    v_grouped     boolean := EXISTS (SELECT FROM incentives.programs AS p WHERE p.aggregation = 'group');
    -- incentives_internal.participant_units() reads every membership as
    -- its owner, so only the roles granted it run it (docs/security.md,
    -- step 2); a role that may refresh without it (a restricted role of
    -- its own) refreshes whole: every participant it sees, groups whole
    v_units       boolean := has_function_privilege('incentives_internal.participant_units()', 'EXECUTE');
    v_limit       integer := CASE WHEN refresh_earnings_plan.changed_only
                                  THEN incentives_internal.changed_only_limit() END;
BEGIN
    IF v_grouped AND v_units THEN
        v_grouped := EXISTS (SELECT FROM incentives_internal.participant_units());
    ELSIF v_grouped THEN
        v_grouped := EXISTS (SELECT FROM incentives.participant_groups);
    END IF;
    IF v_participant IS NOT NULL THEN
        -- One participant: refreshes of different participants run side
        -- by side, never beside a refresh of everyone.
        -- Table and row locks only a role that may write the earnings can
        -- take (docs/operations.md, Concurrency): ROW SHARE on
        -- incentives.earnings itself (ONLY: its partitions are the
        -- owner's), which a refresh of everyone's EXCLUSIVE waits for, and
        -- the participant's row of incentives.refresh_locks.
        LOCK TABLE ONLY incentives.earnings IN ROW SHARE MODE;
        -- (inserted, then deleted: the delete holds the row until the
        -- refresh commits, a second refresh's insert waits for that, and
        -- the table stays empty)
        INSERT INTO incentives.refresh_locks AS l (participant_key) VALUES (v_participant)
            ON CONFLICT (participant_key) DO NOTHING;
        DELETE FROM incentives.refresh_locks AS l WHERE l.participant_key = v_participant;
        v_everyone := false;
        v_keys := ARRAY[v_participant];
        IF v_tracked AND v_grouped AND NOT v_units THEN
            -- its units unknown to the caller: the next changed_only
            -- refresh recalculates it
            NULL;
        ELSIF v_tracked AND v_grouped
           AND EXISTS (SELECT FROM incentives_internal.participant_units() AS u
                        WHERE u.participant_key = v_participant) THEN
            -- its group's other members' rows depend on its transactions:
            -- the next changed_only refresh recalculates the whole group
            NULL;
        ELSIF v_tracked THEN
            DELETE FROM incentives.earnings_changes AS c WHERE c.participant_key = v_participant;
        ELSE
            INSERT INTO incentives.earnings_changes (participant_key) VALUES (v_participant);
        END IF;
    ELSE
        -- one refresh of everyone at a time, never beside a refresh of
        -- one participant (ROW SHARE, above); readers' ACCESS SHARE does
        -- not conflict, and a role that may not write the earnings
        -- cannot take it
        LOCK TABLE ONLY incentives.earnings IN EXCLUSIVE MODE;
        -- The change log is consumed first: what this statement deletes was
        -- committed before it, so the calculations after it (later
        -- snapshots) include it; what commits after it stays for the next
        -- run.
        IF v_limit IS NOT NULL
           AND NOT EXISTS (SELECT FROM incentives.earnings_changes AS c WHERE c.participant_key IS NULL) THEN
            -- incentives.changed_only_limit: the participants logged
            -- first; the others' rows stay for the next run.  Read
            -- through the log's participant index, one participant to the
            -- next and the first entry of each, not the whole log (which
            -- grows while writers outpace the runs).
            WITH RECURSIVE logged AS (
                SELECT (SELECT min(c.participant_key) FROM incentives.earnings_changes AS c) AS participant_key
                UNION ALL
                SELECT (SELECT min(c.participant_key) FROM incentives.earnings_changes AS c
                         WHERE c.participant_key > l.participant_key)
                  FROM logged AS l
                 WHERE l.participant_key IS NOT NULL)
            SELECT array_agg(f.participant_key)
              INTO v_first
              FROM (SELECT l.participant_key
                      FROM logged AS l
                     WHERE l.participant_key IS NOT NULL
                     ORDER BY (SELECT min(c.logged_at) FROM incentives.earnings_changes AS c
                                WHERE c.participant_key = l.participant_key),
                              l.participant_key COLLATE "C"
                     LIMIT v_limit) AS f;
            WITH consumed AS (
                DELETE FROM incentives.earnings_changes AS c
                 WHERE c.participant_key = ANY (v_first)
                RETURNING c.participant_key)
            SELECT false, array_agg(DISTINCT c.participant_key COLLATE "C")
              INTO v_everyone, v_changed
              FROM consumed AS c;
            IF EXISTS (SELECT FROM incentives.earnings_changes) THEN
                RAISE NOTICE 'refresh_earnings: % changed participants taken (incentives.changed_only_limit); the others stay for the next run',
                             COALESCE(cardinality(v_changed), 0);
            END IF;
        ELSE
            WITH consumed AS (
                DELETE FROM incentives.earnings_changes AS c
                RETURNING c.participant_key)
            SELECT bool_or(c.participant_key IS NULL),
                   array_agg(DISTINCT c.participant_key COLLATE "C") FILTER (WHERE c.participant_key IS NOT NULL)
              INTO v_everyone, v_changed
              FROM consumed AS c;
        END IF;
        v_everyone := NOT refresh_earnings_plan.changed_only OR COALESCE(v_everyone, false);
        IF NOT v_tracked THEN
            -- earnings from another relation: everyone differs from a
            -- calculation on incentives.transactions now
            INSERT INTO incentives.earnings_changes (participant_key) VALUES (NULL);
        END IF;
        IF NOT v_everyone AND v_grouped AND NOT v_units THEN
            -- the changed ones' groups unknown to the caller: everyone
            -- it sees
            v_everyone := true;
        END IF;
        IF NOT v_everyone THEN
            v_keys := COALESCE(v_changed, '{}');
            IF v_grouped THEN
                -- whole groups: every key of the units of the changed ones
                -- (a group key logged by a change of memberships brings its
                -- members)
                SELECT array_agg(DISTINCT k.k ORDER BY k.k)
                  INTO v_keys
                  FROM (SELECT unnest(v_keys) COLLATE "C" AS k
                        UNION
                        SELECT b.participant_key COLLATE "C"
                          FROM incentives_internal.participant_units() AS a
                          JOIN incentives_internal.participant_units() AS b USING (unit_key)
                         WHERE a.participant_key = ANY (v_keys)) AS k;
                v_keys := COALESCE(v_keys, '{}');
            END IF;
            -- half of the participants or more changed (a reload): a
            -- refresh of everyone is cheaper than replacing them one batch
            -- at a time (not under incentives.changed_only_limit, which
            -- bounds what a run takes)
            IF v_limit IS NULL AND array_length(v_keys, 1) >= 100
               AND array_length(v_keys, 1) * 2 >= (SELECT count(DISTINCT t.participant_key)
                                                     FROM incentives.transactions AS t) THEN
                v_everyone := true;
                v_keys := NULL;
            END IF;
        END IF;
    END IF;
    everyone := v_everyone;
    keys := v_keys;
    grouped := v_grouped;
END
$function$;
COMMENT ON FUNCTION incentives_internal.refresh_earnings_plan(text, regclass, boolean) IS
  'Part of incentives.refresh_earnings (call the procedure, not this): takes the run''s locks, consumes the change log and returns whom the run refreshes (everyone, or the keys) and whether participant groups are calculated whole';

-- refresh_earnings_drop_orphans: every table a refresh of everyone left
-- behind unattached (incentives_internal.earnings_run_<run_id>, with its
-- leaves: a run with jobs > 1 that failed, was cancelled or whose server
-- crashed).
-- Called only under a lock no other refresh of everyone holds (the
-- session's refresh lock, or EXCLUSIVE on incentives.earnings), so that
-- none of them belongs to a live run; one-transaction runs' tables are
-- not visible until they commit, attached.
CREATE OR REPLACE FUNCTION incentives_internal.refresh_earnings_drop_orphans()
RETURNS void
LANGUAGE plpgsql
VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    v_orphan regclass;
BEGIN
    FOR v_orphan IN SELECT c.oid::regclass
                      FROM pg_class AS c
                     WHERE c.relnamespace = 'incentives_internal'::regnamespace
                       AND c.relkind IN ('r', 'p')
                       AND NOT c.relispartition
                       AND c.relname ~ '^earnings_run_[0-9]+$'
                     ORDER BY c.oid LOOP
        EXECUTE format('DROP TABLE %s', v_orphan);
    END LOOP;
END
$function$;
COMMENT ON FUNCTION incentives_internal.refresh_earnings_drop_orphans() IS
  'Part of incentives.refresh_earnings (call the procedure, not this): drops the unattached partitions of runs that ended without their swap';

-- refresh_earnings_new_partition: the run's new, empty partition
-- incentives_internal.earnings_run_<run_id>: a table, or with leaves > 1
-- a table partitioned by hash of participant_key into that many leaves
-- incentives_internal.earnings_run_<run_id>_<remainder> (jobs > 1: each
-- writer fills and indexes leaves of its own).  Owned by the owner of
-- incentives.earnings (whichever member of its role refreshes) and read
-- only through incentives.earnings and its row-level security (docs/
-- security.md, Refresh partitions): whatever default privileges granted
-- on it or its leaves, PUBLIC and every role but its owner lose them.
CREATE OR REPLACE FUNCTION incentives_internal.refresh_earnings_new_partition(run_id bigint, leaves integer)
RETURNS regclass
LANGUAGE plpgsql
VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    v_name   text := format('earnings_run_%s', refresh_earnings_new_partition.run_id);
    v_owner  oid := (SELECT c.relowner FROM pg_class AS c WHERE c.oid = 'incentives.earnings'::regclass);
    v_leaves integer := refresh_earnings_new_partition.leaves;
    v_target regclass;
    v_rel    regclass;
BEGIN
    -- Runtime DDL, not a declaration.
    IF v_leaves > 1 THEN
        EXECUTE format('CREATE TABLE incentives_internal.%I (LIKE incentives.earnings) PARTITION BY HASH (participant_key)',
                       v_name);
        FOR r IN 0 .. v_leaves - 1 LOOP
            EXECUTE format('CREATE TABLE incentives_internal.%I PARTITION OF incentives_internal.%I '
                           'FOR VALUES WITH (MODULUS %s, REMAINDER %s)',
                           v_name || '_' || r, v_name, v_leaves, r);
        END LOOP;
    ELSE
        EXECUTE format('CREATE TABLE incentives_internal.%I (LIKE incentives.earnings)', v_name);
    END IF;
    v_target := format('incentives_internal.%I', v_name)::regclass;
    FOR v_rel IN SELECT v_target
                 UNION ALL
                 (SELECT i.inhrelid::regclass FROM pg_inherits AS i WHERE i.inhparent = v_target ORDER BY 1) LOOP
        IF (SELECT c.relowner FROM pg_class AS c WHERE c.oid = v_rel) <> v_owner THEN
            EXECUTE format('ALTER TABLE %s OWNER TO %I', v_rel, pg_get_userbyid(v_owner));
        END IF;
        PERFORM incentives_internal.earnings_partition_revoke(v_rel);
    END LOOP;
    RETURN v_target;
END
$function$;
COMMENT ON FUNCTION incentives_internal.refresh_earnings_new_partition(bigint, integer) IS
  'Part of incentives.refresh_earnings (call the procedure, not this): creates the run''s new, empty partition (with more than one leaf: partitioned by hash of participant_key), owned by the owner of incentives.earnings and without privileges for anyone else';

-- refresh_earnings_leaves: how many leaves the run's partition gets: at
-- least one per job, and enough that each leaf's primary key build sorts
-- in memory (about 256 bytes of maintenance_work_mem a row; with jobs,
-- each writer builds with its share of it), for the rows of the earnings
-- now (the statistics their index builds left) or, in an empty table, the
-- transactions relation's estimate; a multiple of jobs, at most 64 (or
-- jobs, when more).  A build in memory over rows in its order only checks the order
-- (docs/architecture.md, A refresh of everyone).
CREATE OR REPLACE FUNCTION incentives_internal.refresh_earnings_leaves(transactions regclass, jobs integer)
RETURNS integer
LANGUAGE sql
STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $function$
    WITH rows AS (
        SELECT COALESCE(NULLIF((SELECT sum(GREATEST(c.reltuples, 0))
                                  FROM pg_partition_tree('incentives.earnings') AS t
                                  JOIN pg_class AS c ON c.oid = t.relid
                                 WHERE t.isleaf), 0),
                        (SELECT GREATEST(c.reltuples, 0) FROM pg_class AS c
                          WHERE c.oid = $1 AND c.relkind = 'r'),
                        0) AS n),
    per_leaf AS (
        SELECT GREATEST(pg_size_bytes(current_setting('maintenance_work_mem')) / $2 / 256, 1000) AS n)
    SELECT LEAST(GREATEST(ceil(rows.n / per_leaf.n / $2)::integer, 1), GREATEST(64 / $2, 1)) * $2
      FROM rows, per_leaf
$function$;
COMMENT ON FUNCTION incentives_internal.refresh_earnings_leaves(regclass, integer) IS
  'Part of incentives.refresh_earnings: the leaves of a run''s partition (a multiple of jobs, enough for each leaf''s index build to sort in maintenance_work_mem)';

-- refresh_earnings_index: the primary key and the offer index of an
-- earnings partition, named after it; on one partitioned into leaves,
-- they take in the leaves' own (each leaf is indexed first, by a writer
-- of a refresh with jobs > 1 or here).  One process per build: a
-- partition's rows come in its primary key's order, which a parallel
-- build would sort again.
CREATE OR REPLACE FUNCTION incentives_internal.refresh_earnings_index(target regclass)
RETURNS void
LANGUAGE plpgsql
VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    v_target regclass := refresh_earnings_index.target;
    v_name   text := (SELECT c.relname FROM pg_class AS c WHERE c.oid = refresh_earnings_index.target);
    v_leaf   regclass;
BEGIN
    -- until this function returns (its SET clause ends what it set)
    PERFORM set_config('max_parallel_maintenance_workers', '0', true);
    FOR v_leaf IN SELECT i.inhrelid::regclass
                    FROM pg_inherits AS i
                   WHERE i.inhparent = v_target
                     AND NOT EXISTS (SELECT FROM pg_index AS x WHERE x.indrelid = i.inhrelid)
                   ORDER BY i.inhrelid LOOP
        PERFORM incentives_internal.refresh_earnings_index(v_leaf);
    END LOOP;
    EXECUTE format('ALTER TABLE %s ADD CONSTRAINT %I PRIMARY KEY '
                   '(participant_key, offer_key, incentive_rate_key, transaction_id)',
                   v_target, v_name || '_pkey');
    EXECUTE format('CREATE INDEX %I ON %s (offer_key)', v_name || '_offer_idx', v_target);
END
$function$;
COMMENT ON FUNCTION incentives_internal.refresh_earnings_index(regclass) IS
  'Part of incentives.refresh_earnings (call the procedure, not this): builds an earnings partition''s primary key and offer index (on a partitioned one, those of its leaves first)';

-- refresh_earnings_prepare: the first transaction of a refresh of
-- everyone with jobs > 1 (outside a transaction block): the refresh lock
-- this session holds until the run ends, across its commits
-- (refresh_hold), the orphans of earlier runs dropped, and the run's new
-- partition, its leaves shared among the jobs (refresh_earnings_leaves),
-- committed by the procedure before the writers start.  NULL for a role that does not own incentives.earnings:
-- it refreshes in place, in one process.
-- full_refresh: the setting incentives.full_refresh ('swap' or
-- 'in_place'), asked of C.  refresh_swaps: does a refresh of everyone by
-- this role swap in a new partition?  Only for a role that owns
-- incentives.earnings (or is a member of its owner), under 'swap', and
-- while no publication publishes incentives.earnings or a partition of it
-- (a swap is DDL, which logical replication does not carry: a subscriber
-- would keep the old rows); else the rows are replaced in place
-- (docs/operations.md, Backups, replicas and refreshes).
CREATE OR REPLACE FUNCTION incentives_internal.full_refresh()
RETURNS text
AS 'MODULE_PATHNAME', 'incentives_full_refresh'
LANGUAGE C STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION incentives_internal.full_refresh() IS
  'The setting incentives.full_refresh: swap (a refresh of everyone by the owner swaps in a new partition) or in_place (it replaces the rows that moved)';

CREATE OR REPLACE FUNCTION incentives_internal.refresh_swaps()
RETURNS boolean
LANGUAGE sql
STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $function$
    SELECT pg_has_role((SELECT c.relowner FROM pg_class AS c
                         WHERE c.oid = 'incentives.earnings'::regclass), 'USAGE')
       AND incentives_internal.full_refresh() = 'swap'
       AND NOT EXISTS (SELECT FROM pg_publication AS p WHERE p.puballtables)
       AND NOT EXISTS (SELECT FROM pg_publication_namespace AS n
                        WHERE n.pnnspid IN ('incentives'::regnamespace, 'incentives_internal'::regnamespace))
       AND NOT EXISTS (SELECT FROM pg_publication_rel AS r
                        JOIN pg_partition_tree('incentives.earnings') AS t ON t.relid = r.prrelid)
$function$;
COMMENT ON FUNCTION incentives_internal.refresh_swaps() IS
  'Part of incentives.refresh_earnings: whether a refresh of everyone by this role swaps in a new partition (the owner, under incentives.full_refresh = swap, with incentives.earnings in no publication) rather than replacing the rows in place';

CREATE OR REPLACE FUNCTION incentives_internal.refresh_earnings_prepare(run_id bigint, transactions regclass, jobs integer)
RETURNS regclass
LANGUAGE plpgsql
VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $function$
BEGIN
    IF NOT incentives_internal.refresh_swaps() THEN
        RETURN NULL;
    END IF;
    PERFORM incentives_internal.refresh_hold();
    PERFORM incentives_internal.refresh_earnings_drop_orphans();
    RETURN incentives_internal.refresh_earnings_new_partition(
               refresh_earnings_prepare.run_id,
               incentives_internal.refresh_earnings_leaves(refresh_earnings_prepare.transactions,
                                                           refresh_earnings_prepare.jobs));
END
$function$;
COMMENT ON FUNCTION incentives_internal.refresh_earnings_prepare(bigint, regclass, integer) IS
  'Part of incentives.refresh_earnings (call the procedure, not this): with jobs > 1, takes the refresh lock held across the run''s transactions, drops orphaned partitions and creates the run''s new partition, its leaves shared among the jobs (NULL when the refresh replaces rows in place: incentives_internal.refresh_swaps())';

-- refresh_earnings_partition: a refresh of everyone by the owner, written
-- from C into the run's new partition, in one snapshot, by jobs
-- processes: partition, committed before by refresh_earnings_prepare
-- (jobs > 1), or, when NULL, a table this transaction creates.  With
-- skip, a participant that fails keeps its previous earnings (copied into
-- the partition), is logged and stays marked as changed; a read that
-- fails (a NULL, a repeated transaction_id) returns written false with
-- the partition emptied, and the batches (refresh_earnings_in_batches)
-- fill it instead.
CREATE OR REPLACE FUNCTION incentives_internal.refresh_earnings_partition(
    run_id            bigint,
    transactions      regclass,
    progress_every    integer,
    skip              boolean,
    jobs              integer,
    partition         regclass,
    OUT target        regclass,
    OUT written       boolean,
    OUT participants  integer,
    OUT rows          bigint,
    OUT total         numeric,
    OUT exceptions    integer)
LANGUAGE plpgsql
VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $function$
#variable_conflict use_column
DECLARE
    v_run    bigint := refresh_earnings_partition.run_id;
    v_target regclass := refresh_earnings_partition.partition;
    v_w      record;
BEGIN
    IF v_target IS NULL THEN
        -- EXCLUSIVE on incentives.earnings is held (refresh_earnings_plan)
        PERFORM incentives_internal.refresh_earnings_drop_orphans();
        v_target := incentives_internal.refresh_earnings_new_partition(
                        v_run, incentives_internal.refresh_earnings_leaves(refresh_earnings_partition.transactions, 1));
    END IF;
    target := v_target;
    written := true;
    IF refresh_earnings_partition.skip THEN
        BEGIN
            SELECT * INTO v_w
              FROM incentives_internal.refresh_earnings_rows(v_target, v_run, refresh_earnings_partition.transactions,
                                                             NULL, true, NULL,
                                                             refresh_earnings_partition.progress_every,
                                                             refresh_earnings_partition.jobs);
        EXCEPTION WHEN data_exception OR integrity_constraint_violation THEN
            -- the rows the writers committed go too; the batches write
            -- into a table of this transaction
            EXECUTE format('DROP TABLE %s', v_target);
            target := incentives_internal.refresh_earnings_new_partition(v_run, 1);
            written := false;
            RETURN;
        END;
    ELSE
        SELECT * INTO v_w
          FROM incentives_internal.refresh_earnings_rows(v_target, v_run, refresh_earnings_partition.transactions,
                                                         NULL, false, NULL,
                                                         refresh_earnings_partition.progress_every,
                                                         refresh_earnings_partition.jobs);
    END IF;
    participants := v_w.participants;
    rows := v_w.rows;
    total := v_w.total;
    exceptions := v_w.exceptions;
END
$function$;
COMMENT ON FUNCTION incentives_internal.refresh_earnings_partition(bigint, regclass, integer, boolean, integer, regclass) IS
  'Part of incentives.refresh_earnings (call the procedure, not this): writes every participant''s rows from C into the run''s new partition (the one given, or one it creates); with skip, logs the participants skipped and keeps their previous rows, or returns written false when the read itself failed';

-- refresh_earnings_ranges: the batches of a refresh of everyone in
-- place: the participants of relation in byte order, cut into key ranges
-- of at most every participants and about work_mem's worth of
-- transactions each; returns how many participants there are, each
-- range's first key, and how many participants come before it, plus 1.
CREATE OR REPLACE FUNCTION incentives_internal.refresh_earnings_ranges(
    relation          regclass,
    every             integer,
    OUT participants  integer,
    OUT starts        text[],
    OUT start_rn      bigint[])
LANGUAGE plpgsql
STABLE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $function$
BEGIN
    EXECUTE format($sql$
        SELECT count(*)::integer,
               array_agg(p ORDER BY p) FILTER (WHERE b IS DISTINCT FROM prev_b),
               array_agg(rn ORDER BY p) FILTER (WHERE b IS DISTINCT FROM prev_b)
          FROM (SELECT p, rn, b, lag(b) OVER (ORDER BY p) AS prev_b
                  FROM (SELECT p,
                               row_number() OVER w AS rn,
                               GREATEST((row_number() OVER w - 1) / $1,
                                        floor((sum(n) OVER w - n) / $2)) AS b
                          FROM (SELECT participant_key::text COLLATE "C" AS p, count(*) AS n
                                  FROM %s WHERE participant_key IS NOT NULL
                                 GROUP BY 1) AS d
                        WINDOW w AS (ORDER BY p)) AS x) AS y$sql$, relation)
       INTO participants, starts, start_rn
      USING every, GREATEST(50000, pg_size_bytes(current_setting('work_mem')) / 256);
END
$function$;
COMMENT ON FUNCTION incentives_internal.refresh_earnings_ranges(regclass, integer) IS
  'Part of incentives.refresh_earnings: the key ranges of a refresh of everyone batch by batch (at most every participants, about work_mem''s worth of transactions each)';

-- refresh_earnings_retry: with on_error => 'skip', a batch whose read
-- failed, participant by participant (refresh_earnings_one): members, or
-- with filter (a key range) those with transactions in the range and
-- those with earnings there, so that a participant whose transactions
-- are gone loses its rows.  Returns the rows, their total and how many
-- participants were skipped.
CREATE OR REPLACE FUNCTION incentives_internal.refresh_earnings_retry(
    target           regclass,
    swap             boolean,
    run_id           bigint,
    relation         regclass,
    filter           text,
    members          text[],
    OUT rows         bigint,
    OUT total        numeric,
    OUT exceptions   integer)
LANGUAGE plpgsql
VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $function$
#variable_conflict use_column
DECLARE
    v_members text[] := refresh_earnings_retry.members;
    v_member  text;
    v_one     record;
BEGIN
    IF refresh_earnings_retry.filter IS NOT NULL THEN
        EXECUTE format($sql$
            SELECT array_agg(k ORDER BY k)
              FROM (SELECT t.participant_key::text COLLATE "C" AS k FROM %s AS t WHERE %s
                    UNION
                    SELECT t.participant_key COLLATE "C" FROM incentives.earnings AS t WHERE %s) AS u
             WHERE k IS NOT NULL$sql$, relation, refresh_earnings_retry.filter, refresh_earnings_retry.filter)
           INTO v_members;
    END IF;
    rows := 0;
    total := 0.00;
    exceptions := 0;
    FOREACH v_member IN ARRAY COALESCE(v_members, '{}') LOOP
        SELECT * INTO v_one
          FROM incentives_internal.refresh_earnings_one(target, NOT swap, refresh_earnings_retry.run_id,
                                                        v_member, relation);
        rows := rows + v_one.rows;
        total := total + v_one.total;
        IF v_one.failed THEN
            exceptions := exceptions + 1;
        END IF;
    END LOOP;
END
$function$;
COMMENT ON FUNCTION incentives_internal.refresh_earnings_retry(regclass, boolean, bigint, regclass, text, text[]) IS
  'Part of incentives.refresh_earnings(on_error => ''skip''): a batch whose read failed, participant by participant; returns the rows, their total and the participants skipped';

-- refresh_earnings_in_batches: the rows of everyone or of keys written batch
-- by batch (refresh_earnings_rows) into target: in place in
-- incentives.earnings (the batch's participants' rows replaced), or into
-- a new partition when swap.  Everyone: participants in byte order, at
-- most progress_every of them and about work_mem's worth of transactions
-- per batch (so that a batch's rows stay in memory instead of a temporary
-- file), as key ranges (the first and last ranges are open, so every row
-- already materialized falls in one); keys: progress_every per batch.
-- With skip, a participant whose calculation fails keeps its earnings
-- (refresh_earnings_rows), and a batch whose read fails is done again
-- participant by participant (refresh_earnings_one).  A NOTICE every
-- progress_every participants and at the end.
CREATE OR REPLACE FUNCTION incentives_internal.refresh_earnings_in_batches(
    run_id            bigint,
    participant_key   text,
    transactions      regclass,
    target            regclass,
    progress_every    integer,
    skip              boolean,
    everyone          boolean,
    keys              text[],
    grouped           boolean,
    swap              boolean,
    OUT participants  integer,
    OUT rows          bigint,
    OUT total         numeric,
    OUT exceptions    integer)
LANGUAGE plpgsql
VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $function$
#variable_conflict use_column
DECLARE
    v_run         bigint   := refresh_earnings_in_batches.run_id;
    v_participant text     := refresh_earnings_in_batches.participant_key;
    v_relation    regclass := refresh_earnings_in_batches.transactions;
    v_target      regclass := refresh_earnings_in_batches.target;
    v_every       integer  := refresh_earnings_in_batches.progress_every;
    v_everyone    boolean  := refresh_earnings_in_batches.everyone;
    v_keys        text[]   := refresh_earnings_in_batches.keys;
    v_grouped     boolean  := refresh_earnings_in_batches.grouped;
    v_swap        boolean  := refresh_earnings_in_batches.swap;
    v_starts      text[];          -- everyone: the first key of each batch
    v_start_rn    bigint[];        -- and how many participants come before it, plus 1
    v_prev_done   integer := 0;
    v_nbatches    integer;
    v_total       integer;
    v_batch       integer;
    v_batch_rel   regclass;
    v_members     text[];
    v_filter      text;
    v_delete_filter text;
    v_optional    text;            -- the batch view's optional columns
    v_table       text;
    v_done        integer := 0;
    v_rows        bigint  := 0;
    v_sum         numeric := 0.00;
    v_step_rows   bigint;
    v_step_sum    numeric;
    v_step        record;
    v_batch_ok    boolean;
    v_exceptions  integer := 0;
BEGIN
    IF v_everyone THEN
        SELECT r.participants, r.starts, r.start_rn INTO v_total, v_starts, v_start_rn
          FROM incentives_internal.refresh_earnings_ranges(v_relation, v_every) AS r;
        v_nbatches := COALESCE(array_length(v_starts, 1), 0);
        IF v_nbatches = 0 AND NOT v_swap THEN
            DELETE FROM incentives.earnings;
        ELSIF NOT v_swap THEN
            -- in place, each batch replaces the rows of its participants
            -- (found through the primary key); the rows of participants
            -- with no transactions left go first
            EXECUTE format('SELECT array_agg(e.k) FROM (SELECT DISTINCT e.participant_key::text AS k
                                                          FROM incentives.earnings AS e) AS e
                             WHERE NOT EXISTS (SELECT FROM %s AS t
                                                WHERE t.participant_key::text COLLATE "C" = e.k COLLATE "C")',
                           v_relation)
              INTO v_members;
            IF v_members IS NOT NULL THEN
                DELETE FROM incentives.earnings AS t WHERE t.participant_key = ANY (v_members);
            END IF;
        END IF;
        IF v_grouped THEN
            -- one batch: key ranges would split groups
            v_nbatches := LEAST(v_nbatches, 1);
        END IF;
    ELSE
        v_total := COALESCE(array_length(v_keys, 1), 0);
        IF v_grouped THEN
            v_every := GREATEST(v_every, v_total);
        END IF;
        v_nbatches := (v_total + v_every - 1) / v_every;
    END IF;

    -- Several batches: what every participant's calculation shares stays
    -- put until this transaction ends, so all batches see the same offers,
    -- units, properties, enrollments, products and SKU windows, exchange
    -- rates, and the same memberships and group types (SHARE locks: writers wait,
    -- readers do not; taken where the role may lock, i.e. has UPDATE,
    -- DELETE or TRUNCATE on the table).  Transactions are not locked:
    -- each participant's rows come from one statement.
    IF v_nbatches > 1 THEN
        FOR v_table IN SELECT unnest(ARRAY['incentives.offers', 'incentives.skus',
                                           'incentives.uom_conversions',
                                           'incentives.participant_properties',
                                           'incentives.enrollments',
                                           'incentives.products', 'incentives.sku_products',
                                           'incentives.exchange_rates',
                                           'incentives.participant_groups', 'incentives.groups']) LOOP
            IF has_table_privilege(v_table, 'UPDATE, DELETE, TRUNCATE') THEN
                EXECUTE format('LOCK TABLE %s IN SHARE MODE', v_table);
            END IF;
        END LOOP;
    END IF;

    -- The optional columns the relation has (docs/reference.md,
    -- Transactions): a batch's view carries them, so that its grower keys,
    -- currencies and returns' originals are read as from the relation (a
    -- return's original is a transaction of the same participant: in the
    -- same batch).
    SELECT string_agg(format(', t.%I', a.attname), '' ORDER BY a.attnum)
      INTO v_optional
      FROM pg_attribute AS a
     WHERE a.attrelid = v_relation AND a.attnum > 0 AND NOT a.attisdropped
       AND a.attname IN ('grower_key', 'currency', 'original_transaction_id');

    FOR v_batch IN 1 .. v_nbatches LOOP
        -- the batch's participants: a key range or a list
        IF v_everyone THEN
            v_filter := concat_ws(' AND ',
                CASE WHEN v_batch > 1 THEN format('t.participant_key::text COLLATE "C" >= %L', v_starts[v_batch]) END,
                CASE WHEN v_batch < v_nbatches THEN format('t.participant_key::text COLLATE "C" < %L', v_starts[v_batch + 1]) END);
            IF v_filter = '' THEN
                v_filter := 'true';
            END IF;
            IF NOT v_swap THEN
                EXECUTE format('SELECT array_agg(DISTINCT t.participant_key::text) FROM %s AS t WHERE %s',
                               v_relation, v_filter)
                  INTO v_members;
                v_delete_filter := format('t.participant_key = ANY (%L::text[])', v_members);
            END IF;
        ELSE
            v_members := v_keys[(v_batch - 1) * v_every + 1 : v_batch * v_every];
            -- the relation through its participant index (COLLATE "C"),
            -- the earnings through their primary key (the column's own
            -- collation; equality is the same)
            v_filter := format('t.participant_key::text COLLATE "C" = ANY (%L::text[])', v_members);
            v_delete_filter := format('t.participant_key = ANY (%L::text[])', v_members);
        END IF;
        -- Runtime DDL, not a declaration: a temporary view of the batch's
        -- transactions, dropped below.
        IF v_filter = 'true' OR (v_participant IS NOT NULL AND v_grouped) THEN
            -- everything at once, or one member of a group (whose group
            -- the calculation reads through the participant index): the
            -- relation itself (under row-level security a group's figures
            -- then need the rows the caller cannot see, which the
            -- calculation reads as the relation's owner: docs/security.md,
            -- Participant groups)
            v_batch_rel := v_relation;
        ELSE
            EXECUTE format($sql$
                CREATE TEMPORARY VIEW incentives_refresh_batch AS
                SELECT t.transaction_id, t.participant_key, t.transaction_type,
                       t.transaction_date, t.sku_key, t.quantity, t.uom_key, t.amount%s
                  FROM %s AS t
                 WHERE %s$sql$, COALESCE(v_optional, ''), v_relation, v_filter);
            v_batch_rel := to_regclass('pg_temp.incentives_refresh_batch');
        END IF;

        -- the batch written from C (in a subtransaction: with skip, a
        -- batch whose read fails is done again participant by participant)
        v_batch_ok := true;
        BEGIN
            SELECT * INTO v_step
              FROM incentives_internal.refresh_earnings_rows(v_target, v_run, v_batch_rel,
                                                             CASE WHEN v_grouped THEN v_participant END,
                                                             refresh_earnings_in_batches.skip,
                                                             CASE WHEN NOT v_swap THEN v_delete_filter END,
                                                             0, 1);
            v_step_rows := v_step.rows;
            v_step_sum := v_step.total;
            v_exceptions := v_exceptions + v_step.exceptions;
        EXCEPTION WHEN data_exception OR integrity_constraint_violation THEN
            IF NOT refresh_earnings_in_batches.skip THEN
                RAISE;
            END IF;
            v_batch_ok := false;
        END;
        IF NOT v_batch_ok THEN
            -- skip: the batch's read failed; again, participant by participant
            SELECT * INTO v_step
              FROM incentives_internal.refresh_earnings_retry(v_target, v_swap, v_run, v_relation,
                                                              CASE WHEN v_everyone THEN v_filter END,
                                                              v_members);
            v_step_rows := v_step.rows;
            v_step_sum := v_step.total;
            v_exceptions := v_exceptions + v_step.exceptions;
        END IF;
        IF v_batch_rel <> v_relation THEN
            EXECUTE format('DROP VIEW %s', v_batch_rel);
        END IF;

        IF v_everyone THEN
            v_done := CASE WHEN v_batch < v_nbatches THEN v_start_rn[v_batch + 1] - 1 ELSE v_total END;
        ELSE
            v_done := LEAST(v_batch * v_every, v_total);
        END IF;
        v_rows := v_rows + v_step_rows;
        v_sum  := v_sum + v_step_sum;
        IF v_participant IS NULL
           AND (v_done / v_every > v_prev_done / v_every OR v_batch = v_nbatches) THEN
            RAISE NOTICE 'refresh_earnings: % of % participants, % rows', v_done, v_total, v_rows;
        END IF;
        v_prev_done := v_done;
        -- visible to other sessions at once in pg_stat_activity, unlike
        -- the run row, which commits with the earnings
        PERFORM set_config('application_name',
                           format('incentives refresh run %s: %s/%s', v_run, v_done, v_total),
                           true);
    END LOOP;
    participants := v_total;
    rows := v_rows;
    total := v_sum;
    exceptions := v_exceptions;
END
$function$;
COMMENT ON FUNCTION incentives_internal.refresh_earnings_in_batches(bigint, text, regclass, regclass, integer, boolean, boolean, text[], boolean, boolean) IS
  'Part of incentives.refresh_earnings (call the procedure, not this): replaces the earnings of everyone or of the given participants batch by batch (with skip, a failing batch participant by participant) and returns the participants, rows, total and exceptions';

-- refresh_earnings_swap_lock: every lock the swap needs, taken together
-- before any of them is used (docs/operations.md, Backups and
-- refreshes): incentives.earnings and each of its partitions (LOCK TABLE
-- on the parent goes down the tree), and the run's new partition, ACCESS
-- EXCLUSIVE.  A session holding one of them (a pg_dump, which locks every
-- table it dumps ACCESS SHARE until it ends, or a reader) is waited for
-- 100 ms at a time: the attempt gives back what it took, sleeps, and
-- tries again, so the swap never holds one relation while it waits for
-- another that such a session holds and may want the first of (a
-- deadlock).  Sessions that start reading meanwhile queue behind an
-- attempt for at most those 100 ms.  An autovacuum of one of them is the
-- exception: PostgreSQL cancels an autovacuum that blocks a lock only
-- once the lock has been waited for deadlock_timeout, so while one holds
-- a lock of the swap, an attempt waits that long and a little more (and a
-- deadlock that wait runs into fails the attempt, not the refresh).  The
-- caller's lock_timeout, when it has one, bounds the whole wait (55P03,
-- as any lock wait).
CREATE OR REPLACE FUNCTION incentives_internal.refresh_earnings_swap_lock(target regclass)
RETURNS void
LANGUAGE plpgsql
VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    v_saved   text := current_setting('lock_timeout');
    v_limit   interval := NULLIF(current_setting('lock_timeout'), '0')::interval;
    v_start   timestamptz := clock_timestamp();
    v_sleep   double precision := 0.01;
    v_attempt text := '100ms';
BEGIN
    LOOP
        BEGIN
            PERFORM set_config('lock_timeout', v_attempt, true);
            EXECUTE format('LOCK TABLE incentives.earnings, %s IN ACCESS EXCLUSIVE MODE',
                           refresh_earnings_swap_lock.target);
            PERFORM set_config('lock_timeout', v_saved, true);
            RETURN;
        EXCEPTION WHEN lock_not_available OR deadlock_detected THEN
            PERFORM set_config('lock_timeout', v_saved, true);
            -- an autovacuum holds one of them: wait it out of the way
            v_attempt := CASE WHEN EXISTS (
                                  SELECT FROM pg_locks AS l
                                  JOIN pg_stat_activity AS a ON a.pid = l.pid
                                 WHERE a.backend_type = 'autovacuum worker' AND l.granted
                                   AND l.locktype = 'relation' AND l.database = (SELECT d.oid FROM pg_database AS d
                                                                                   WHERE d.datname = current_database())
                                   AND (l.relation = refresh_earnings_swap_lock.target
                                        OR l.relation IN (SELECT t.relid FROM pg_partition_tree('incentives.earnings') AS t)))
                              THEN ((extract(epoch FROM current_setting('deadlock_timeout')::interval) * 1000)::integer
                                    + 200)::text || 'ms'
                              ELSE '100ms' END;
            IF v_limit IS NOT NULL AND clock_timestamp() - v_start >= v_limit THEN
                PERFORM incentives_internal.raise_error(
                    '55P03', format('refresh_earnings could not take the locks of its swap within lock_timeout (%s)', v_saved),
                    '',
                    'A session holds incentives.earnings or one of its partitions (a pg_dump, a long read): the refresh waits for it; raise lock_timeout, refresh when it ends, or refresh in place (incentives.full_refresh).');
            END IF;
        END;
        PERFORM pg_sleep(v_sleep);
        v_sleep := least(v_sleep * 2, 1);
    END LOOP;
END
$function$;
COMMENT ON FUNCTION incentives_internal.refresh_earnings_swap_lock(regclass) IS
  'Part of incentives.refresh_earnings: takes every lock of the swap (incentives.earnings, its partitions and the run''s new one, ACCESS EXCLUSIVE) together, waiting for a session that holds one 100 ms at a time and giving back what it took in between, so that it never deadlocks with a pg_dump; lock_timeout bounds the whole wait';

-- refresh_earnings_attach: the new partition indexed (the leaves its
-- writers indexed are taken as they are), then swapped in for the old
-- one(s); readers wait for the commit (the detach locks the table) and
-- then see only the new rows.
CREATE OR REPLACE FUNCTION incentives_internal.refresh_earnings_attach(
    run_id  bigint,
    target  regclass)
RETURNS void
LANGUAGE plpgsql
VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    v_target regclass := refresh_earnings_attach.target;
    v_old    regclass;
BEGIN
    PERFORM incentives_internal.refresh_earnings_index(v_target);
    PERFORM incentives_internal.refresh_earnings_swap_lock(v_target);
    EXECUTE format('COMMENT ON TABLE %s IS %L', v_target,
                   format('Partition of incentives.earnings written by refresh run %s (replaced by the next full refresh)',
                          refresh_earnings_attach.run_id));
    FOR v_old IN SELECT i.inhrelid::regclass
                   FROM pg_inherits AS i
                  WHERE i.inhparent = 'incentives.earnings'::regclass
                    AND i.inhrelid <> 'incentives_internal.earnings_default'::regclass
                  ORDER BY i.inhrelid LOOP
        EXECUTE format('ALTER TABLE incentives.earnings DETACH PARTITION %s', v_old);
        EXECUTE format('DROP TABLE %s', v_old);
    END LOOP;
    DELETE FROM incentives_internal.earnings_default;
    EXECUTE format('ALTER TABLE incentives.earnings ATTACH PARTITION %s FOR VALUES FROM (MINVALUE) TO (MAXVALUE)',
                   v_target);
END
$function$;
COMMENT ON FUNCTION incentives_internal.refresh_earnings_attach(bigint, regclass) IS
  'Part of incentives.refresh_earnings (call the procedure, not this): builds the new partition''s indexes and swaps it in for the old partitions of incentives.earnings';

-- refresh_earnings_purge: the run log's rows of changed_only refreshes
-- that succeeded without exceptions and finished longer ago than
-- incentives.run_log_keep (docs/lifecycle.md, The run log).  With the
-- caller's rights: a role that may not delete from the run log (or sees
-- none of its rows) purges nothing.
CREATE OR REPLACE FUNCTION incentives_internal.refresh_earnings_purge()
RETURNS void
LANGUAGE plpgsql
VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    v_before timestamptz := now() - incentives_internal.run_log_keep();
BEGIN
    IF v_before IS NULL OR NOT has_table_privilege('incentives.calculation_runs', 'DELETE') THEN
        RETURN;
    END IF;
    DELETE FROM incentives.calculation_runs AS r
     WHERE r.started_at < v_before
       AND r.finished_at < v_before
       AND r.changed_only
       AND r.status = 'succeeded';
END
$function$;
COMMENT ON FUNCTION incentives_internal.refresh_earnings_purge() IS
  'Part of incentives.refresh_earnings (call the procedure, not this): deletes the run log''s rows of changed_only refreshes that succeeded without exceptions longer ago than incentives.run_log_keep';

-- refresh_earnings_work: one run, start to end (partition: the run's
-- partition committed by refresh_earnings_prepare, with jobs > 1).
-- Everyone by a role that owns incentives.earnings (or is a member of its
-- owner): a new partition written from C and swapped in.  Anything else (one participant, the
-- changed ones, everyone by a role that may only insert and delete):
-- batches replacing the rows in place.  Then the run row gets its counts.
CREATE OR REPLACE FUNCTION incentives_internal.refresh_earnings_work(
    run_id          bigint,
    participant_key text,
    transactions    regclass,
    progress_every  integer,
    on_error        text,
    changed_only    boolean,
    jobs            integer,
    partition       regclass)
RETURNS void
LANGUAGE plpgsql
VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $function$
#variable_conflict use_column
DECLARE
    v_run     bigint  := refresh_earnings_work.run_id;
    v_every   integer := GREATEST(COALESCE(refresh_earnings_work.progress_every, 1000), 1);
    v_skip    boolean := refresh_earnings_work.on_error = 'skip';
    v_plan    record;
    v_swap    boolean;
    v_target  regclass := 'incentives.earnings'::regclass;
    v_written boolean := false;
    v_done    record;
BEGIN
    SELECT * INTO v_plan
      FROM incentives_internal.refresh_earnings_plan(refresh_earnings_work.participant_key,
                                                     refresh_earnings_work.transactions,
                                                     refresh_earnings_work.changed_only);
    -- a changed_only run replaces rows in place even when everyone
    -- changed: it never waits for the swap's detach (docs/analyst-guide.md,
    -- Live earnings)
    v_swap := v_plan.everyone AND NOT refresh_earnings_work.changed_only
              AND incentives_internal.refresh_swaps();
    IF v_swap THEN
        SELECT * INTO v_done
          FROM incentives_internal.refresh_earnings_partition(v_run, refresh_earnings_work.transactions,
                                                              v_every, v_skip, refresh_earnings_work.jobs,
                                                              refresh_earnings_work.partition);
        v_target := v_done.target;
        v_written := v_done.written;
    END IF;
    IF NOT v_written THEN
        SELECT * INTO v_done
          FROM incentives_internal.refresh_earnings_in_batches(v_run, refresh_earnings_work.participant_key,
                                                            refresh_earnings_work.transactions, v_target,
                                                            v_every, v_skip, v_plan.everyone, v_plan.keys,
                                                            v_plan.grouped, v_swap);
    END IF;
    IF v_swap THEN
        PERFORM incentives_internal.refresh_earnings_attach(v_run, v_target);
    END IF;

    UPDATE incentives.calculation_runs AS r
       SET status = CASE WHEN v_done.exceptions > 0 THEN 'completed_with_exceptions' ELSE 'succeeded' END,
           finished_at = clock_timestamp(),
           participants = v_done.participants,
           rows = v_done.rows,
           total_incentive = v_done.total,
           exceptions = v_done.exceptions
     WHERE r.run_id = v_run;
    IF refresh_earnings_work.changed_only THEN
        PERFORM incentives_internal.refresh_earnings_purge();
    END IF;
END
$function$;
COMMENT ON FUNCTION incentives_internal.refresh_earnings_work(bigint, text, regclass, integer, text, boolean, integer, regclass) IS
  'Part of incentives.refresh_earnings (call the procedure, not this): replaces one participant''s, the changed participants'' or all earnings and marks the run succeeded';

-- The errors of the extension's routines: raised from C with their
-- SQLSTATE (five characters), message, and the detail and hint when they
-- are not empty (as RAISE writes them), and a CONTEXT without the frames
-- of the extension's own routines: the caller's own frames stay
-- (docs/reference.md, Error context).  refresh_earnings raises again what
-- GET STACKED DIAGNOSTICS read of an error through it.
CREATE OR REPLACE FUNCTION incentives_internal.raise_error(state text, message text, detail text, hint text)
RETURNS void
AS 'MODULE_PATHNAME', 'incentives_raise_error'
LANGUAGE C VOLATILE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION incentives_internal.raise_error(text, text, text, text) IS
  'Raises an error with the given SQLSTATE (five characters) and message, and the detail and hint when they are not empty; its CONTEXT leaves out the frames of the extension''s own routines (docs/reference.md, Error context)';

-- raise_error with the schema, table and column fields of the error too
-- (as RAISE ... USING SCHEMA, TABLE, COLUMN), each when it is not empty.
CREATE OR REPLACE FUNCTION incentives_internal.raise_column_error(state text, message text, detail text, hint text,
                                                                  schema_name text, table_name text, column_name text)
RETURNS void
AS 'MODULE_PATHNAME', 'incentives_raise_error'
LANGUAGE C VOLATILE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION incentives_internal.raise_column_error(text, text, text, text, text, text, text) IS
  'raise_error with the error''s schema, table and column fields too, each when it is not empty';

-- refuse_read_only: the procedures and the functions that write the
-- ledger begin with it: in a read-only transaction (on a standby every
-- transaction is one) they fail at once, naming themselves, instead of at
-- their first write or never (docs/operations.md, Standbys).
CREATE OR REPLACE FUNCTION incentives_internal.refuse_read_only(routine text)
RETURNS void
LANGUAGE plpgsql
STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $function$
BEGIN
    IF current_setting('transaction_read_only')::boolean THEN
        IF pg_is_in_recovery() THEN
            PERFORM incentives_internal.raise_error(
                '25006', format('%s cannot run on a standby', refuse_read_only.routine),
                'A standby replays what the primary writes: its earnings, statements and accruals follow the primary''s.',
                format('Run %s on the primary.', refuse_read_only.routine));
        END IF;
        PERFORM incentives_internal.raise_error(
            '25006', format('%s cannot run in a read-only transaction', refuse_read_only.routine), '',
            'Run it in a read-write transaction (BEGIN READ WRITE, or with default_transaction_read_only off).');
    END IF;
END
$function$;
COMMENT ON FUNCTION incentives_internal.refuse_read_only(text) IS
  'Raises 25006 naming the routine when the transaction is read-only (on a standby: that it runs on the primary); the procedures and the functions that write the ledger call it first';

CREATE OR REPLACE PROCEDURE incentives.refresh_earnings(
    participant_key text     DEFAULT NULL,
    transactions    regclass DEFAULT 'incentives.transactions',
    progress_every  integer  DEFAULT 1000,
    on_error        text     DEFAULT 'raise',
    changed_only    boolean  DEFAULT false,
    jobs            integer  DEFAULT 1)
LANGUAGE plpgsql
AS $procedure$
-- No SET clause: a procedure with one cannot COMMIT.  Every name and
-- operator below is schema-qualified; the SQL work is in
-- incentives_internal.refresh_earnings_work.
DECLARE
    -- types too: a domain "text" in a schema before pg_catalog on the
    -- caller's search_path must not run (docs/security.md, Search path)
    v_run        pg_catalog.int8;
    v_can_commit pg_catalog.bool;
    v_failed     pg_catalog.bool := false;
    v_state      pg_catalog.text;
    v_message    pg_catalog.text;
    v_detail     pg_catalog.text;
    v_hint       pg_catalog.text;
    v_where      pg_catalog.text;
    -- jobs apply to a refresh of everyone (changed_only: one process)
    v_jobs       pg_catalog.int4 := CASE WHEN refresh_earnings.participant_key IS NULL
                                              AND NOT refresh_earnings.changed_only
                                         THEN refresh_earnings.jobs ELSE 1 END;
    v_partition  pg_catalog.regclass;
BEGIN
    PERFORM incentives_internal.refuse_read_only('refresh_earnings');
    PERFORM incentives_internal.refresh_earnings_check(refresh_earnings.participant_key,
                                                       refresh_earnings.transactions,
                                                       refresh_earnings.on_error,
                                                       refresh_earnings.changed_only,
                                                       refresh_earnings.jobs);
    -- Can this call commit?  Yes when CALLed as a top-level statement
    -- outside a transaction block (psql, pg_cron); no inside BEGIN ... COMMIT
    -- or a function.  Asked of SPI, never read from an error message.
    v_can_commit := incentives_internal.transaction_control_allowed();
    -- jobs > 1: background writers in transactions of their own, which
    -- need the run's partition committed before they start
    IF refresh_earnings.jobs OPERATOR(pg_catalog.>) 1 AND NOT v_can_commit THEN
        PERFORM incentives_internal.raise_error(
            '25001', 'refresh_earnings with jobs > 1 cannot run inside a transaction block or a function', '',
            'CALL it as a statement of its own (outside BEGIN ... COMMIT), or use jobs => 1 here.');
    END IF;
    -- changed_only with nothing changed: nothing to do, no run logged
    -- (a live job every few seconds, docs/analyst-guide.md, Live earnings)
    IF refresh_earnings.changed_only AND NOT EXISTS (SELECT FROM incentives.earnings_changes) THEN
        RETURN;
    END IF;
    -- changed_only that may commit never waits for another refresh: it
    -- takes the refresh lock for the run or returns at once, and the
    -- changes stay logged for the next run
    IF refresh_earnings.changed_only AND v_can_commit THEN
        IF NOT incentives_internal.refresh_try_hold() THEN
            RAISE NOTICE 'refresh_earnings: another refresh is running; the changes stay for the next one';
            RETURN;
        END IF;
    END IF;

    -- a failure of this run's calculation is the one calculation_failure()
    -- names when the run fails (refresh_earnings_failed)
    PERFORM incentives_internal.calculation_failure_clear();
    v_run := incentives_internal.refresh_earnings_begin(refresh_earnings.participant_key,
                                                        refresh_earnings.transactions,
                                                        refresh_earnings.on_error,
                                                        refresh_earnings.changed_only);
    IF v_can_commit THEN
        COMMIT;   -- the 'running' row is visible while the refresh runs
    END IF;

    -- jobs > 1: the refresh lock and the new partition, committed
    IF v_jobs OPERATOR(pg_catalog.>) 1 THEN
        BEGIN
            v_partition := incentives_internal.refresh_earnings_prepare(v_run, refresh_earnings.transactions,
                                                                        v_jobs);
        EXCEPTION WHEN OTHERS OR query_canceled THEN
            GET STACKED DIAGNOSTICS v_state   = RETURNED_SQLSTATE,
                                    v_message = MESSAGE_TEXT,
                                    v_detail  = PG_EXCEPTION_DETAIL,
                                    v_hint    = PG_EXCEPTION_HINT;
            v_failed := true;
        END;
        IF v_partition IS NULL THEN
            v_jobs := 1;   -- a role that refreshes in place: one process
        END IF;
        IF NOT v_failed THEN
            COMMIT;
        END IF;
    END IF;

    -- The replacement runs in a subtransaction: on error its deletes and
    -- inserts are undone, the previous earnings stay, and the failure is
    -- recorded after it.
    IF NOT v_failed THEN
        BEGIN
            PERFORM incentives_internal.refresh_earnings_work(v_run, refresh_earnings.participant_key,
                                                              refresh_earnings.transactions,
                                                              refresh_earnings.progress_every,
                                                              refresh_earnings.on_error,
                                                              refresh_earnings.changed_only,
                                                              v_jobs, v_partition);
        EXCEPTION WHEN OTHERS OR query_canceled THEN
            GET STACKED DIAGNOSTICS v_state   = RETURNED_SQLSTATE,
                                    v_message = MESSAGE_TEXT,
                                    v_detail  = PG_EXCEPTION_DETAIL,
                                    v_hint    = PG_EXCEPTION_HINT,
                                    v_where   = PG_EXCEPTION_CONTEXT;
            -- where the engine was when a calculation failed: its own context
            -- line ("calculating transaction ... of participant ..."), if any
            v_where := pg_catalog.substring(v_where, '(?n)^calculating .*$');
            v_failed := true;
        END;
    END IF;
    IF v_failed AND v_partition IS NOT NULL THEN
        -- the writers' committed rows go with the run's partition
        PERFORM incentives_internal.refresh_earnings_drop_orphans();
    END IF;
    PERFORM incentives_internal.refresh_release();
    PERFORM incentives_internal.refresh_earnings_end(v_run);

    IF v_failed THEN
        PERFORM incentives_internal.refresh_earnings_failed(v_run, refresh_earnings.participant_key,
                                                            v_state, v_message, v_detail, v_where);
        IF v_can_commit THEN
            COMMIT;   -- the failed run's row survives the error below
        END IF;
        PERFORM incentives_internal.raise_error(v_state, v_message, v_detail, v_hint);
    END IF;
END
$procedure$;
COMMENT ON PROCEDURE incentives.refresh_earnings(text, regclass, integer, text, boolean, integer) IS
  'Recalculates one participant''s, every participant''s (NULL) or, with changed_only, the changed participants'' earnings into incentives.earnings atomically and logs the run in incentives.calculation_runs; on_error => ''skip'' keeps a failing participant''s previous earnings and logs it in incentives.calculation_exceptions; on error the previous earnings stay and, when CALLed outside a transaction block, the failed run is committed before the error is raised; NOTICE every progress_every participants; jobs processes calculate a refresh of everyone';
