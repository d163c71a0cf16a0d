#!/bin/sh
# make_seeds.sh: build the fuzzers' seed corpus and dictionary from the
# fixtures, at build time (mk/checks.mk runs it; nothing it writes is
# committed).
#
#   test/fuzz/make_seeds.sh OUTDIR DICT
#
# OUTDIR receives
#   - fixture-CASE-N.json: offer N of test/fixtures/CASE/offers.json, one
#     document per file, its text kept exactly as written (numbers such as
#     1.0 keep their scale) with the whitespace outside strings removed;
#   - calc-CASE-N: the same document, a NUL byte and a few driver bytes,
#     the input form fuzz_calc.c reads (offer, NUL, transaction driver);
#   - calc-pair-CASE: both offers of a two-offer fixture (offer NUL offer
#     NUL driver);
#   - a copy of the hand-written seeds in test/fuzz/corpus_seed/.
# DICT receives a libFuzzer dictionary of the offer vocabulary (field
# names, strategy and calculator keys, edge-case numbers and dates).
#
# Needs only sh and perl (which PostgreSQL's packages already pull in).
set -eu

out=${1:?usage: make_seeds.sh OUTDIR DICT}
dict=${2:?usage: make_seeds.sh OUTDIR DICT}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)

mkdir -p "$out"

# Split each fixture's offers.json array into its elements, textually.
for f in "$root"/test/fixtures/*/offers.json; do
	case_name=$(basename "$(dirname "$f")")
	perl -e '
		use strict;
		my ($file, $out, $case) = @ARGV;
		open(my $in, "<", $file) or die "$file: $!";
		local $/;
		my $text = <$in>;
		# compact: drop whitespace outside strings
		my ($compact, $in_str, $esc) = ("", 0, 0);
		for my $c (split //, $text) {
			if ($in_str) {
				$compact .= $c;
				if ($esc) { $esc = 0 }
				elsif ($c eq "\\") { $esc = 1 }
				elsif ($c eq "\"") { $in_str = 0 }
			} elsif ($c eq "\"") { $compact .= $c; $in_str = 1 }
			elsif ($c !~ /\s/) { $compact .= $c }
		}
		$compact =~ /^\[(.*)\]$/s or die "$file: not a JSON array\n";
		my $body = $1;
		# top-level elements: split at commas of depth 0, outside strings
		my (@docs, $cur, $depth);
		($cur, $depth, $in_str, $esc) = ("", 0, 0, 0);
		for my $c (split //, $body) {
			if ($in_str) {
				if ($esc) { $esc = 0 }
				elsif ($c eq "\\") { $esc = 1 }
				elsif ($c eq "\"") { $in_str = 0 }
			} elsif ($c eq "\"") { $in_str = 1 }
			elsif ($c eq "{" || $c eq "[") { $depth++ }
			elsif ($c eq "}" || $c eq "]") { $depth-- }
			elsif ($c eq "," && $depth == 0) { push @docs, $cur; $cur = ""; next }
			$cur .= $c;
		}
		push @docs, $cur if length $cur;
		# driver bytes for fuzz_calc: a few fixed patterns
		my @drivers = ("\x05\x00\x01\x02\x03\x04\x10\x20\x30\x40",
					   "\x0f\x81\x42\x13\xff\x07\x66\x99\x01\x80\x22\x33",
					   "\x03\xfe\x03\x03\xa0\x11\x12\x13\x14\x15\x16");
		my $n = 0;
		for my $doc (@docs) {
			open(my $o, ">", "$out/fixture-$case-$n.json") or die;
			print $o $doc;
			close($o);
			my $d = 0;
			for my $drv (@drivers) {
				open($o, ">", "$out/calc-$case-$n-$d") or die;
				print $o $doc, "\0", $drv;
				close($o);
				$d++;
			}
			$n++;
		}
		if (@docs > 1) {
			open(my $o, ">", "$out/calc-pair-$case") or die;
			print $o join("\0", @docs), "\0", $drivers[1];
			close($o);
		}
	' "$f" "$out" "$case_name"
done

# The hand-written seeds (edge cases, regressions), when there are any.
for f in "$here"/corpus_seed/*; do
	[ -f "$f" ] && cp "$f" "$out/"
done

cat > "$dict" <<'EOF'
# libFuzzer dictionary for the offer document (written by make_seeds.sh)
"\"offer_key\""
"\"label\""
"\"strategy_key\""
"\"calculator_key\""
"\"standard\""
"\"stepped\""
"\"stacked\""
"\"percent_of_amount\""
"\"dollars_per_unit\""
"\"fixed_amount\""
"\"dollars_per_coverage_unit\""
"\"periods\""
"\"key\""
"\"start_date\""
"\"end_date\""
"\"prices\""
"\"sku_key\""
"\"price\""
"\"incentives\""
"\"incentive\""
"\"period_key\""
"\"transaction_type\""
"\"rates\""
"\"rate\""
"\"measure\""
"\"percent\""
"\"dollars\""
"\"filters\""
"\"sku_keys\""
"\"threshold_definition\""
"\"type\""
"\"aggregated_amount\""
"\"aggregated_quantity\""
"\"property\""
"\"level\""
"\"threshold\""
"\"value\""
"\"sku_sets\""
"\"conversion\""
"\"coverage_unit\""
"\"from\""
"\"enrollment\""
"\"open\""
"\"required\""
"\"requirements\""
"\"minimum\""
"\"limits\""
"\"maximum\""
"\"tier_mode\""
"\"all_volume\""
"\"incremental\""
"\"growth_amount\""
"\"growth_quantity\""
"\"baseline\""
"\"pays_on\""
"\"growth\""
"-100"
"\"stacks\""
"\"sku_set_keys\""
"\"gal\""
"\"qt\""
"\"acre\""
"\"2026-02-29\""
"\"2024-02-29\""
"\"0001-01-01\""
"\"9999-12-31\""
"\"\\u0000\""
"null"
"true"
"[]"
"{}"
"-0"
"0.0"
"1e38"
"1e-38"
"-1e37"
"99999999999999999999999999999999999999"
"0.00000000000000000000000000000000000001"
"9223372036854775807"
"18446744073709551616"
"0.00921875"
EOF
