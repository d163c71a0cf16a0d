-- incentives 0.1.0 -> 0.2.0, after the code parts (the Makefile): the
-- 0.1.0 earnings table, when it held no earnings (always so in a fresh
-- install), goes now that the reporting views read the new partitioned
-- incentives.earnings.  (Holding earnings, it is the table's partition
-- until the next full refresh by the owner replaces it.)
DO $finish$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_catalog.pg_inherits AS i
                    WHERE i.inhrelid OPERATOR(pg_catalog.=) 'incentives_internal.earnings_run_0'::pg_catalog.regclass) THEN
        DROP TABLE incentives_internal.earnings_run_0;
    END IF;
END
$finish$;
