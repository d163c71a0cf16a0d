-- groups_pool_limits: participant groups with a fixed pool, a limit and a
-- member requirement (docs/reference.md, Participant groups).  A group's
-- pool is shared over all its members' transactions in transaction_id
-- order; its maximum is the group's, re-rounded over all its rows; a
-- member that fails a requirement of scope member loses its rows while its
-- units still count and its share goes to nobody.
-- Fixture: test/fixtures/groups_pool_limits/ (see its README.md).
\set fixture groups_pool_limits
\i test/sql/load_fixture.psql

\i test/sql/fixture_checks.psql

-- A group's pool and its cap add up exactly, over the whole group.
SELECT group_key, offer_key, sum(incentive_amount) AS incentive_amount, count(*) AS rows
  FROM incentives.incentive_calculate()
 GROUP BY group_key, offer_key
 ORDER BY group_key, offer_key;

-- The member requirement, member by member, in the group's diagnostics.
SELECT d.participant_key, d.group_key, m ->> 'participant_key' AS member, m ->> 'value' AS value,
       m ->> 'met' AS met, m ->> 'gap' AS gap
  FROM incentives.incentive_diagnostics('retailer_003',
                                        offer_keys => ARRAY['mfr.2026.group_target_pool_member_gate']) AS d,
       jsonb_array_elements(d.diagnostics -> 'rules' -> 'requirements' -> 0 -> 'members') AS m
 ORDER BY member;

-- The group's cap in a member's diagnostics.
SELECT participant_key, group_key, diagnostics -> 'rules' -> 'limits' AS limits
  FROM incentives.incentive_diagnostics('retailer_002', offer_keys => ARRAY['mfr.2026.group_capped_percent']);
