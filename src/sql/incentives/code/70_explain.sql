------------------------------------------------------------------------
-- Explain, tier progress, requirement progress and stack progress (built on
-- incentives.incentive_diagnostics)
------------------------------------------------------------------------

-- The type of an aggregation key (docs/reference.md, Participant
-- hierarchies), for tier_progress and incentive_explain: a key above the
-- participant in an offer with a group_type is of that type; else the
-- key's row of incentives.groups, as the caller sees it.
CREATE OR REPLACE FUNCTION incentives_internal.aggregation_type(
    group_key text, participant_key text, offer_group_type text)
RETURNS text
LANGUAGE sql
STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $function$
    SELECT CASE WHEN $1 IS NULL THEN NULL
                WHEN $3 IS NOT NULL AND $1 <> $2 THEN $3
                ELSE (SELECT g.group_type FROM incentives.groups AS g WHERE g.group_key = $1)
           END
$function$;
COMMENT ON FUNCTION incentives_internal.aggregation_type(text, text, text) IS
  'tier_progress and incentive_explain helper: the type of the aggregation key group_key of participant_key''s rows in an offer with the given group_type (NULL: none): that type for a key above the participant, else the key''s incentives.groups row as the caller sees it; NULL for no key';

CREATE OR REPLACE FUNCTION incentives.incentive_explain(
    participant_key text,
    offer_key       text,
    properties      jsonb       DEFAULT '{}',
    transactions    regclass    DEFAULT 'incentives.transactions',
    as_of           timestamptz DEFAULT NULL,
    through_date    date        DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql
STABLE PARALLEL RESTRICTED
SET search_path = pg_catalog, pg_temp
AS $function$
-- Everything explained comes from the engine: incentive_diagnostics (the
-- entries, thresholds, tiers, coverage and overlaps, for an offer the
-- participant's transactions touch or not) and incentive_calculate (the
-- rows and their totals); the offer's label and calculator from its
-- compiled form.  Nothing is derived from the document here.
#variable_conflict use_column
DECLARE
    v_participant text     := incentive_explain.participant_key;
    v_offer       text     := incentive_explain.offer_key;
    v_properties  jsonb    := COALESCE(incentive_explain.properties, '{}');
    v_relation    regclass := COALESCE(incentive_explain.transactions, 'incentives.transactions');
    v_as_of       timestamptz := incentive_explain.as_of;
    v_through     date     := incentive_explain.through_date;
    v_label       text;
    v_calculator  text;
    v_group_type  text;
    v_strategy    text;
    v_earnings    incentives.earning[];
    v_diag        jsonb;
    v_result      jsonb;
    v_basis       text;
    v_own         text;
BEGIN
    IF v_participant IS NULL THEN
        PERFORM incentives_internal.raise_error('22023', 'participant_key must not be NULL', '', '');
    END IF;
    IF v_offer IS NULL THEN
        PERFORM incentives_internal.raise_error('22023', 'offer_key must not be NULL', '', '');
    END IF;
    IF v_as_of IS NULL THEN
        SELECT s.label, s.calculator_key, s.group_type INTO v_label, v_calculator, v_group_type
          FROM incentives.offers AS o
         CROSS JOIN LATERAL incentives_internal.offer_summary(o.document) AS s
         WHERE o.offer_key = v_offer;
    ELSE
        -- the offer as it was (docs/lifecycle.md, Offer versions and as_of)
        SELECT s.label, s.calculator_key, s.group_type INTO v_label, v_calculator, v_group_type
          FROM incentives.offer_versions AS v
         CROSS JOIN LATERAL incentives_internal.offer_summary(v.document) AS s
         WHERE v.offer_key = v_offer
           AND v.valid_from <= v_as_of AND (v.valid_to IS NULL OR v.valid_to > v_as_of);
    END IF;
    IF NOT FOUND AND v_as_of IS NULL THEN
        PERFORM incentives_internal.raise_error(
            '22023', format('offer "%s" does not exist', v_offer), '',
            'offer_key must name an offer in incentives.offers.');
    ELSIF NOT FOUND THEN
        PERFORM incentives_internal.raise_error(
            '22023', format('offer "%s" does not exist', v_offer),
            format('The calculation is as of %s.', v_as_of),
            'offer_key must name an offer that incentives.offer_versions shows valid at as_of.');
    END IF;

    -- The calculation's own rows: the totals are theirs.
    SELECT COALESCE(array_agg(e ORDER BY e.incentive_rate_key COLLATE "C", e.transaction_id COLLATE "C"),
                    '{}')
      INTO v_earnings
      FROM incentives.incentive_calculate(v_participant, v_properties, ARRAY[v_offer], v_relation,
                                          v_as_of, v_through) AS e;

    -- The engine's account: one row, the participant being named (an offer
    -- aggregated by group: of its group, the first in key order when its
    -- transactions count in several, a mid-season move).
    SELECT d.strategy_key, d.diagnostics INTO v_strategy, v_diag
      FROM incentives.incentive_diagnostics(v_participant, v_properties, ARRAY[v_offer], v_relation,
                                            v_as_of, v_through) AS d
     WHERE d.offer_key = v_offer AND d.participant_key = v_participant
     ORDER BY d.group_key IS NULL, d.group_key COLLATE "C"
     LIMIT 1;

    -- Whose figures these are (docs/analyst-guide.md, incentive_explain):
    -- the strategy's (threshold, tiers, entries, stacks, the earning
    -- transactions, the rules) are the group's when the offer aggregates
    -- by group and the participant is a member of one, else the
    -- participant's own; the totals and rows are always the participant's
    -- own rows, a member's when the rest is its group's.
    v_basis := CASE WHEN v_diag -> 'aggregation' ->> 'group_key' IS NOT NULL THEN 'group' ELSE 'participant' END;
    v_own := CASE WHEN v_basis = 'group' THEN 'member' ELSE 'participant' END;

    v_result := jsonb_build_object(
        'participant_key', v_participant,
        'offer_key', v_offer,
        'label', v_label,
        'strategy_key', v_strategy,
        'calculator_key', v_calculator,
        'basis', v_basis,
        'totals', incentives_internal.explain_totals(v_earnings, NULL) || jsonb_build_object('basis', v_own));
    -- what the calculation was limited to, only when it was
    v_result := v_result || jsonb_strip_nulls(jsonb_build_object('as_of', v_as_of, 'through_date', v_through));
    -- an offer with program rules: their state (enrollment windows,
    -- requirements, limits), as the engine diagnosed them
    IF v_diag ? 'rules' THEN
        v_result := v_result || jsonb_build_object('rules', v_diag -> 'rules');
    END IF;
    -- an offer aggregated by group: the group whose figures these are, and
    -- its members' contributions (those the caller may see)
    -- (and the key's type: docs/reference.md, Participant hierarchies)
    IF v_diag ? 'aggregation' THEN
        v_result := v_result || jsonb_build_object('aggregation', v_diag -> 'aggregation'
            || jsonb_build_object('group_type', incentives_internal.aggregation_type(
                   v_diag -> 'aggregation' ->> 'group_key', v_participant, v_group_type)));
        v_diag := v_diag - 'aggregation';
    END IF;

    IF v_strategy = 'standard' THEN
        -- each entry as diagnosed, with its rows and their totals
        RETURN v_result || jsonb_build_object('entries', (
            SELECT COALESCE(jsonb_agg(
                     (e - 'transactions' - 'incentive_amount') || jsonb_build_object(
                       'totals', incentives_internal.explain_totals(v_earnings, e ->> 'rate_key')
                                 || jsonb_build_object('basis', v_own),
                       'rows', incentives_internal.explain_rows(v_earnings, e ->> 'rate_key'))
                     ORDER BY n), '[]'::jsonb)
              FROM jsonb_array_elements(v_diag -> 'entries') WITH ORDINALITY AS en(e, n)));
    END IF;

    IF v_strategy = 'stepped' THEN
        RETURN v_result || v_diag || jsonb_build_object('rows', incentives_internal.explain_rows(v_earnings, NULL));
    END IF;

    -- stacked: each stack as diagnosed, with its rows and their totals
    RETURN v_result || jsonb_build_object(
        'sets', v_diag -> 'sets',
        'stacks', (SELECT COALESCE(jsonb_agg(
                            s || jsonb_build_object(
                                   'totals', incentives_internal.explain_totals(v_earnings, s ->> 'rate_key')
                                             || jsonb_build_object('basis', v_own),
                                   'rows', incentives_internal.explain_rows(v_earnings, s ->> 'rate_key'))
                            ORDER BY n), '[]'::jsonb)
                     FROM jsonb_array_elements(v_diag -> 'stacks') WITH ORDINALITY AS st(s, n)));
END
$function$;
COMMENT ON FUNCTION incentives.incentive_explain(text, text, jsonb, regclass, timestamptz, date) IS
  'Why a participant earns what it does under one offer, as JSON: standard, each entry with its matched rows and totals; stepped, the threshold value, every tier (met or not, what it would pay), the selected and next tier and the gap, and for incremental tiers the bands and the blended rate; stacked, coverage per SKU set, overlap and factors per stack; with program rules, the enrollment windows used, each requirement against its minimum and the limits applied; aggregated by group, the group and its members'' contributions; "basis" says whose figures the strategy''s part is: "group" (a member of a group under an offer aggregated by group) or "participant"; totals (of the whole, of each entry and stack) are incentive_calculate''s, of the participant''s own rows, with "basis" "member" or "participant"; as_of and through_date as for incentive_calculate';

CREATE OR REPLACE FUNCTION incentives_internal.explain_totals(earnings incentives.earning[], rate_key text)
RETURNS jsonb
LANGUAGE sql
IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $function$
    SELECT jsonb_build_object(
             'rows', count(*),
             'transactions', count(DISTINCT e.transaction_id),
             'incentivized_amount', COALESCE(sum(e.incentivized_amount), 0.00),
             'incentive_amount', COALESCE(sum(e.incentive_amount), 0.00))
      FROM unnest($1) AS e
     WHERE $2 IS NULL OR e.incentive_rate_key = $2
$function$;
COMMENT ON FUNCTION incentives_internal.explain_totals(incentives.earning[], text) IS
  'incentive_explain helper: rows, distinct transactions and the sums of incentivized_amount and incentive_amount of the earning rows with the given rate key (all rows when NULL)';

CREATE OR REPLACE FUNCTION incentives_internal.explain_rows(earnings incentives.earning[], rate_key text)
RETURNS jsonb
LANGUAGE sql
IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $function$
    SELECT COALESCE(jsonb_agg(to_jsonb(e) - 'participant_key' - 'offer_key' - 'offer_calculator'
                              ORDER BY e.incentive_rate_key COLLATE "C", e.transaction_id COLLATE "C"),
                    '[]'::jsonb)
      FROM unnest($1) AS e
     WHERE $2 IS NULL OR e.incentive_rate_key = $2
$function$;
COMMENT ON FUNCTION incentives_internal.explain_rows(incentives.earning[], text) IS
  'incentive_explain helper: the earning rows with the given rate key (all rows when NULL) as JSON objects, without the participant, offer and calculator';

-- tier_progress and stack_progress are SQL functions (an output column may
-- share its name with an argument only in SQL functions).  Their bodies
-- name incentives.incentive_diagnostics, which may be created after this
-- part: like pg_dump, do not check the bodies at creation (CREATE EXTENSION
-- restores the setting when the script ends).
SET check_function_bodies = false;

CREATE OR REPLACE FUNCTION incentives_internal.progress_figure(threshold_type text, value numeric)
RETURNS numeric
LANGUAGE sql
IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $function$
    -- dollars (aggregated_amount) show at least cents: 850 -> 850.00, while
    -- 0.001 stays 0.001 (padding only, never rounding a gap away)
    SELECT CASE WHEN $1 = 'aggregated_amount' AND scale($2) < 2 THEN round($2, 2) ELSE $2 END
$function$;
COMMENT ON FUNCTION incentives_internal.progress_figure(text, numeric) IS
  'tier_progress helper: a threshold value or gap as shown, at least two decimal places for dollar thresholds (aggregated_amount), never rounded';

CREATE OR REPLACE FUNCTION incentives_internal.own_requirements(requirements jsonb, participant_key text)
RETURNS jsonb
LANGUAGE sql
IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $function$
    -- a requirement of scope member is judged on each member's own
    -- transactions: the participant's own value, met and gap in its place
    SELECT COALESCE(jsonb_agg(CASE WHEN r.r ->> 'scope' = 'member'
                                   THEN (r.r - 'members') || COALESCE(
                                          (SELECT m - 'participant_key'
                                             FROM jsonb_array_elements(r.r -> 'members') AS m
                                            WHERE m ->> 'participant_key' = $2
                                            LIMIT 1),
                                          '{}'::jsonb)
                                   ELSE r.r END
                              ORDER BY r.n), '[]'::jsonb)
      FROM jsonb_array_elements($1) WITH ORDINALITY AS r(r, n)
$function$;
COMMENT ON FUNCTION incentives_internal.own_requirements(jsonb, text) IS
  'tier_progress and requirement_progress helper: the diagnostics'' requirements with each one of scope member showing the given participant''s own value, met and gap (docs/reference.md, Participant groups)';

CREATE OR REPLACE FUNCTION incentives_internal.progress_volume(threshold_type text, value text)
RETURNS numeric
LANGUAGE sql
IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $function$
    -- a volume of the offer's threshold, as shown: dollars (the amount
    -- types) with at least cents, units as they are; none for a property
    SELECT CASE WHEN $1 IN ('aggregated_amount', 'growth_amount') AND scale($2::numeric) < 2
                THEN round($2::numeric, 2)
                WHEN $1 IN ('aggregated_amount', 'growth_amount', 'aggregated_quantity', 'growth_quantity')
                THEN $2::numeric END
