# mk/ops.mk: the checks a DBA relies on (issue "Operations a DBA can
# trust"; docs/backup-and-upgrade.md, docs/security.md).  Included by the
# main Makefile (after PGXS); `make test` runs the check-* goals through
# EXTRA_CHECKS, each on a throwaway cluster.
#
#   make check-dump   pg_dump/pg_restore (custom, parallel and plain
#                     formats) keeps every row of every table of both
#                     extensions, the run-id sequence and the calculated
#                     earnings (test/ops/dump_restore.sh; about 20 s)

DUMP_ENV ?=

.PHONY: check-dump
check-dump: install-test
	$(if $(DUMP_ENV),env $(DUMP_ENV)) $(PGVENV) bash test/ops/dump_restore.sh

EXTRA_CHECKS += check-dump
