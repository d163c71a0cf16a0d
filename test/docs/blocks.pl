#!/usr/bin/perl
# test/docs/blocks.pl FILE.md OUTDIR: turn the SQL examples of one Markdown
# file into a psql script and the outputs they must print, for
# test/docs/run.sh.  The conventions are in docs/architecture.md, "Examples
# are tests"; in short:
#
#   ```sql            executed
#   ```text           the very next fenced block after a ```sql block: what
#                     psql prints for it (aligned format, the row count
#                     footer included)
#   ```json output    likewise, printed unaligned without headers or
#                     footer (psql -A -t): for jsonb_pretty documents
#   ```sql norun      shown, never executed (and a ```text after it is not
#                     compared): for what needs more than one server
#   <!-- sql ... -->  executed but not shown (set-up a reader need not see)
#
# A block that has no output block must print nothing.  It writes
# OUTDIR/script.sql (every executed block, each after a marker line that
# psql echoes), OUTDIR/blocks (one line per executed block: number, line
# in FILE, kind) and OUTDIR/expected.N (the output of block N, when the
# document shows it).  Problems with the document itself (an unknown
# block tag, an output block with nothing to belong to, a statement
# without its semicolon) are printed as FILE:LINE: message, exit status 1.
# Core Perl only (strict and warnings), as on a fresh Debian.
use strict;
use warnings;

my ($file, $out) = @ARGV;
die "usage: blocks.pl FILE.md OUTDIR\n" unless defined $out;
open(my $in, '<', $file) or die "$file: $!\n";
my @lines = <$in>;
close($in);
chomp(@lines);

my @blocks;     # {line, kind => sql|hidden|norun|text|json|other, tag, body => [lines]}
my $i = 0;
while ($i < @lines) {
	my $l = $lines[$i];
	# A fence: three or more backticks or tildes; a backtick fence's info
	# string has no backtick (so a line that starts with an inline code span
	# is text, as in CommonMark).
	my ($lead, $fence, $info) = $l =~ /^(\s*)(`{3,}|~{3,})\s*(.*?)\s*$/;
	if (defined $fence && !($fence =~ /^`/ && $info =~ /`/)) {
		my $indent = length($lead);
		my $start = $i + 1;
		my @body;
		$i++;
		while ($i < @lines && $lines[$i] !~ /^\s*\Q$fence\E\s*$/) {
			my $b = $lines[$i];
			$b =~ s/^ {0,$indent}//;
			push @body, $b;
			$i++;
		}
		die "$file:$start: fenced block never closed\n" if $i >= @lines;
		$i++;
		my $kind;
		if    ($info eq 'sql')          { $kind = 'sql' }
		elsif ($info eq 'sql norun')    { $kind = 'norun' }
		elsif ($info eq 'text')         { $kind = 'text' }
		elsif ($info eq 'json output')  { $kind = 'json' }
		elsif ($info =~ /^sql\b/)       { die "$file:$start: unknown block tag \"$info\" (sql, sql norun)\n" }
		else                            { $kind = 'other' }
		push @blocks, { line => $start, kind => $kind, tag => $info, body => \@body };
		next;
	}
	if ($l =~ /^\s*<!--\s*sql\b(.*)$/) {
		my $start = $i + 1;
		my $rest = $1;
		my @body;
		while (1) {
			if ($rest =~ /^(.*?)-->/) {
				my $code = $1;
				push @body, $code if $code =~ /\S/;
				last;
			}
			push @body, $rest if $rest =~ /\S/;
			$i++;
			die "$file:$start: <!-- sql comment never closed\n" if $i >= @lines;
			$rest = $lines[$i];
		}
		$i++;
		push @blocks, { line => $start, kind => 'hidden', tag => 'hidden', body => \@body };
		next;
	}
	$i++;
}

# Pair each output block with the executed block just before it.
my $problems = 0;
for my $n (0 .. $#blocks) {
	my $b = $blocks[$n];
	next unless $b->{kind} eq 'text' || $b->{kind} eq 'json';
	my $prev = $n > 0 ? $blocks[$n - 1] : undef;
	if ($prev && $prev->{kind} eq 'sql') {
		$prev->{expected} = $b;
	} elsif ($b->{kind} eq 'json' && !($prev && $prev->{kind} eq 'norun')) {
		print "$file:$b->{line}: a \"json output\" block must follow a sql block\n";
		$problems++;
	}
}

# Every executed block must end its last statement: a psql meta-command
# line, or a line ending with a semicolon (a comment may follow it).
for my $b (@blocks) {
	next unless $b->{kind} eq 'sql' || $b->{kind} eq 'hidden';
	my @code = grep { /\S/ && !/^\s*--/ } @{ $b->{body} };
	my $last = @code ? $code[-1] : '';
	$last =~ s/\s*--[^']*$//;
	unless ($last =~ /;\s*$/ || $last =~ /^\s*\\/) {
		print "$file:$b->{line}: the block's last statement has no semicolon (or the block is empty)\n";
		$problems++;
	}
}
exit 1 if $problems;

open(my $script, '>', "$out/script.sql") or die "$out/script.sql: $!\n";
open(my $list, '>', "$out/blocks") or die "$out/blocks: $!\n";
my $n = 0;
for my $b (@blocks) {
	next unless $b->{kind} eq 'sql' || $b->{kind} eq 'hidden';
	$n++;
	my $e = $b->{expected};
	my $raw = $e && $e->{kind} eq 'json';
	print $script "\\echo '\@\@docs-block $n\@\@'\n";
	print $script "\\pset format unaligned\n\\pset tuples_only on\n" if $raw;
	print $script "$_\n" for @{ $b->{body} };
	print $script "\\pset format aligned\n\\pset tuples_only off\n" if $raw;
	print $list join("\t", $n, $b->{line}, $b->{kind}, $e ? $e->{line} : '-'), "\n";
	if ($e) {
		open(my $x, '>', "$out/expected.$n") or die "$out/expected.$n: $!\n";
		print $x "$_\n" for @{ $e->{body} };
		close($x);
	}
}
print $script "\\echo '\@\@docs-block end\@\@'\n";
close($script);
close($list);
