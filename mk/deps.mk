# mk/deps.mk: the dependency check of the C sources.  Included by the main
# Makefile (after PGXS); `make test` runs it through EXTRA_CHECKS.
#
#   make check-deps   build the objects, then print who depends on whom
#                     (A depends on B when A.o has an undefined symbol that
#                     B.o defines) and the layers they form, and fail on any
#                     cycle, A <-> B included (test/scripts/deps.sh); then
#                     check the folders: each object uses only its own
#                     folder and the folders before it in DEPS_FOLDERS, and
#                     every folder of src/core and src/pg is in that list.

# The layers, from the bottom (docs/architecture.md, Layers): the engine
# core's folders, then the glue's, then module.c on top.
DEPS_FOLDERS = src/core/numbers src/core/util src/core/products src/core/offer src/core/calc \
               src/core/strategy src/core/rules src/core/engine \
               src/pg/base src/pg/load src/pg/read src/pg/calc src/pg/refresh src/pg

.PHONY: check-deps
check-deps: $(OBJS)
	@missing="$(filter-out $(DEPS_FOLDERS),$(patsubst %/,%,$(sort $(dir $(CORE_SRCS) $(GLUE_SRCS)))))"; \
	if [ -n "$$missing" ]; then \
	  echo "check-deps: FAILED: $$missing not in DEPS_FOLDERS (mk/deps.mk)" >&2; exit 1; fi
	@mkdir -p build; test/scripts/deps.sh $(DEPS_FOLDERS) > build/deps.txt || { cat build/deps.txt; rm -f build/deps.txt; exit 1; }
	@cat build/deps.txt
	@awk -v folders="$(DEPS_FOLDERS)" ' \
	  function folder(o) { sub(/\/[^\/]*$$/, "", o); return o } \
	  BEGIN { n = split(folders, f, " "); for (i = 1; i <= n; i++) rank[f[i]] = i } \
	  /^Dependencies/ { on = 1; next } /^Layers/ { on = 0 } \
	  on && $$2 == "->" { for (k = 3; k <= NF; k++) if ($$k != "(nothing)") { \
	    a = folder($$1); b = folder($$k); \
	    if (rank[b] > rank[a]) { printf "check-deps: %s uses %s, a later folder\n", $$1, $$k; bad = 1 } } } \
	  END { if (bad) { print "check-deps: FAILED: a folder uses one above it" > "/dev/stderr"; exit 1 } \
	    printf "Folders (each uses only itself and those before it):"; \
	    for (i = 1; i <= n; i++) printf " %s", f[i]; printf "\n" }' build/deps.txt \
	  || { rm -f build/deps.txt; exit 1; }
	@rm -f build/deps.txt

EXTRA_CHECKS += check-deps
