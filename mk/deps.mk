# mk/deps.mk: the dependency check of the C sources.  Included by the main
# Makefile (after PGXS); `make test` runs it through EXTRA_CHECKS.
#
#   make check-deps   build the objects, then print who depends on whom
#                     (A depends on B when A.o has an undefined symbol that
#                     B.o defines) and the layers they form, and fail on any
#                     cycle, A <-> B included (test/scripts/deps.sh).  The
#                     intended direction: glue (src/pg) -> engine ->
#                     strategies -> shared calculation helpers -> offer
#                     model, numbers, utilities.

.PHONY: check-deps
check-deps: $(OBJS)
	test/scripts/deps.sh src/core src/pg

EXTRA_CHECKS += check-deps