$function$;
COMMENT ON FUNCTION incentives_internal.progress_volume(text, text) IS
  'tier_progress helper: a volume of a stepped offer''s threshold (a current value, a baseline, the volume of the next tier or still needed) as shown: at least two decimal places for dollars (the amount types), quantities as they are, NULL for a property threshold';

CREATE OR REPLACE FUNCTION incentives_internal.progress_needed(threshold_type text, value text)
RETURNS numeric
LANGUAGE sql
IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $function$
    -- the volume at which the next tier is met, or still needed for it:
    -- dollars (the amount types) in cents, rounded up so that the amount
    -- shown does reach the tier (a growth tier's B x (1 + t / 100) has more
    -- places); units as they are; none for a property
    SELECT CASE WHEN $1 IN ('aggregated_amount', 'growth_amount')
                THEN round(ceil($2::numeric * 100) / 100, 2)
                ELSE incentives_internal.progress_volume($1, $2) END
$function$;
COMMENT ON FUNCTION incentives_internal.progress_needed(text, text) IS
  'tier_progress helper: the volume of the next tier or still needed to reach it, as shown: dollars (the amount types) in cents rounded up, quantities as they are, NULL for a property threshold';

CREATE OR REPLACE FUNCTION incentives.tier_progress(
    participant_key text        DEFAULT NULL,
    properties      jsonb       DEFAULT '{}',
    transactions    regclass    DEFAULT 'incentives.transactions',
    as_of           timestamptz DEFAULT NULL,
    through_date    date        DEFAULT NULL)
