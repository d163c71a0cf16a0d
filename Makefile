# incentives: PGXS build.  `make test` and `make demo` do everything on a
# fresh Debian 12 machine with PostgreSQL 15 (see README.md).

EXTENSION   = incentives
EXTVERSION  = $(shell sed -n "s/^default_version *= *'\([^']*\)'.*/\1/p" $(EXTENSION).control)

MODULE_big  = incentives
CORE_OBJS   = $(patsubst %.c,%.o,$(wildcard src/core/*.c))
PG_OBJS     = $(patsubst %.c,%.o,$(wildcard src/pg/*.c))
OBJS        = $(CORE_OBJS) $(PG_OBJS)

DATA_built  = sql/$(EXTENSION)--$(EXTVERSION).sql
EXTRA_CLEAN = sql/$(EXTENSION)--$(EXTVERSION).sql test/unit/run_unit

REGRESS      = setup standard_percent standard_multi_entry standard_dollars_per_unit_uom \
               fixed_amount_pools stepped_amount stepped_property stacked_pair_up \
               stacked_multi_stack offers_invalid calculate_errors surface
REGRESS_OPTS = --inputdir=. --no-locale

PG_CONFIG  ?= pg_config
SHLIB_LINK += -ljson-c
PG_CFLAGS  += -Wall -Wextra -Werror -Wno-unused-parameter -Wno-missing-field-initializers
PG_CPPFLAGS += -I$(srcdir)/src

PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# objects depend on every header (PGXS tracks none)
$(OBJS): $(wildcard src/core/*.h src/pg/*.h)

# The install script is the concatenation of these parts, in order.
INSTALL_SQL = sql/$(EXTENSION).sql $(wildcard sql/parts/*.sql)

sql/$(EXTENSION)--$(EXTVERSION).sql: $(INSTALL_SQL) $(EXTENSION).control
	cat $(INSTALL_SQL) > $@

# ---- engine core unit tests: a plain C binary, no PostgreSQL -------------
UNIT_CC      ?= $(CC)
UNIT_CFLAGS  ?= -std=gnu99 -O2 -g -Wall -Wextra -Werror -Wno-format-truncation
UNIT_SRCS     = $(wildcard test/unit/*.c) $(wildcard src/core/*.c)

test/unit/run_unit: $(UNIT_SRCS) $(wildcard src/core/*.h) test/unit/unit.h
	$(UNIT_CC) $(UNIT_CFLAGS) -o $@ $(UNIT_SRCS) -ljson-c

unit: test/unit/run_unit
	./test/unit/run_unit

# Further targets (fuzzing, sanitizers, benchmark, cluster tests) live in
# their own fragments; a fragment adds its checks for `make test` to
# EXTRA_CHECKS.
EXTRA_CHECKS =
-include $(sort $(wildcard mk/*.mk))

.PHONY: unit test demo regress
# regress: pg_regress (installcheck) and pgTAP (pg_prove) against the
# installed extension on a throwaway cluster.
regress: all
	$(MAKE) install
	pg_virtualenv -t sh -c '$(MAKE) installcheck || { cat regression.diffs; exit 1; }; \
	  psql -X -q -v ON_ERROR_STOP=1 -c "CREATE EXTENSION IF NOT EXISTS pgtap" \
	    -c "CREATE EXTENSION IF NOT EXISTS incentives" && pg_prove test/pgtap/*.sql'

# test: everything -- the engine core's unit tests, then the SQL tests on a
# throwaway cluster, then the fragments' checks.
test: unit regress $(EXTRA_CHECKS)

# demo: the main job on a throwaway cluster with the sample data.
demo: all
	$(MAKE) install
	pg_virtualenv -t psql -X -v ON_ERROR_STOP=1 -f demo/demo.sql
