# mk/docs.mk: the documents' examples are tests.  Every ```sql block of
# README.md and docs/*.md runs, and the output each shows is compared with
# what psql prints (conventions: docs/architecture.md, Examples are tests).
#
#   make check-docs                  all documents, on one throwaway cluster
#   make check-docs DOCS=README.md   only the documents named
#
# test/docs/run.sh makes a database per document; part of `make test`
# (a few seconds).

DOCS ?=

.PHONY: check-docs
check-docs: install-test
	$(PGVENV) test/docs/run.sh $(DOCS)

EXTRA_CHECKS += check-docs
