# mk/versions.mk: the PostgreSQL majors beyond this machine's, each in a
# minimal Debian system of Debian's own packages (docs/architecture.md,
# Tests).  Included by the main Makefile (after PGXS); .ci/run runs
# test-versions after `make test`.
#
#   make test-versions   as root: test/versions/run.sh, Debian 13
#                        (PostgreSQL 17) and Debian testing (18) made with
#                        debootstrap under /var/tmp/chroots when missing,
#                        each running `make test-server` on a copy of the
#                        work tree, and restoring this machine's dump
#                        (VERSIONS_SYSTEMS="trixie forky" chooses)
#   make test-server     the checks of make test that depend on the server:
#                        SERVER_CHECKS below, for the machine's PostgreSQL
#                        (what each of those systems runs; installs the
#                        Debian packages it misses)
#   make dump-across ACROSS_DIR=DIR
#                        the database a DBA moves between majors, dumped
#                        by this machine's PostgreSQL into DIR
#                        (test/ops/dump_across.sh dump)
#   make check-across ACROSS_DIR=DIR
#                        that dump restored here: the same rows, the same
#                        answers of a user's objects, the same earnings
#                        (test/ops/dump_across.sh restore)

VERSIONS_SYSTEMS ?= trixie forky
ACROSS_DIR       ?=
SERVER_CHECKS     = unit regress check-docs check-dump check-upgrade check-upgrade-users \
                    check-refresh-jobs check-changed-only check-crash check-cancel \
                    check-cron check-cluster check-replicas check-pgxn check-package \
                    $(if $(ACROSS_DIR),check-across)

.PHONY: test-versions test-server run-test-server dump-across check-across
test-versions:
	@mk/packages.sh server
	test/versions/run.sh $(VERSIONS_SYSTEMS)

test-server:
	@mk/packages.sh server
	@$(MAKE) --no-print-directory run-test-server

run-test-server: $(SERVER_CHECKS)
	@echo "make test-server: all checks passed on PostgreSQL $(PG_MAJOR)"

dump-across: install-test
	@test -n "$(ACROSS_DIR)" || { echo "make dump-across: set ACROSS_DIR" >&2; exit 2; }
	$(PGVENV) bash test/ops/dump_across.sh dump $(ACROSS_DIR)

check-across: install-test
	@test -n "$(ACROSS_DIR)" || { echo "make check-across: set ACROSS_DIR" >&2; exit 2; }
	$(PGVENV) bash test/ops/dump_across.sh restore $(ACROSS_DIR)
