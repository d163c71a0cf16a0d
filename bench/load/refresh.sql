-- bench/load/refresh.sql: the full refresh, run over and over by a session
-- of its own while the other scripts run
CALL incentives.refresh_earnings(progress_every => 250);
