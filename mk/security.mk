# mk/security.mk: cancellation, memory and concurrency checks of
# incentive_calculate (docs/reference.md, incentive_calculate).  Included
# by the main Makefile (after PGXS); `make test` runs both through
# EXTRA_CHECKS.  (Calculation-time errors and security are pgTAP files,
# test/pgtap/31_calc_errors.sql and 30_security.sql, run by `make regress`.)
#
#   make check-cancel       install, then on a throwaway cluster: peak
#                           backend memory (VmHWM, RssAnon) of a full
#                           calculation over 1M and 5M generated
#                           transactions with the default work_mem (the 5M
#                           peak must stay within 1.5 x the 1M peak + 50 MB),
#                           and cancellation of a calculation over 3M
#                           transactions by statement_timeout and
#                           pg_cancel_backend within 1 s (SQLSTATE 57014);
#                           prints the figures (test/scripts/cancel_memory.sh;
#                           about 2 min on 2 cores)
#   make check-spill        install, then on a throwaway cluster: every
#                           fixture, its transactions copied 150 times,
#                           earns the same rows with work_mem = 64kB (its
#                           units read in pages from temporary files) as
#                           with the default: incentive_calculate, a
#                           participant's call, forecast, refresh_earnings
#                           (test/scripts/spill.sh; about 15 s)
#   make check-concurrency  install, then on a throwaway cluster: a
#                           calculation held half-way while another session
#                           commits changes returns its snapshot's rows; a
#                           cursor and a second calculation in a REPEATABLE
#                           READ transaction too; two concurrent calculations
#                           return identical rows; two sessions adding
#                           overlapping enrollment windows at once: the
#                           second is refused; the same for group
#                           memberships and the product catalog (a cycle
#                           closed by two sessions, overlapping SKU windows)
#                           (test/scripts/concurrency.sh; about 30 s)
#
# Sizes can be lowered for a quick look, e.g.
#   make check-cancel CANCEL_ENV='N_LARGE=2000000 N_CANCEL=1000000'

CANCEL_ENV      ?=
CONCURRENCY_ENV ?=

.PHONY: check-cancel check-spill check-concurrency
check-cancel: install-test
	$(if $(CANCEL_ENV),env $(CANCEL_ENV)) $(PGVENV) bash test/scripts/cancel_memory.sh

check-spill: install-test
	$(PGVENV) bash test/scripts/spill.sh

check-concurrency: install-test
	$(if $(CONCURRENCY_ENV),env $(CONCURRENCY_ENV)) $(PGVENV) bash test/scripts/concurrency.sh

EXTRA_CHECKS += check-cancel check-spill check-concurrency
