# mk/test.mk: the two commands of the README and what they stand on.
#
#   make demo   packages, build, then demo/demo.sql on a throwaway cluster
#   make test   packages, build, then every check: the engine core's unit
#               tests, pg_regress and pgTAP (`regress`), the docs examples,
#               and every fragment's EXTRA_CHECKS
#
# Neither writes into the server's directories: the extension is installed
# into TEST_DESTDIR (a folder under /tmp, readable by the server's user) and
# every throwaway cluster loads it from there (Debian's extension_destdir
# setting, or PostgreSQL 18's paths: mk/destdir_settings.sh).  So neither needs root, and two checkouts on
# one machine never see each other's build.  mk/packages.sh installs the
# Debian packages a goal needs (apt-get, through sudo when not root).

TEST_DESTDIR ?= /tmp/incentives-test-$(shell id -u)-$(shell printf %s '$(CURDIR)' | cksum | cut -d' ' -f1)
# A throwaway cluster of PG_MAJOR that loads the extension from
# TEST_DESTDIR (mk/destdir_settings.sh), on a port of its own
# (mk/free_port.sh).
DESTDIR_SETTINGS = $(shell mk/destdir_settings.sh $(PG_CONFIG) $(TEST_DESTDIR))
PGVENV        = pg_virtualenv -t $(if $(PG_MAJOR),-v $(PG_MAJOR)) -c "-p $$(mk/free_port.sh)" \
                $(foreach s,$(DESTDIR_SETTINGS),-o '$(s)')
export TEST_DESTDIR

.PHONY: demo test regress install-test run-demo run-test

demo:
	@mk/packages.sh demo
	@$(MAKE) --no-print-directory run-demo

test:
	@mk/packages.sh test
	@$(MAKE) --no-print-directory run-test

# install-test: the extension's files into TEST_DESTDIR (the server reads
# them as its own user, hence the permissions).
install-test: all
	@rm -rf $(TEST_DESTDIR)
	@$(MAKE) --no-print-directory install DESTDIR=$(TEST_DESTDIR) >/dev/null
	@chmod -R a+rX $(TEST_DESTDIR)

run-demo: install-test
	$(PGVENV) psql -X -v ON_ERROR_STOP=1 -f demo/demo.sql

# regress: pg_regress (installcheck) and pgTAP (pg_prove) on one throwaway
# cluster.
regress: install-test
	$(PGVENV) sh -c '$(MAKE) --no-print-directory installcheck || { cat regression.diffs; exit 1; }; \
	  psql -X -q -v ON_ERROR_STOP=1 -c "CREATE EXTENSION IF NOT EXISTS pgtap" \
	    -c "CREATE EXTENSION IF NOT EXISTS incentives" && pg_prove test/pgtap/*.sql'

# run-test's prerequisites (unit, regress, EXTRA_CHECKS) are named in the
# Makefile, after every fragment has added its checks.
run-test:
	@echo "make test: all checks passed"
