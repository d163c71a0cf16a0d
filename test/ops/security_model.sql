-- The privilege and row-level security model of docs/security.md,
-- statement for statement (steps 1 to 5); test/pgtap/35_participant_rls.sql
-- applies it inside a transaction it rolls back.  Keep the two in step.

-- Step 1: the two roles (once per cluster)
CREATE ROLE incentives_reader NOLOGIN;
CREATE ROLE incentives_admin NOLOGIN;
GRANT incentives_reader TO incentives_admin;

-- Step 2: their privileges (after CREATE EXTENSION; an update keeps them
-- and gives what a version adds those of what it extends)
GRANT USAGE ON SCHEMA incentives, incentives_internal TO incentives_reader;
GRANT SELECT ON ALL TABLES IN SCHEMA incentives TO incentives_reader;
GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA incentives TO incentives_reader;
GRANT INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA incentives TO incentives_admin;
GRANT USAGE ON ALL SEQUENCES IN SCHEMA incentives TO incentives_admin;
GRANT EXECUTE ON ALL PROCEDURES IN SCHEMA incentives TO incentives_admin;
GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA incentives_internal TO incentives_admin;

-- Step 3: the DBA's own mapping of roles to participants (once)
CREATE SCHEMA incentives_acl;
CREATE TABLE incentives_acl.participant_access (
    role_name       name NOT NULL,
    participant_key text NOT NULL,
    PRIMARY KEY (role_name, participant_key)
);
GRANT USAGE ON SCHEMA incentives_acl TO incentives_reader;
GRANT SELECT ON incentives_acl.participant_access TO incentives_reader;

-- Step 4: which participants each role sees, set once on the transactions,
-- and who sees the runs of every participant and every removal of a
-- settled offer (after CREATE EXTENSION and after every restore of a dump)
ALTER TABLE incentives.transactions ENABLE ROW LEVEL SECURITY;
CREATE POLICY reader_participants ON incentives.transactions
    FOR SELECT TO incentives_reader
    USING (participant_key IN (SELECT a.participant_key
                                 FROM incentives_acl.participant_access AS a
                                WHERE a.role_name = current_user));
CREATE POLICY admin_all_participants ON incentives.transactions
    TO incentives_admin
    USING (true) WITH CHECK (true);
CREATE POLICY admin_all_runs ON incentives.calculation_runs
    TO incentives_admin
    USING (true) WITH CHECK (true);
CREATE POLICY admin_all_removals ON incentives.offer_removals
    TO incentives_admin
    USING (true) WITH CHECK (true);

-- Step 5: people and services get one of the two roles, readers their
-- participants
CREATE ROLE analyst_alice LOGIN IN ROLE incentives_reader;
CREATE ROLE analyst_bob LOGIN IN ROLE incentives_reader;
CREATE ROLE manager_carol LOGIN IN ROLE incentives_admin;
INSERT INTO incentives_acl.participant_access (role_name, participant_key) VALUES
    ('analyst_alice', 'retailer_001'),
    ('analyst_alice', 'retailer_002'),
    ('analyst_bob', 'retailer_003');
