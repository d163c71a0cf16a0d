# mk/checks.mk: fuzzing, sanitizer and valgrind checks of incentives.
# Included by the main Makefile (after PGXS), which runs `fuzz sanitize
# valgrind-unit` as part of `make test` through EXTRA_CHECKS.
#
#   make fuzz              build test/fuzz/fuzz_offer and fuzz_calc (libFuzzer,
#                          ASan, UBSan) and run each for FUZZ_SECONDS (30) on
#                          a fresh copy of the seed corpus; fails on any
#                          crash, leak, undefined behaviour or invariant.
#                          Reproduce a crash: test/fuzz/fuzz_calc FILE
#   make sanitize          the engine core unit tests built with ASan+UBSan
#   make valgrind-unit     the unit test binary under valgrind (leak check)
#   make valgrind-regress  the pg_regress suite against a throwaway cluster
#                          whose server runs under valgrind; fails on any
#                          valgrind error with a frame in our code (minutes;
#                          not part of `make test`)
#
# Needs clang with its sanitizer/libFuzzer runtime (Debian: clang,
# libclang-rt-14-dev) and valgrind.  Everything generated lands in ignored
# paths: test/fuzz/fuzz_{offer,calc}, test/fuzz/corpus/ (seed copy, working
# corpora, dictionary, logs, crash artifacts), test/unit/run_unit_asan and
# log/valgrind/.

FUZZ_SECONDS ?= 30
FUZZ_CC      ?= clang
FUZZ_CFLAGS  ?= -std=gnu99 -g -O1 -fno-omit-frame-pointer \
                -Wall -Wextra -Werror -Wdeclaration-after-statement \
                -Wmissing-prototypes \
                -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
FUZZ_BINS     = test/fuzz/fuzz_offer test/fuzz/fuzz_calc
FUZZ_WORK     = test/fuzz/corpus
# -max_len: the largest fixture offer is ~2 KB compact; room to grow
FUZZ_FLAGS    = -max_total_time=$(FUZZ_SECONDS) -timeout=10 -rss_limit_mb=2048 \
                -max_len=8192 -print_final_stats=1

SAN_CC       ?= clang
SAN_CFLAGS   ?= -std=gnu99 -g -O1 -fno-omit-frame-pointer -Wall -Wextra -Werror \
                $(if $(findstring clang,$(SAN_CC)),,-Wno-format-truncation) \
                -fsanitize=address,undefined -fno-sanitize-recover=all

CHECKS_CORE_SRCS = $(CORE_SRCS)
CHECKS_CORE_HDRS = $(CORE_HDRS)

EXTRA_CLEAN  += $(FUZZ_BINS) $(FUZZ_WORK) test/unit/run_unit_asan

.PHONY: fuzz sanitize valgrind-unit valgrind-regress

# ---- fuzzing ----------------------------------------------------------------

# each harness with the shared harness code (fuzz_common.c, fuzz_world.c,
# fuzz_checks.c, fuzz_rules.c)
FUZZ_SHARED  = test/fuzz/fuzz_common.c test/fuzz/fuzz_world.c test/fuzz/fuzz_checks.c \
               test/fuzz/fuzz_rules.c
FUZZ_HDRS    = test/fuzz/fuzz_common.h test/fuzz/fuzz_world.h test/fuzz/fuzz_checks.h \
               test/fuzz/fuzz_rules.h

$(FUZZ_BINS): test/fuzz/%: test/fuzz/%.c $(FUZZ_SHARED) $(FUZZ_HDRS) $(CHECKS_CORE_SRCS) $(CHECKS_CORE_HDRS)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -I src -o $@ $< $(FUZZ_SHARED) $(CHECKS_CORE_SRCS) -ljson-c

