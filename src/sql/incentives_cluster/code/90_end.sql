-- The install script's helper has written every proxy.
DROP FUNCTION incentives_cluster.create_proxy(text, text[], text, text, text, text, integer);
