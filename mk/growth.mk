# mk/growth.mk: random cases of growth over a baseline and of the forecast
# against a set-based SQL reference (docs/reference.md, Growth over a
# baseline; Forecast).  Included by the main Makefile (after PGXS); `make
# test` runs it through EXTRA_CHECKS.
#
#   make check-growth-random   install, then on a throwaway cluster
#                              GROWTH_SEEDS (50) random cases of
#                              test/sql/growth_random.sql, every earning
#                              row, growth percentage and forecast compared
#                              exactly (test/scripts/growth_random.sh;
#                              about 30 s)

GROWTH_SEEDS ?= 50

.PHONY: check-growth-random
check-growth-random: install-test
	GROWTH_SEEDS=$(GROWTH_SEEDS) $(PGVENV) bash test/scripts/growth_random.sh

EXTRA_CHECKS += check-growth-random