fuzz: $(FUZZ_BINS)
	rm -rf $(FUZZ_WORK)/seed
	test/fuzz/make_seeds.sh $(FUZZ_WORK)/seed $(FUZZ_WORK)/offer.dict
	@set -e; for h in offer calc; do \
	  rm -rf $(FUZZ_WORK)/$$h; cp -R $(FUZZ_WORK)/seed $(FUZZ_WORK)/$$h; \
	  echo "fuzz_$$h: $(FUZZ_SECONDS) s on $$(ls $(FUZZ_WORK)/seed | wc -l) seeds"; \
	  if ! UBSAN_OPTIONS=print_stacktrace=1 FUZZ_CALC_STATS=1 ./test/fuzz/fuzz_$$h \
	      $(FUZZ_FLAGS) -dict=$(FUZZ_WORK)/offer.dict \
	      -artifact_prefix=$(FUZZ_WORK)/fuzz_$$h- \
	      $(FUZZ_WORK)/$$h > $(FUZZ_WORK)/fuzz_$$h.log 2>&1; then \
	    grep -v '^#[0-9]' $(FUZZ_WORK)/fuzz_$$h.log | tail -n 60; \
	    echo "fuzz_$$h FAILED; reproducer: ls $(FUZZ_WORK)/fuzz_$$h-*" >&2; \
	    exit 1; \
	  fi; \
	  runs=$$(sed -n 's/^stat::number_of_executed_units: *//p' $(FUZZ_WORK)/fuzz_$$h.log); \
	  rate=$$(sed -n 's/^stat::average_exec_per_sec: *//p' $(FUZZ_WORK)/fuzz_$$h.log); \
	  cov=$$(grep -o 'cov: [0-9]*' $(FUZZ_WORK)/fuzz_$$h.log | tail -n 1); \
	  echo "fuzz_$$h: $$runs executions in $(FUZZ_SECONDS) s ($$rate exec/s, $$cov), 0 crashes"; \
	  grep -E '^fuzz_calc (stats|rules)' $(FUZZ_WORK)/fuzz_$$h.log || true; \
	done

# ---- sanitizers -------------------------------------------------------------

test/unit/run_unit_asan: $(UNIT_SRCS) $(CHECKS_CORE_HDRS) test/unit/unit.h
	$(SAN_CC) $(SAN_CFLAGS) -o $@ $(UNIT_SRCS) -ljson-c

sanitize: test/unit/run_unit_asan
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  ./test/unit/run_unit_asan

# ---- valgrind ---------------------------------------------------------------

VALGRIND ?= valgrind

valgrind-unit: test/unit/run_unit
	$(VALGRIND) --error-exitcode=1 --leak-check=full ./test/unit/run_unit

# valgrind-regress: the script below, run by bash with arguments
#   PG_CONFIG, the source basenames of our code.  (It runs `make
#   installcheck` itself; the recipe line must not name $(MAKE), or
#   `make -n` would run it.)
# The server (postmaster and every backend it forks) runs under valgrind
# through a wrapper given to pg_ctl -p; initdb does not.  Debian's server is
# not built with USE_VALGRIND, so valgrind cannot see chunk bounds inside
# palloc blocks; it still reports uninitialised values, invalid accesses
# outside malloc'd blocks and bad frees.  Suppressions: PostgreSQL's
# src/tools/valgrind.supp when installed, plus test/valgrind/postgres.supp.
define _VALGRIND_REGRESS_SH
set -euo pipefail
pg_config=$1
our_files=$2
bindir=$("$pg_config" --bindir)
repo=$(pwd)
logs="$repo/log/valgrind"
work=$(mktemp -d /tmp/incentives-valgrind.XXXXXX)
run_as=()
if [ "$(id -u)" -eq 0 ]; then
	run_as=(runuser -u postgres --)
	chown postgres "$work"
fi
stop_server() {
	"${run_as[@]}" "$bindir/pg_ctl" -D "$work/data" -m fast -t 600 stop >/dev/null 2>&1 || true
}
trap 'stop_server; rm -rf "$work"' EXIT

