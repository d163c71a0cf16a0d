# mk/ops.mk: the checks a DBA relies on (issue "Operations a DBA can
# trust"; docs/backup-and-upgrade.md, docs/security.md).  Included by the
# main Makefile (after PGXS); `make test` runs the check-* goals through
# EXTRA_CHECKS, each on a throwaway cluster.
#
#   make check-dump   pg_dump/pg_restore (custom, parallel and plain
#                     formats) keeps every row of every table of both
#                     extensions, the run-id sequence and the calculated
#                     earnings (test/ops/dump_restore.sh; about 20 s)
#   make check-upgrade   ALTER EXTENSION ... UPDATE from every released
#                     version (src/sql/released) of incentives (with data)
#                     and incentives_cluster gives the catalog of a fresh
#                     install and keeps every row (test/ops/upgrade.sh;
#                     about 15 s)
#   make check-upgrade-users  the same from every released version with
#                     what users build on the extension in place (views
#                     over its views and functions, functions over its
#                     types, a trigger and policies on its tables,
#                     privileges): the update succeeds, every object
#                     answers as before and keeps its privileges, and the
#                     catalog equals a fresh install's
#                     (test/upgrade/users.sh; about 30 s)
#   make check-json-fuzz  incentives.calculate(jsonb) under JSON_FUZZ_REQUESTS
#                     (3000) random and broken requests, seeded by
#                     JSON_FUZZ_SEED (1): accepted ones equal
#                     incentive_calculate, refused ones say 22023 and the
#                     field path (test/ops/json_fuzz.sql; about 25 s).  A
#                     longer run: make check-json-fuzz JSON_FUZZ_REQUESTS=50000
#   make check-load   a mixed pgbench load for LOAD_SECONDS (5) with
#                     LOAD_CLIENTS (4) clients on LOAD_N (20000) generated
#                     transactions: incentive_calculate, calculate(jsonb),
#                     tier_progress and inserts, with refresh_earnings
#                     running over and over beside them; no error, no
#                     deadlock, and the earnings equal a full calculation
#                     afterwards (test/ops/load.sh; about 15 s)
#   make bench-load   the same on 1M transactions for 60 s (not part of
#                     `make test`); prints tps and p50/p99 per script
#   make check-security-doc  docs/security.md states the model the pgTAP
#                     tests apply (no cluster)
#   make check-released  the released scripts (src/sql/released) are byte
#                     for byte those that shipped: md5 of each against its
#                     README (test/upgrade/released.sh; no cluster)

DUMP_ENV    ?=
UPGRADE_ENV ?=
LOAD_N       ?= 20000
LOAD_SECONDS ?= 5
LOAD_CLIENTS ?= 4
BENCH_LOAD_N       ?= 1000000
BENCH_LOAD_SECONDS ?= 60
BENCH_LOAD_CLIENTS ?= 4
JSON_FUZZ_SEED     ?= 1
JSON_FUZZ_REQUESTS ?= 3000

.PHONY: check-dump check-upgrade check-upgrade-users check-json-fuzz check-load bench-load
check-dump: install-test
	$(if $(DUMP_ENV),env $(DUMP_ENV)) $(PGVENV) bash test/ops/dump_restore.sh

check-upgrade: install-test
	$(if $(UPGRADE_ENV),env $(UPGRADE_ENV)) $(PGVENV) bash test/ops/upgrade.sh

check-upgrade-users: install-test
	$(if $(UPGRADE_ENV),env $(UPGRADE_ENV)) $(PGVENV) bash test/upgrade/users.sh

check-json-fuzz: install-test
	JSON_FUZZ_SEED=$(JSON_FUZZ_SEED) JSON_FUZZ_REQUESTS=$(JSON_FUZZ_REQUESTS) \
	  $(PGVENV) bash test/ops/json_fuzz.sh

check-load: install-test
	LOAD_N=$(LOAD_N) LOAD_SECONDS=$(LOAD_SECONDS) LOAD_CLIENTS=$(LOAD_CLIENTS) \
	  $(PGVENV) bash test/ops/load.sh

bench-load: install-test
	LOAD_N=$(BENCH_LOAD_N) LOAD_SECONDS=$(BENCH_LOAD_SECONDS) LOAD_CLIENTS=$(BENCH_LOAD_CLIENTS) \
	  $(PGVENV) bash test/ops/load.sh

EXTRA_CHECKS += check-dump check-upgrade check-upgrade-users check-json-fuzz check-load

# check-security-doc: the statements of docs/security.md's model (its
# ```sql blocks from "## The model" up to "To check") are those of
# test/ops/security_model.sql, which the pgTAP tests apply.
.PHONY: check-security-doc
check-security-doc:
	@awk '/^## The model/ { on = 1 } /^To check/ { on = 0 } \
	      on && /^```sql/ { inblock = 1; next } /^```/ { inblock = 0 } on && inblock' \
	  docs/security.md > $(TEST_DESTDIR).model-doc
	@grep -v '^--' test/ops/security_model.sql | grep -v '^$$' > $(TEST_DESTDIR).model-test
	@grep -v '^$$' $(TEST_DESTDIR).model-doc | diff -u $(TEST_DESTDIR).model-test - \
	  || { echo "docs/security.md and test/ops/security_model.sql differ (above)" >&2; exit 1; }
	@rm -f $(TEST_DESTDIR).model-doc $(TEST_DESTDIR).model-test
	@echo "check-security-doc: docs/security.md states the model the tests apply ($$(grep -c ';$$' test/ops/security_model.sql) statements)"

EXTRA_CHECKS += check-security-doc

# check-released: the released scripts never change (their md5s are in
# src/sql/released/README.md).
.PHONY: check-released
check-released:
	@sh test/upgrade/released.sh

EXTRA_CHECKS += check-released
