# mk/cluster.mk: the PL/Proxy coordinator extension incentives_cluster
# (issue 6, docs/scaling.md) and its test.
#
#   make check-cluster   a coordinator and 2 shard clusters on 127.0.0.1
#                        (SHARDS=4 for four): fixtures and a generated data
#                        set loaded through the coordinator, sharded results
#                        == single-node results, a stopped shard fails the
#                        call; part of `make test` (about 1-2 minutes)
#   make measure-cluster 1, 2 and 4 shards at 1M transactions, and the
#                        per-call routing overhead (not part of `make test`)
#
# The companion extension is installed with the main one by `make install`:
# its control file goes in as DATA (PGXS puts DATA in share/extension when
# EXTENSION is set), its script is built from sql/cluster/.

CLUSTER_EXTVERSION = $(shell sed -n "s/^default_version *= *'\([^']*\)'.*/\1/p" incentives_cluster.control)
CLUSTER_SQL        = sql/incentives_cluster--$(CLUSTER_EXTVERSION).sql

DATA        += incentives_cluster.control
DATA_built  += $(CLUSTER_SQL)
EXTRA_CLEAN += $(CLUSTER_SQL)

# PGXS has already expanded `all: $(DATA_built)`; add ours.
all: $(CLUSTER_SQL)

$(CLUSTER_SQL): sql/cluster/incentives_cluster.sql incentives_cluster.control
	cat sql/cluster/incentives_cluster.sql > $@

.PHONY: check-cluster measure-cluster
check-cluster: all
	$(MAKE) install
	PG_CONFIG=$(PG_CONFIG) test/cluster/run.sh

measure-cluster: all
	$(MAKE) install
	PG_CONFIG=$(PG_CONFIG) test/cluster/measure.sh

EXTRA_CHECKS += check-cluster
