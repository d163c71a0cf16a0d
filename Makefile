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
               stacked_multi_stack offers_invalid calculate_errors
REGRESS_OPTS = --inputdir=.

PG_CONFIG  ?= pg_config
SHLIB_LINK += -ljson-c
PG_CFLAGS  += -Wall -Wextra -Werror -Wno-unused-parameter -Wno-missing-field-initializers
PG_CPPFLAGS += -I$(srcdir)/src

PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# objects depend on every header (PGXS tracks none)
$(OBJS): $(wildcard src/core/*.h src/pg/*.h)

sql/$(EXTENSION)--$(EXTVERSION).sql: sql/$(EXTENSION).sql $(EXTENSION).control
	cp $< $@

# ---- engine core unit tests: a plain C binary, no PostgreSQL -------------
UNIT_CC      ?= $(CC)
UNIT_CFLAGS  ?= -std=gnu99 -O2 -g -Wall -Wextra -Werror -Wno-format-truncation
UNIT_SRCS     = $(wildcard test/unit/*.c) $(wildcard src/core/*.c)

test/unit/run_unit: $(UNIT_SRCS) $(wildcard src/core/*.h) test/unit/unit.h
	$(UNIT_CC) $(UNIT_CFLAGS) -o $@ $(UNIT_SRCS) -ljson-c

unit: test/unit/run_unit
	./test/unit/run_unit

.PHONY: unit test demo
# test: unit tests, then build, install and run pg_regress + pgTAP on a
# throwaway cluster (pg_virtualenv).
test: unit all
	$(MAKE) install
	pg_virtualenv -t sh -c '$(MAKE) installcheck || { cat regression.diffs; exit 1; }; \
	  psql -X -q -c "CREATE EXTENSION IF NOT EXISTS pgtap" && pg_prove -v test/pgtap/*.sql'

demo: all
	$(MAKE) install
	pg_virtualenv -t psql -X -v ON_ERROR_STOP=1 -f demo/demo.sql
