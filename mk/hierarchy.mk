# mk/hierarchy.mk: random cases of offers aggregated over participant
# hierarchies against a plain SQL reference (docs/reference.md,
# Participant groups; Participant hierarchies).  Included by the main
# Makefile (after PGXS); `make test` runs it through EXTRA_CHECKS.
#
#   make check-hierarchy-random   install, then on a throwaway cluster
#                                 HIERARCHY_SEEDS (40) random cases of
#                                 test/sql/hierarchy_random.sql, every
#                                 earning row compared exactly, and calls
#                                 for a participant or some offers with
#                                 the call for everyone
#                                 (test/scripts/hierarchy_random.sh;
#                                 about 1 minute)

HIERARCHY_SEEDS ?= 40

.PHONY: check-hierarchy-random
check-hierarchy-random: install-test
	HIERARCHY_SEEDS=$(HIERARCHY_SEEDS) $(PGVENV) bash test/scripts/hierarchy_random.sh

EXTRA_CHECKS += check-hierarchy-random