RETURNS SETOF incentives.tier_progress_row
LANGUAGE sql
STABLE PARALLEL RESTRICTED
ROWS 100
SET search_path = pg_catalog, pg_temp
AS $function$
SELECT d.participant_key,
       d.offer_key,
       -- the offer's own (the diagnostics leave the strategy's figures out
       -- of an offer whose data errors a failed requirement kept back)
       p.threshold_type,
       d.diagnostics ->> 'property_key',
       incentives_internal.progress_figure(p.threshold_type, (d.diagnostics ->> 'threshold_value')::numeric),
       d.diagnostics ->> 'selected_rate_key',
       cur.threshold,
       d.diagnostics ->> 'next_rate_key',
       (d.diagnostics ->> 'next_threshold')::numeric,
       incentives_internal.progress_figure(p.threshold_type, (d.diagnostics ->> 'gap_to_next')::numeric),
       (d.diagnostics ->> 'earning_transactions')::integer,
       -- what the calculation pays: in an offer aggregated by group what
       -- the participant's own rows pay; else after requirements and limits
       -- when the offer has them (the rows the engine held), else the
       -- current tier's
       round(COALESCE(own.incentive_amount,
                      (d.diagnostics -> 'rules' ->> 'incentive_amount')::numeric,
                      cur.incentive_amount, 0), 2),
       round(nxt.incentive_amount, 2),
       p.tier_mode,
       (d.diagnostics ->> 'blended_rate')::numeric,
       (d.diagnostics ->> 'next_blended_rate')::numeric,
       COALESCE((d.diagnostics -> 'rules' ->> 'qualified')::boolean, true)
         AND NOT EXISTS (SELECT FROM jsonb_array_elements(req.reqs) AS r WHERE NOT (r ->> 'met')::boolean),
       -- every requirement not met, one whose value could not be computed
       -- (met null) with a null gap
       COALESCE((SELECT jsonb_object_agg(r ->> 'key', r -> 'gap')
                   FROM jsonb_array_elements(req.reqs) AS r
                  WHERE (r ->> 'met')::boolean IS NOT TRUE), '{}'::jsonb),
       d.diagnostics -> 'rules' -> 'limits' ->> 'applied',
       d.group_key,
       -- the volumes: growth types' current value, next tier's volume and
       -- what is still needed (the engine's); an aggregated threshold is a
       -- volume itself; a property is none
       incentives_internal.progress_volume(p.threshold_type,
         CASE WHEN g.growth THEN d.diagnostics ->> 'current_value' ELSE d.diagnostics ->> 'threshold_value' END),
       incentives_internal.progress_volume(p.threshold_type, d.diagnostics ->> 'baseline_value'),
       d.diagnostics -> 'baseline',
       CASE WHEN g.growth THEN (d.diagnostics ->> 'threshold_value')::numeric END,
       d.diagnostics ->> 'no_growth_value',
       p.pays_on,
       incentives_internal.progress_needed(p.threshold_type,
         CASE WHEN g.growth THEN d.diagnostics ->> 'next_volume' ELSE d.diagnostics ->> 'next_threshold' END),
       incentives_internal.progress_needed(p.threshold_type,
         CASE WHEN g.growth THEN d.diagnostics ->> 'volume_to_next' ELSE d.diagnostics ->> 'gap_to_next' END),
       -- the type of the aggregation key
       incentives_internal.aggregation_type(d.group_key, d.participant_key, p.document ->> 'group_type')
  FROM incentives.incentive_diagnostics(tier_progress.participant_key,
                                        COALESCE(tier_progress.properties, '{}'),
                                        NULL,
                                        COALESCE(tier_progress.transactions, 'incentives.transactions'),
                                        tier_progress.as_of,
                                        tier_progress.through_date) AS d
  -- the offers as the calculation had them (now, or as of as_of)
  LEFT JOIN incentives.programs(tier_progress.as_of) AS p ON p.offer_key = d.offer_key
 CROSS JOIN LATERAL (SELECT p.threshold_type IN ('growth_amount', 'growth_quantity') AS growth) AS g
  LEFT JOIN LATERAL (
        SELECT (t ->> 'threshold')::numeric AS threshold,
               (t ->> 'incentive_amount')::numeric AS incentive_amount
          FROM jsonb_array_elements(d.diagnostics -> 'tiers') AS t
         WHERE t ->> 'rate_key' = d.diagnostics ->> 'selected_rate_key'
         LIMIT 1) AS cur ON true
  LEFT JOIN LATERAL (
        SELECT (t ->> 'incentive_amount')::numeric AS incentive_amount
          FROM jsonb_array_elements(d.diagnostics -> 'tiers') AS t
         WHERE t ->> 'rate_key' = d.diagnostics ->> 'next_rate_key'
         LIMIT 1) AS nxt ON true
  LEFT JOIN LATERAL (
        SELECT (m ->> 'incentive_amount')::numeric AS incentive_amount
          FROM jsonb_array_elements(d.diagnostics -> 'aggregation' -> 'members') AS m
         WHERE m ->> 'participant_key' = d.participant_key
         LIMIT 1) AS own ON true
 CROSS JOIN LATERAL (
        SELECT incentives_internal.own_requirements(
                 COALESCE(d.diagnostics -> 'rules' -> 'requirements', '[]'), d.participant_key) AS reqs) AS req
 WHERE d.strategy_key = 'stepped'
 ORDER BY d.participant_key COLLATE "C", d.offer_key COLLATE "C", d.group_key COLLATE "C"
$function$;
COMMENT ON FUNCTION incentives.tier_progress(text, jsonb, regclass, timestamptz, date) IS
  'Per participant (every one with transactions of the offers'' SKUs, or the one named) and stepped offer, touched or not: the threshold value, the current tier, the next tier and the gap to it, what the calculation pays now (after requirements and limits) and what the earning transactions would pay at the next tier (before them); the tier mode and, for incremental tiers, the blended rate now and at the next threshold; whether the participant qualifies, how far each unmet requirement is from its minimum (null: its value could not be computed), and which limit applied; in an offer aggregated by group, a row per group the participant''s transactions count in, with the group''s figures (earned_now: the participant''s own rows) and its group_key; the current value, and for growth types the baseline, the growth percentage or why there is none, and what it pays on; the volume at which the next tier is met and the dollars or units still needed; as_of and through_date as for incentive_calculate';

CREATE OR REPLACE FUNCTION incentives.requirement_progress(
    participant_key text        DEFAULT NULL,
    properties      jsonb       DEFAULT '{}',
    transactions    regclass    DEFAULT 'incentives.transactions',
    as_of           timestamptz DEFAULT NULL,
    through_date    date        DEFAULT NULL)
RETURNS SETOF incentives.requirement_progress_row
LANGUAGE sql
STABLE PARALLEL RESTRICTED
ROWS 100
SET search_path = pg_catalog, pg_temp
AS $function$
SELECT d.participant_key,
       d.offer_key,
       d.strategy_key,
       r.r ->> 'key',
       r.r ->> 'type',
       r.r ->> 'property_key',
       (r.r ->> 'value')::numeric,
       (r.r ->> 'minimum')::numeric,
       (r.r ->> 'gap')::numeric,
       (r.r ->> 'met')::boolean,
       (d.diagnostics -> 'rules' ->> 'qualified')::boolean
         AND NOT EXISTS (SELECT FROM jsonb_array_elements(req.reqs) AS q WHERE NOT (q ->> 'met')::boolean),
       d.group_key,
       (r.r ->> 'current_value')::numeric,
       (r.r ->> 'baseline_value')::numeric,
       r.r ->> 'no_growth_value'
  FROM incentives.incentive_diagnostics(requirement_progress.participant_key,
                                        COALESCE(requirement_progress.properties, '{}'),
                                        NULL,
                                        COALESCE(requirement_progress.transactions, 'incentives.transactions'),
                                        requirement_progress.as_of,
                                        requirement_progress.through_date) AS d
 CROSS JOIN LATERAL (
        SELECT incentives_internal.own_requirements(d.diagnostics -> 'rules' -> 'requirements',
                                                    d.participant_key) AS reqs) AS req
 CROSS JOIN LATERAL jsonb_array_elements(req.reqs) WITH ORDINALITY AS r(r, n)
 ORDER BY d.participant_key COLLATE "C", d.offer_key COLLATE "C", d.group_key COLLATE "C", r.n
$function$;
COMMENT ON FUNCTION incentives.requirement_progress(text, jsonb, regclass, timestamptz, date) IS
  'Per participant (every one with transactions of the offers'' SKUs, or the one named), offer with requirements and requirement: its value against its minimum (NULL for a missing property or no growth value), the gap still to close, whether it is met, and whether the participant qualifies for the offer (every requirement met); in an offer aggregated by group, a row per group the participant''s transactions count in: the group''s values (a requirement of scope member: the participant''s own) and its group_key; for growth types the current value, the baseline and why there is no growth value; as_of and through_date as for incentive_calculate';

CREATE OR REPLACE FUNCTION incentives.stack_progress(
    participant_key text        DEFAULT NULL,
    transactions    regclass    DEFAULT 'incentives.transactions',
    as_of           timestamptz DEFAULT NULL,
    through_date    date        DEFAULT NULL)
RETURNS SETOF incentives.stack_progress_row
LANGUAGE sql
STABLE PARALLEL RESTRICTED
ROWS 100
SET search_path = pg_catalog, pg_temp
AS $function$
SELECT d.participant_key,
       d.offer_key,
       st.s ->> 'rate_key',
       k.set_key,
       se.coverage_unit,
       round(se.coverage, 6),
       round((st.s ->> 'overlap')::numeric, 6),
       round((st.s -> 'factors' ->> k.set_key)::numeric, 6),
       (st.s ->> 'earns')::boolean,
       round(se.coverage - CASE WHEN (st.s ->> 'earns')::boolean
                                THEN (st.s ->> 'overlap')::numeric ELSE 0 END, 6),
       round(max(se.coverage) OVER (PARTITION BY d.participant_key, d.offer_key, d.group_key, st.n) - se.coverage, 6),
       d.group_key
  FROM incentives.incentive_diagnostics(stack_progress.participant_key, '{}', NULL,
                                        COALESCE(stack_progress.transactions, 'incentives.transactions'),
                                        stack_progress.as_of, stack_progress.through_date) AS d
 CROSS JOIN LATERAL jsonb_array_elements(d.diagnostics -> 'stacks') WITH ORDINALITY AS st(s, n)
 CROSS JOIN LATERAL jsonb_array_elements_text(st.s -> 'sku_set_keys') WITH ORDINALITY AS k(set_key, m)
  LEFT JOIN LATERAL (
        SELECT x ->> 'coverage_unit' AS coverage_unit,
               (x ->> 'coverage')::numeric AS coverage
          FROM jsonb_array_elements(d.diagnostics -> 'sets') AS x
         WHERE x ->> 'key' = k.set_key
         LIMIT 1) AS se ON true
 WHERE d.strategy_key = 'stacked'
 ORDER BY d.participant_key COLLATE "C", d.offer_key COLLATE "C", d.group_key COLLATE "C", st.n, k.m
$function$;
COMMENT ON FUNCTION incentives.stack_progress(text, regclass, timestamptz, date) IS
  'Per participant (every one with transactions of the offers'' SKUs, or the one named), stacked offer, stack and SKU set: the set''s coverage, the stack''s overlap and the set''s factor, the coverage that does not pay (uncovered) and how much more of this set would let every set of the stack pay in full (shortfall); in an offer aggregated by group, the group''s coverage and its group_key; as_of and through_date as for incentive_calculate';

RESET check_function_bodies;
