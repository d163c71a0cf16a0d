#!/bin/bash
# mk/free_port.sh: print a TCP port on 127.0.0.1 that nothing listens on,
# picked at random from 20000-59999, so that throwaway clusters started at
# the same time (several checkouts on one machine) do not race for 5432.
for _ in $(seq 1 200); do
	port=$((20000 + RANDOM % 40000))
	if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
		echo "$port"
		exit 0
	fi
done
echo "mk/free_port.sh: no free port found" >&2
exit 1
