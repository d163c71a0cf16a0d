#!/usr/bin/env bash
# deps.sh: the link-time dependency graph of the C sources, and a check
# that it has no cycle.
#
#   test/scripts/deps.sh DIR...        (make check-deps: src/core src/pg)
#
# "A depends on B" means: A.o has an undefined symbol that B.o defines
# (nm over the objects built from the DIRs' .c files; headers are not
# looked at).  The graph is
# printed one object per line, "A -> B C ...", followed by its layers
# (objects that depend on nothing first).  The script fails when two
# objects depend on each other, directly (A <-> B) or through a longer
# circle, and names the objects of every circle; the intended direction is
# glue -> engine -> strategies -> shared calculation helpers -> offer
# model / numbers / utilities (docs/architecture.md).
set -euo pipefail

[ "$#" -gt 0 ] || { echo "usage: $0 DIR..." >&2; exit 2; }

objs=()
for dir in "$@"; do
	# objects of the current sources only (a stale .o of a removed file
	# would add edges that no longer exist)
	for c in "$dir"/*.c; do
		[ -e "${c%.c}.o" ] && objs+=("${c%.c}.o")
	done
done
[ "${#objs[@]}" -gt 0 ] || { echo "deps.sh: no objects under $* (build first)" >&2; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# symbol -> defining object; object -> undefined symbols
for o in "${objs[@]}"; do
	name=${o%.o}
	nm -g --defined-only "$o" | awk -v n="$name" 'NF >= 3 { print $3 "\t" n }' >> "$work/defs"
	nm -u "$o" | awk -v n="$name" '{ print n "\t" $NF }' >> "$work/uses"
done

# edges "A B", one per pair
awk -F'\t' 'NR == FNR { def[$1] = $2; next }
	($2 in def) && def[$2] != $1 { print $1 " " def[$2] }' \
	"$work/defs" "$work/uses" | sort -u > "$work/edges"

echo "Dependencies (A -> what A uses):"
for o in "${objs[@]}"; do
	name=${o%.o}
	targets=$(awk -v n="$name" '$1 == n { printf " %s", $2 }' "$work/edges")
	printf '  %s ->%s\n' "$name" "${targets:- (nothing)}"
done

# Cycles: the strongly connected components with more than one object.
# Repeatedly strip objects that use nothing left (or that nothing left
# uses); what remains lies on or between circles, and its components are
# found by reachability.
awk '
	function reach(a, b,    k, seen, stack, top, x) {
		top = 1; stack[1] = a; seen[a] = 1
		while (top > 0) {
			x = stack[top--]
			if (x == b) return 1
			for (k = 1; k <= nout[x]; k++)
				if (!(out[x, k] in seen)) { seen[out[x, k]] = 1; stack[++top] = out[x, k] }
		}
		return 0
	}
	{ node[$1] = 1; node[$2] = 1; out[$1, ++nout[$1]] = $2; edge[$1, $2] = 1 }
	END {
		n = 0
		for (a in node) list[++n] = a
		bad = 0
		for (i = 1; i <= n; i++) {
			a = list[i]
			if (a in done) continue
			comp = ""; size = 0
			for (j = 1; j <= n; j++) {
				b = list[j]
				if (a == b || (reach(a, b) && reach(b, a))) {
					comp = comp " " b; size++; done[b] = 1
				}
			}
			if (size > 1) { printf "CYCLE among:%s\n", comp; bad = 1 }
		}
		exit bad
	}' "$work/edges" > "$work/cycles" || {
	cat "$work/cycles" >&2
	echo "deps.sh: FAILED: the objects above depend on each other" >&2
	exit 1
}

# Layers: layer 0 uses nothing; layer k uses only lower layers.
awk '
	{ node[$1] = 1; node[$2] = 1; dep[$1, ++ndep[$1]] = $2 }
	END {
		changed = 1
		while (changed) {
			changed = 0
			for (a in node) {
				l = 0
				for (k = 1; k <= ndep[a]; k++)
					if (layer[dep[a, k]] + 1 > l) l = layer[dep[a, k]] + 1
				if (layer[a] != l) { layer[a] = l; changed = 1 }
			}
		}
		for (a in node) print layer[a] + 0 "\t" a
	}' "$work/edges" | sort -n -k1,1 -k2,2 | awk -F'\t' '
	{ if (NR == 1 || $1 != last) { if (NR > 1) printf "\n"; printf "  layer %s:", $1; last = $1 } printf " %s", $2 }
	END { printf "\n" }' > "$work/layers"
echo "Layers (each uses only layers below it):"
cat "$work/layers"
echo "deps.sh: ${#objs[@]} objects, $(wc -l < "$work/edges") dependencies, no cycle"
