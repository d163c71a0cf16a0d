# mk/cluster.mk: clusters of their own on 127.0.0.1: the sharded layout
# (docs/scaling.md) for real, a PL/Proxy coordinator with
# incentives_cluster and 2 shards (4 with SHARDS=4) with incentives; and a
# primary with a standby and a logical subscriber (docs/operations.md).
#
#   make check-cluster   fixtures and a generated data set loaded through
#                        the coordinator; sharded results == single-node
#                        results row for row; a stopped shard fails the call
#                        (test/cluster/run.sh; part of `make test`, 1-2 min)
#   make check-replicas  beside backups, a streaming standby and logical
#                        replication to a reporting database
#                        (test/cluster/replicas.sh; part of `make test`)
#   make measure-cluster 1, 2 and 4 shards at 1M transactions, and the
#                        per-call routing overhead (not part of `make test`)

.PHONY: check-cluster check-replicas measure-cluster
check-cluster: install-test
	PG_CONFIG=$(PG_CONFIG) test/cluster/run.sh

check-replicas: install-test
	PG_CONFIG=$(PG_CONFIG) test/cluster/replicas.sh

measure-cluster: install-test
	PG_CONFIG=$(PG_CONFIG) test/cluster/measure.sh

EXTRA_CHECKS += check-cluster check-replicas
