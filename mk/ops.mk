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
#   make check-security-doc  docs/security.md states the model the pgTAP
#                     tests apply (no cluster)

DUMP_ENV    ?=
UPGRADE_ENV ?=

.PHONY: check-dump check-upgrade
check-dump: install-test
	$(if $(DUMP_ENV),env $(DUMP_ENV)) $(PGVENV) bash test/ops/dump_restore.sh

check-upgrade: install-test
	$(if $(UPGRADE_ENV),env $(UPGRADE_ENV)) $(PGVENV) bash test/ops/upgrade.sh

EXTRA_CHECKS += check-dump check-upgrade

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
