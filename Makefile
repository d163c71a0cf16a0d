# incentives: PGXS build of the extension and of its PL/Proxy coordinator
# companion, incentives_cluster.
#
#   make demo     the reference document's worked examples on a throwaway
#                 cluster (installs the Debian packages it misses first)
#   make test     every test: engine unit tests, pg_regress, pgTAP, docs
#                 examples, fuzzing, sanitizers, cluster, cron, ... (idem)
#   make install  install into the server (as root, or with sudo)
#
# Layout and release procedure: docs/architecture.md.

EXTENSION   = incentives incentives_cluster
MODULE_big  = incentives
# the engine core, one folder per layer (docs/architecture.md, Layers)
CORE_SRCS   = $(sort $(wildcard src/core/*/*.c))
CORE_HDRS   = $(sort $(wildcard src/core/*/*.h))
GLUE_SRCS   = $(sort $(wildcard src/pg/*/*.c)) src/pg/module.c
OBJS        = $(patsubst %.c,%.o,$(CORE_SRCS) $(GLUE_SRCS))

# The PostgreSQL to build for: PG_CONFIG when given; else the major of
# mk/pg_major.sh (PG_MAJOR, else the machine's: docs/architecture.md,
# Supported versions); else the pg_config on the PATH.
ifndef PG_CONFIG
PG_MAJOR   := $(or $(PG_MAJOR),$(shell mk/pg_major.sh))
PG_CONFIG  := $(if $(wildcard /usr/lib/postgresql/$(PG_MAJOR)/bin/pg_config),/usr/lib/postgresql/$(PG_MAJOR)/bin/pg_config,pg_config)
else
PG_MAJOR   := $(or $(PG_MAJOR),$(shell $(PG_CONFIG) --version 2>/dev/null | sed -n 's/^PostgreSQL \([0-9][0-9]*\).*/\1/p'))
endif
export PG_MAJOR
SHLIB_LINK += -ljson-c
# -Werror only in CI (CI=true), where the compiler is known: a newer
# compiler's new warnings must not break a user's build.
WERROR     ?= $(if $(filter true,$(CI)),-Werror)
PG_CFLAGS  += -Wall -Wextra $(WERROR) -Wno-unused-parameter -Wno-missing-field-initializers
PG_CPPFLAGS += -I$(srcdir)/src

# ---- install scripts --------------------------------------------------------
# As PostgreSQL's contrib modules do, a version has no install script of its
# own once a released base exists: CREATE EXTENSION runs the released base
# script (src/sql/released, text, byte for byte as released; its README
# lists the checksums), then the update scripts up to default_version.  So
# a fresh install and an update are the same path, and every table is
# defined once.  The update script to the current version V from A is built
# from src/sql/<extension>/: src/sql/update_begin.sql (helpers that set the
# user's views aside where an object cannot be replaced in place),
# upgrade/A--V.sql (the version's changes to schemas, tables and types),
# code/*.sql in the sorted order of their number prefixes (every function,
# procedure and view, CREATE OR REPLACE; triggers and policies created
# again; comments and grants), upgrade/A--V.finish.sql if there is one
# (what must wait for the new code), then src/sql/update_end.sql (the
# views set aside created again).  docs/architecture.md, Install and
# upgrade scripts.
version     = $(shell sed -n "s/^default_version *= *'\([^']*\)'.*/\1/p" $(1).control)
code_parts  = $(sort $(wildcard src/sql/$(1)/code/*.sql))
upgrades    = $(patsubst src/sql/$(1)/upgrade/%.sql,build/$(1)--%.sql,$(sort $(filter-out %.finish.sql,$(wildcard src/sql/$(1)/upgrade/*--*.sql))))

DATA        = $(sort $(wildcard src/sql/released/*.sql))
DATA_built  = $(foreach e,$(EXTENSION),$(call upgrades,$(e)))
EXTRA_CLEAN = build test/unit/run_unit

# pg_regress: sql/NAME.sql against expected/NAME.out, contrib style; setup
# (CREATE EXTENSION) first, then the others in name order.
REGRESS      = setup $(filter-out setup,$(patsubst sql/%.sql,%,$(sort $(wildcard sql/*.sql))))
REGRESS_OPTS = --inputdir=. --no-locale

PGXS := $(shell $(PG_CONFIG) --pgxs 2>/dev/null)
ifneq ($(wildcard $(PGXS)),)
include $(PGXS)
else
# No PostgreSQL build files yet (a fresh machine): demo and test install
# the packages first and then run make again.
.DEFAULT_GOAL := help
help:
	@echo "PostgreSQL's server development files are missing: run 'make demo' or 'make test' (they install the Debian packages), or install postgresql-server-dev-$(or $(PG_MAJOR),N)."
endif

# objects depend on every header (PGXS tracks none)
$(OBJS): $(CORE_HDRS) $(wildcard src/pg/*/*.h)

define script_rules
build/$(1)--%--$(call version,$(1)).sql: src/sql/$(1)/upgrade/%--$(call version,$(1)).sql src/sql/update_begin.sql $(call code_parts,$(1)) $(wildcard src/sql/$(1)/upgrade/*.finish.sql) src/sql/update_end.sql $(1).control mk/sql_script.sh
	mk/sql_script.sh upgrade $(1) $(call version,$(1)) $$@ src/sql/update_begin.sql $$< $(call code_parts,$(1)) $$(wildcard $$(<:.sql=.finish.sql)) src/sql/update_end.sql
endef
$(foreach e,$(EXTENSION),$(eval $(call script_rules,$(e))))

# ---- engine core unit tests: a plain C binary, no PostgreSQL -------------
UNIT_CC      ?= $(CC)
UNIT_CFLAGS  ?= -std=gnu99 -O2 -g -Wall -Wextra $(WERROR) -Wno-format-truncation
UNIT_SRCS     = $(sort $(wildcard test/unit/*.c)) $(CORE_SRCS)

test/unit/run_unit: $(UNIT_SRCS) $(CORE_HDRS) test/unit/unit.h
	$(UNIT_CC) $(UNIT_CFLAGS) -o $@ $(UNIT_SRCS) -ljson-c

.PHONY: unit
unit: test/unit/run_unit
	./test/unit/run_unit

# The test, demo, bench and check targets live in mk/*.mk; each fragment
# adds its checks for `make test` to EXTRA_CHECKS.
EXTRA_CHECKS =
include $(sort $(wildcard mk/*.mk))

run-test: unit regress $(EXTRA_CHECKS)
