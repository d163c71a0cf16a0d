#!/bin/bash
# mk/free_port.sh: print a TCP port on 127.0.0.1 that nothing listens on,
# picked at random from 20000 up to the start of the kernel's ephemeral
# range (32768 unless ip_local_port_range says otherwise), so that
# throwaway clusters started at the same time (several checkouts on one
# machine) do not race for 5432, and a client connection's own port (taken
# from the ephemeral range) cannot be the one a server then fails to bind.
low=32768
if read -r first _ </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null && [ "$first" -gt 21000 ]; then
	low=$first
fi
for _ in $(seq 1 200); do
	port=$((20000 + RANDOM % (low - 20000)))
	if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
		echo "$port"
		exit 0
	fi
done
echo "mk/free_port.sh: no free port found" >&2
exit 1
