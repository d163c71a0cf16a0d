# mk/cron.mk: incentives.refresh_earnings scheduled by pg_cron
# (docs/analyst-guide.md, Scheduling with pg_cron).
# Included by the main Makefile (after PGXS); `make test` runs check-cron
# through EXTRA_CHECKS.
#
#   make check-cron   install, then on a throwaway cluster with pg_cron
#                     preloaded (jobs in background workers, so no password
#                     is needed): schedule CALL incentives.refresh_earnings()
#                     as an @reboot job, restart, and check
#                     cron.job_run_details, incentives.earnings and
#                     incentives.calculation_runs; a second round checks
#                     that a failing scheduled refresh keeps the earnings and
#                     logs the failure, a third runs the monthly settle of
#                     docs/lifecycle.md, a fourth its monthly accrual and
#                     a fifth the live changed_only job of
#                     docs/analyst-guide.md while transactions are
#                     inserted (test/scripts/cron_test.sh; about 20 s with
#                     pg_cron 1.5 and later, up to 2 minutes with 1.4,
#                     whose job runs on the minute; needs Debian's
#                     postgresql-NN-cron)

.PHONY: check-cron
check-cron: install-test
	$(PGVENV) -o shared_preload_libraries=pg_cron \
	  -o cron.database_name=postgres -o cron.use_background_workers=on \
	  bash test/scripts/cron_test.sh

EXTRA_CHECKS += check-cron
