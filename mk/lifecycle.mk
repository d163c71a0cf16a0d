# mk/lifecycle.mk: the earnings lifecycle under concurrency, crashes and
# random changes (docs/lifecycle.md).  Included by the main Makefile (after
# PGXS); `make test` runs all four through EXTRA_CHECKS.  (The rules
# themselves are sql/lifecycle.sql and test/pgtap/40_lifecycle.sql, run by
# `make regress`; the monthly settle and accrual under pg_cron are in
# check-cron.)
#
#   make check-lifecycle-concurrency
#                 readers during full and changed-only refreshes see the
#                 old earnings or the new ones, never a mix; two settles at
#                 once never count the same earnings twice (a deterministic
#                 wait, then racing rounds), nor two accrues the same
#                 accrual (test/scripts/lifecycle_concurrency.sh; about
#                 60 s)
#   make check-crash
#                 a refresh held half-way is killed with kill -9, cut off
#                 by an immediate shutdown, and loses a parallel worker to
#                 kill -9: the earnings stay those of the last complete
#                 refresh, the next refresh marks the run interrupted and
#                 succeeds (test/scripts/crash_test.sh; about 40 s)
#   make check-refresh-jobs
#                 refresh_earnings(jobs => N) as one job: the same earnings,
#                 the same skipped participants and errors, a cancel of the
#                 backend or of a worker fails the run and keeps the
#                 earnings; with participant groups too
#                 (test/scripts/refresh_jobs.sh; about 2 min)
#   make check-changed-only
#                 random changes to transactions, properties, offers, SKUs,
#                 conversions, memberships, hierarchies (chains in
#                 regions, group types), the product catalog, exchange
#                 rates, growers, currencies and returns' originals,
#                 round after round (seeded): a changed_only refresh
#                 equals a full calculation row for row
#                 (test/scripts/changed_only_random.sh; about 3 min)
#
# Sizes and seeds can be set, e.g.
#   make check-changed-only LIFECYCLE_ENV='ROUNDS=200 SEED=7'

LIFECYCLE_ENV ?=

.PHONY: check-lifecycle-concurrency check-crash check-changed-only check-refresh-jobs
check-lifecycle-concurrency: install-test
	$(if $(LIFECYCLE_ENV),env $(LIFECYCLE_ENV)) $(PGVENV) bash test/scripts/lifecycle_concurrency.sh

check-crash: install-test
	$(if $(LIFECYCLE_ENV),env $(LIFECYCLE_ENV)) $(PGVENV) bash test/scripts/crash_test.sh

check-changed-only: install-test
	$(if $(LIFECYCLE_ENV),env $(LIFECYCLE_ENV)) $(PGVENV) bash test/scripts/changed_only_random.sh

check-refresh-jobs: install-test
	$(if $(LIFECYCLE_ENV),env $(LIFECYCLE_ENV)) $(PGVENV) bash test/scripts/refresh_jobs.sh

EXTRA_CHECKS += check-lifecycle-concurrency check-crash check-changed-only check-refresh-jobs