supp=(--suppressions="$repo/test/valgrind/postgres.supp")
pgsupp=$(find / -xdev -name valgrind.supp -path '*postgres*' 2>/dev/null | head -n 1 || true)
if [ -n "$pgsupp" ]; then
	supp+=(--suppressions="$pgsupp")
	echo "valgrind-regress: PostgreSQL suppressions $pgsupp"
else
	echo "valgrind-regress: PostgreSQL's valgrind.supp is not installed; test/valgrind/postgres.supp only"
fi

cat > "$work/postgres" <<EOF
#!/bin/sh
exec valgrind --quiet --trace-children=yes --track-origins=yes \
  --read-var-info=no --num-callers=40 --error-limit=no --leak-check=no \
  --gen-suppressions=all ${supp[*]} \
  --error-markers=VALGRINDERROR-BEGIN,VALGRINDERROR-END \
  --log-file=$work/valgrind.%p.log "$bindir/postgres" "\$@"
EOF
chmod 755 "$work/postgres"

echo "valgrind-regress: initdb in $work"
"${run_as[@]}" "$bindir/initdb" -D "$work/data" -U postgres -A trust --no-sync \
	> "$work/initdb.log" 2>&1 || { cat "$work/initdb.log"; exit 1; }
echo "valgrind-regress: starting the server under valgrind"
"${run_as[@]}" "$bindir/pg_ctl" -D "$work/data" -p "$work/postgres" -w -t 600 \
	-l "$work/server.log" \
	-o "-c listen_addresses='' -k $work -p 5432 -c fsync=off -c max_connections=20 -c shared_buffers=32MB -c max_wal_senders=0 -c jit=off $(mk/destdir_settings.sh "$pg_config" "$TEST_DESTDIR" | sed "s/.*/-c '&'/" | tr '\n' ' ')" \
	start > /dev/null || { cat "$work/server.log"; exit 1; }

status=0
PGHOST=$work PGPORT=5432 PGUSER=postgres make installcheck PG_CONFIG="$pg_config" || status=$?
stop_server

rm -rf "$logs"
mkdir -p "$logs"
cp "$work"/valgrind.*.log "$work/server.log" "$logs/"
# One error per block between the markers; ours when a frame is in our code.
awk -v ours="$our_files" '
	BEGIN { n = split(ours, f, " "); pat = "incentives\\.so"
		for (i = 1; i <= n; i++) { g = f[i]; gsub(/\./, "\\.", g); pat = pat "|[ (]" g ":" } }
	/VALGRINDERROR-BEGIN/ { inblock = 1; block = ""; mine = 0; next }
	/VALGRINDERROR-END/ { inblock = 0; total++
		if (mine) { ourerr++; printf "%s: error in our code:\n%s\n", FILENAME, block } next }
	inblock { block = block $0 "\n"; if ($0 ~ pat) mine = 1 }
	END { printf "valgrind-regress: %d valgrind errors, %d in incentives code\n", total, ourerr
		exit (ourerr > 0) }
' "$logs"/valgrind.*.log || status=1
echo "valgrind-regress: $(ls "$logs"/valgrind.*.log | wc -l) processes traced; logs in log/valgrind/"
if [ "$status" -ne 0 ] && [ -s regression.diffs ]; then
	echo "valgrind-regress: regression.diffs:"; cat regression.diffs
fi
exit "$status"
endef
export VALGRIND_REGRESS_SH := $(value _VALGRIND_REGRESS_SH)

valgrind-regress: install-test
	bash -c "$$VALGRIND_REGRESS_SH" valgrind-regress "$(PG_CONFIG)" \
	  "$(notdir $(CORE_SRCS) $(GLUE_SRCS))"

# Under ~2 minutes together on a 2-core machine (FUZZ_SECONDS per harness).
EXTRA_CHECKS += fuzz sanitize valgrind-unit
