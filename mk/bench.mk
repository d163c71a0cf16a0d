# mk/bench.mk: `make bench` -- build and install the extension,
# then run bench/run.sh on a throwaway cluster: data generator, bare scan,
# engine, set-based SQL reference, per-participant loop, peak memory and
# the engine/reference cross-check.  Not part of `make test` (minutes, and
# timing is no pass/fail check).
#
#   make bench                                  # 1M transactions; then
#                                               # bench/groups.sh (participant groups)
#                                               # bench/products.sh (offers on products)
#                                               # and bench/hierarchy.sh (four levels)
#   make bench BENCH_N="1000000 10000000"       # and 10M
#   make bench BENCH_PERF=1                     # plus a perf profile in bench/out/
#
# Every BENCH_* setting of bench/run.sh can be given on the command line.

.PHONY: bench bench-groups bench-products bench-hierarchy
bench: install-test
	bench/run.sh
	bench/groups.sh
	bench/products.sh
	bench/hierarchy.sh

# make bench-groups: bench/groups.sh alone (offers aggregated by group
# against the same by participant; a member's call against a lone one).
bench-groups: install-test
	bench/groups.sh

# make bench-products: bench/products.sh alone (an offer book written on
# products against the same book on SKU lists).
bench-products: install-test
	bench/products.sh

# make bench-hierarchy: bench/hierarchy.sh alone (offers aggregated by
# group over a four-level hierarchy against one level).
bench-hierarchy: install-test
	bench/hierarchy.sh

# make bench-lifecycle: bench/lifecycle.sh (docs/lifecycle.md): full
# refresh against the calculation, the change-tracking overhead of a bulk
# load, the changed-only refresh, the live job and settle with its kept
# rows against 0.4.0's (BENCH_PARTS=settle: that alone), at BENCH_N (1M;
# "1000000 10000000" for 10M too).  Not part of `make test`.
.PHONY: bench-lifecycle
bench-lifecycle: install-test
	bench/lifecycle.sh
