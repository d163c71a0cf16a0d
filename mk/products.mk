# mk/products.mk: random cases of offers written on products against a
# set-based SQL reference (docs/reference.md, Products).  Included by the
# main Makefile (after PGXS); `make test` runs it through EXTRA_CHECKS.
#
#   make check-products-random   install, then on a throwaway cluster
#                                PRODUCTS_SEEDS (40) random cases of
#                                test/sql/products_random.sql, every
#                                earning row compared exactly
#                                (test/scripts/products_random.sh; about
#                                40 s)

PRODUCTS_SEEDS ?= 40

.PHONY: check-products-random
check-products-random: install-test
	PRODUCTS_SEEDS=$(PRODUCTS_SEEDS) $(PGVENV) bash test/scripts/products_random.sh

EXTRA_CHECKS += check-products-random
