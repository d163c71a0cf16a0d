# mk/returns.mk: random cases of returns against their sale against a
# plain SQL reference (docs/reference.md, Returns against their sale).
# Included by the main Makefile (after PGXS); `make test` runs it through
# EXTRA_CHECKS.
#
#   make check-returns-random     install, then on a throwaway cluster
#                                 RETURNS_SEEDS (40) random cases of
#                                 test/sql/returns_random.sql, every
#                                 earning row compared exactly, for
#                                 everyone and through a date, and each
#                                 participant's call with the call for
#                                 everyone (test/scripts/returns_random.sh)

RETURNS_SEEDS ?= 40

.PHONY: check-returns-random
check-returns-random: install-test
	RETURNS_SEEDS=$(RETURNS_SEEDS) $(PGVENV) bash test/scripts/returns_random.sh

EXTRA_CHECKS += check-returns-random
