# mk/lifecycle.mk: the earnings lifecycle under concurrency, crashes and
# random changes (docs/lifecycle.md).  Included by the main Makefile (after
# PGXS); `make test` runs all three through EXTRA_CHECKS.  (The rules
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
#                 a refresh held half-way is killed with kill -9, then cut
#                 off by an immediate shutdown: the earnings stay those of
#                 the last complete refresh, the next refresh marks the run
#                 interrupted and succeeds (test/scripts/crash_test.sh;
#                 about 30 s)
#   make check-changed-only
#                 random changes to transactions, properties, offers, SKUs
#                 and conversions, round after round (seeded): a
#                 changed_only refresh equals a full calculation row for row
#                 (test/scripts/changed_only_random.sh; about 30 s)
#
# Sizes and seeds can be set, e.g.
#   make check-changed-only LIFECYCLE_ENV='ROUNDS=200 SEED=7'

LIFECYCLE_ENV ?=

.PHONY: check-lifecycle-concurrency check-crash check-changed-only
check-lifecycle-concurrency: install-test
	$(if $(LIFECYCLE_ENV),env $(LIFECYCLE_ENV)) $(PGVENV) bash test/scripts/lifecycle_concurrency.sh

check-crash: install-test
	$(if $(LIFECYCLE_ENV),env $(LIFECYCLE_ENV)) $(PGVENV) bash test/scripts/crash_test.sh

check-changed-only: install-test
	$(if $(LIFECYCLE_ENV),env $(LIFECYCLE_ENV)) $(PGVENV) bash test/scripts/changed_only_random.sh

EXTRA_CHECKS += check-lifecycle-concurrency check-crash check-changed-only
