#!/bin/sh
# SPDX-License-Identifier: MIT
# sinkcert appendix end to end, on the quick configuration: into an empty
# folder it writes every table (P5 and P2 included, read from the committed
# search models of the repository's results/) and figure and appendix.tex;
# a missing input is an error naming the file (exit 2) before anything is
# written; --models must be a folder; --quick and --full exclude each other;
# --only writes the named tables and figures alone.
# With pdflatex installed, the document compiles with no box too wide.
# Usage: appendix_cli_test.sh SINKCERT (run from the source root, as ctest does).
set -u
bin="$1"
. "$(dirname "$0")/cli_expect.sh"


tables="p1_sink_loss p1_sink_bos p3_relu_certificate p4_beyond_double b1_worst_case_bound
  p2_search_models p5_refined_search_path c1_certified_path t1_hypothesis_edges
  t2_theorem2_study t2b_theorem2_every_head t2c_theorem2_certified normalizations_n5_L4 normalizations_n16_L16
  p5_refined_paper_size q1_row1_frontier"

# 1. Into an empty folder: everything.
mkdir "$tmp/empty"
expect 0 '^appendix: 16 tables, 13 figures under' appendix --quick --out "$tmp/empty"
out="$tmp/empty"
for t in $tables; do
  for ext in tex csv json; do
    [ -s "$out/tables/$t.$ext" ] || fail "tables/$t.$ext not written"
  done
  grep -q "^\\\\input{tables/$t}$" "$out/appendix.tex" || fail "appendix.tex does not input $t"
  keys=$(sed -n '2,6s/^# \([a-z_]*\): .*/\1/p' "$out/tables/$t.csv" | tr '\n' ' ')
  [ "$keys" = "command_line revision time_utc seed precision " ] ||
    fail "tables/$t.csv: provenance keys '$keys'"
done
[ -s "$out/tables/p5_refined_s1.weights.json" ] || fail "P5's refined model not written"
grep -q '^edges/n5_L4_paper/path_start0.weights.json,5,4,' "$out/tables/p2_search_models.csv" ||
  fail "P2 lacks the committed n = 5, L = 4 search model"
grep -q '^5,4,paper,2e-11,1.0000000000,0.539,0.0745,0.00769,CONSISTENT$' \
  "$out/tables/t1_hypothesis_edges.csv" || fail "the hypothesis-edge table lacks its n = 5, L = 4 row"
grep -q '^"edges/n5_L4_paper/path_start0, search (double)",5,4,"\[2\.0[0-9]*e-11, .*"\[9\.05[0-9]*e-12, 9\.1[0-9]*e-12\]",0\.00[0-9]*,128 / 128$' \
  "$out/tables/c1_certified_path.csv" || fail "C1 lacks the certified n = 5, L = 4 path model"
grep -q '^theorem2/n5_L4/eps_one_delta0.5,"\[6.183e-09, 6.184e-09\]",0,0,' "$out/tables/t2c_theorem2_certified.csv" ||
  fail "T2c lacks the eps_one model's layer 0, head 0"
grep -q '^5,4,VERIFIED,EXACT,0,' "$out/tables/p3_relu_certificate.csv" ||
  fail "P3: an exact zero is not printed 0"
for f in f1_sink_precision.dat f1_sink_precision.gp f2_certified_path.dat theorem1_path.pdf theorem1_frontier.pdf \
  theorem1_nuance.pdf theorem2_path.pdf theorem2_frontier.pdf; do
  [ -s "$out/figures/$f" ] || fail "figures/$f not written"
done
if command -v gnuplot > /dev/null 2>&1; then
  [ -s "$out/figures/f1_sink_precision.pdf" ] || fail "F1 not rendered"
fi
[ "$(grep -c '^\\caption{' "$out/appendix.tex")" -eq 13 ] || fail "appendix.tex: not 13 figure captions"
grep -q '^5,4,0.5,2.382030195e-01,4.00000000[0-9]e-01,2/5,' "$out/tables/q1_row1_frontier.csv" ||
  fail "Q1 lacks its n = 5, L = 4, delta = 0.5 row"
