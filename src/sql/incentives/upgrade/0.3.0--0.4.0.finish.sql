-- incentives 0.3.0 -> 0.4.0, after the code parts: the update refuses
-- nothing it finds stored.  0.4.0 refuses on a write what 0.3.0 stored
-- without a word (docs/reference.md: offer keys, enrollments, unknown
-- fields, percent rates); what a database already holds stays as it is,
-- and each existing violation is reported here, one NOTICE each naming the
-- offer (or enrollment), the path and the code it has in
-- incentives.offer_warnings (and each stored unit conversion factor the
-- engine cannot calculate with):
--   unknown_field             a field the contract does not define
--   offer_key_format          an empty key, surrounding white space, a control character
--   offer_key_case            a key equal to another offer's but for letter case
--   enrollment_without_offer  an enrollment naming no stored offer
--   implausible_rate          a percent rate or tier value above 100
-- Unknown fields come from incentives.offer_warnings when this version has
-- it, else from incentives_internal.offer_findings(document) (looked up
-- by name: whichever the code parts above created).  On a fresh install
-- the tables are empty and nothing is reported.

-- PostgreSQL runs an extension script with client_min_messages raised to
-- warning (so that the script's own notices do not spam); the report
-- lowers it again for the length of its function, so the NOTICEs reach
-- the client that runs ALTER EXTENSION ... UPDATE.
CREATE FUNCTION pg_temp.update_report_stored()
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
SET client_min_messages = notice
AS $function$
DECLARE
    r     record;
    n     bigint := 0;
    v_sql text;
BEGIN
    IF to_regclass('incentives.offer_warnings') IS NOT NULL THEN
        v_sql := $q$SELECT w.offer_key, w.path, w.code, w.message
                      FROM incentives.offer_warnings AS w WHERE w.code = 'unknown_field'$q$;
    ELSIF to_regprocedure('incentives_internal.offer_findings(jsonb)') IS NOT NULL THEN
        v_sql := $q$SELECT o.offer_key, f.path, f.code, f.message
                      FROM incentives.offers AS o
                     CROSS JOIN LATERAL incentives_internal.offer_findings(o.document) AS f
                     WHERE f.code = 'unknown_field'$q$;
    ELSE
        v_sql := $q$SELECT NULL::text, NULL::text, NULL::text, NULL::text WHERE false$q$;
    END IF;

    FOR r IN EXECUTE format($q$
        WITH RECURSIVE node (offer_key, path, v) AS (
            SELECT o.offer_key, ''::text, o.document FROM incentives.offers AS o
            UNION ALL
            SELECT n.offer_key,
                   CASE WHEN jsonb_typeof(n.v) = 'object'
                        THEN n.path || CASE WHEN n.path = '' THEN '' ELSE '.' END || c.key
                        ELSE n.path || '[' || (c.i - 1) || ']' END,
                   c.v
              FROM node AS n
             CROSS JOIN LATERAL (
                SELECT e.key, 0::bigint AS i, e.value AS v
                  FROM jsonb_each(CASE WHEN jsonb_typeof(n.v) = 'object' THEN n.v END) AS e
                UNION ALL
                SELECT NULL, e.i, e.v
                  FROM jsonb_array_elements(CASE WHEN jsonb_typeof(n.v) = 'array' THEN n.v END)
                       WITH ORDINALITY AS e(v, i)) AS c
             WHERE jsonb_typeof(n.v) IN ('object', 'array')),
        found (offer_key, path, code, message) AS (
            %s
            UNION ALL
            SELECT o.offer_key, 'offer_key', 'offer_key_format',
                   incentives_internal.offer_key_problem(o.offer_key)
              FROM incentives.offers AS o
             WHERE incentives_internal.offer_key_problem(o.offer_key) IS NOT NULL
            UNION ALL
            -- of keys equal but for case, each but the first stored (its
            -- first version's time, then byte order) names the first
            SELECT k.offer_key, 'offer_key', 'offer_key_case',
                   format('offer key "%%s" differs only in letter case from the offer "%%s"',
                          k.offer_key, k.first_key)
              FROM (SELECT o.offer_key,
                           first_value(o.offer_key) OVER w AS first_key,
                           row_number() OVER w AS n
                      FROM incentives.offers AS o
                      LEFT JOIN LATERAL (SELECT min(v.valid_from) AS since
                                           FROM incentives.offer_versions AS v
                                          WHERE v.offer_key = o.offer_key) AS s ON true
                    WINDOW w AS (PARTITION BY lower(o.offer_key)
                                 ORDER BY s.since NULLS LAST, o.offer_key COLLATE "C")) AS k
             WHERE k.n > 1
            UNION ALL
            SELECT e.offer_key, format('enrollments(participant "%%s", from %%s)', e.participant_key, e.start_date),
                   'enrollment_without_offer',
                   format('enrollment of participant "%%s" names no offer "%%s"', e.participant_key, e.offer_key)
              FROM incentives.enrollments AS e
             WHERE NOT EXISTS (SELECT FROM incentives.offers AS o WHERE o.offer_key = e.offer_key)
            UNION ALL
            SELECT n.offer_key, n.path || '.' || f.field, 'implausible_rate',
                   format('a percent %%s of %%s is above 100', f.field, n.v -> f.field)
              FROM node AS n
             CROSS JOIN LATERAL (VALUES ('rate'), ('value')) AS f(field)
             WHERE jsonb_typeof(n.v) = 'object' AND n.v ->> 'measure' = 'percent'
               AND jsonb_typeof(n.v -> f.field) = 'number' AND (n.v ->> f.field)::numeric > 100)
        SELECT * FROM found ORDER BY offer_key COLLATE "C", path COLLATE "C", code$q$, v_sql)
    LOOP
        RAISE NOTICE 'offer "%", %: % (%): stored before 0.4.0, kept as it is', r.offer_key, r.path, r.message, r.code;
        n := n + 1;
    END LOOP;
    IF n > 0 THEN
        RAISE NOTICE 'incentives 0.4.0: % of the stored offers and enrollments would be refused by a write now; they are kept as they are', n
              USING HINT = 'SELECT * FROM incentives.offer_warnings lists them; a write of the offer or enrollment that keeps the key is accepted.';
    END IF;

    -- a unit conversion factor the engine cannot calculate with (refused
    -- on a write, incentives_internal.uom_conversions_check): kept, and
    -- reported, since every calculation fails while it is there
    FOR r IN SELECT c.from_uom_key, c.to_uom_key, c.factor, incentives_internal.number_problem(c.factor) AS problem
               FROM incentives.uom_conversions AS c
              WHERE incentives_internal.number_problem(c.factor) IS NOT NULL
              ORDER BY c.from_uom_key COLLATE "C", c.to_uom_key COLLATE "C"
    LOOP
        RAISE NOTICE 'unit conversion "%" to "%": factor % %: stored before 0.4.0, kept as it is; every calculation fails until it is rounded',
                     r.from_uom_key, r.to_uom_key, r.factor, r.problem;
    END LOOP;
END
$function$;
SELECT pg_temp.update_report_stored();
DROP FUNCTION pg_temp.update_report_stored();
