-- incentives_cluster 0.1.0 -> 0.2.0: no change to its schemas and types
-- but a comment.  The upgrade script is src/sql/drop_code.sql (0.1.0's
-- functions go), this file, then the code parts (0.2.0's come).

COMMENT ON TYPE incentives.earning IS 'One earning row: what one transaction earns under one offer and rate (docs/reference.md, Earning rows); the shards'' type';