[ -s "$out/tables/q1_row1_n16_L16_delta0.01.weights.json" ] || fail "Q1's model files not written"
grep -q '^"*theorem2/n5_L4/eps_one_delta0.5"* 5 [01] [01] ' "$out/figures/f3_theorem2_certified.dat" ||
  fail "F3 lacks the eps_one model's point"
grep -q 'caption{\\texttt' "$out/appendix.tex" && fail "a figure's caption is its file name"
grep -q 'resizebox' "$out"/tables/*.tex && fail "a table is shrunk by resizebox"

# 2. A missing input fails loudly, naming it, before anything is written.
mkdir -p "$tmp/models" "$tmp/out2"
cp -R results/theorem1 "$tmp/models/"
rm "$tmp/models/theorem1/edges/n5_L4_paper/path_start0.weights.json"
expect 2 "^sinkcert: error: $tmp/models/theorem1/edges/n5_L4_paper/path_start0.weights.json: file: .*missing" \
  appendix --quick --models "$tmp/models" --out "$tmp/out2"
[ "$(wc -l < "$tmp/out")" -eq 1 ] || fail "the missing-input error is not one line"
[ -z "$(ls -A "$tmp/out2")" ] || fail "a run with a missing input wrote into --out"
rm "$tmp/models/theorem1/edges/n3_L4_paper/theorem1.json"
cp results/theorem1/edges/n5_L4_paper/path_start0.weights.json "$tmp/models/theorem1/edges/n5_L4_paper/"
expect 2 "n3_L4_paper/theorem1.json: file: an input of t1_hypothesis_edges" \
  appendix --quick --models "$tmp/models" --out "$tmp/out2"
expect 2 "^sinkcert: error: $tmp/nowhere: --models: " appendix --models "$tmp/nowhere" --out "$tmp/out2"
expect 2 'excludes' appendix --quick --full --out "$tmp/out2"

# --only: one table's files into <out>/tables, nothing else written
mkdir "$tmp/only"
expect 0 'appendix: t2c_theorem2_certified written' \
  appendix --quick --only t2c_theorem2_certified --out "$tmp/only"
[ "$(ls "$tmp/only" | tr '\n' ' ')" = "tables " ] || fail "appendix --only wrote beside tables/"
[ "$(ls "$tmp/only/tables" | wc -l)" -eq 3 ] || fail "appendix --only: not the three table files"
expect 2 'command line: --only: names of tables or figures of the appendix .*, got nope' \
  appendix --quick --only t2c_theorem2_certified,nope --out "$tmp/only"
[ "$(ls "$tmp/only/tables" | wc -l)" -eq 3 ] || fail "appendix --only with a bad name wrote"
# a table and a figure from one computation: tables/ and figures/ alone
mkdir "$tmp/only2"
expect 0 'appendix: t2c_theorem2_certified,f3_theorem2_certified written' \
  appendix --quick --only t2c_theorem2_certified,f3_theorem2_certified --out "$tmp/only2"
[ "$(ls "$tmp/only2" | tr '\n' ' ')" = "figures tables " ] || fail "appendix --only wrote beside tables/ and figures/"
ls "$tmp/only2/figures" | grep -q '^f3_theorem2_certified\.dat$' || fail "appendix --only: no F3 data"

# 3. The document compiles, no box too wide (where TeX Live is installed).
if command -v pdflatex > /dev/null 2>&1; then
  mkdir "$tmp/tex"
  for pass in 1 2; do
    (cd "$out" && pdflatex -interaction=nonstopmode -halt-on-error -output-directory "$tmp/tex" \
      appendix.tex > /dev/null 2>&1) || fail "appendix.tex does not compile (pass $pass)"
  done
  grep -q 'Overfull \\hbox' "$tmp/tex/appendix.log" && fail "appendix.tex: a box is too wide"
fi

finish appendix
