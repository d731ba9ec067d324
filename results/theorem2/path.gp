# sinkcert figure script path
# command_line: build/sinkcert theorem2 --layers 2 --heads 2 --n 16 --L 16 --seed 0 --threads 2 --out results/theorem2
# revision: 7be11a0d5e2e
# time_utc: 2026-12-01T19:48:28Z
# seed: 0
# precision: double
# caption: Descent path (Theorem 2 study, residual softmax 2 x 2, n = 16, L = 16, triggers paper): per optimizer round and start, the worst-case loss the adversary finds on the current model (solid) and 1 - its sink score sigma (dashed). Theorem 2 predicts that 1 - sigma falls as the worst case falls. Evidence: worst case SEARCH(lower bound on that model's E, certified at the adversary's witness); sink score NUMERIC(53).
# gnuplot path.gp renders path.pdf; gnuplot -e "format='png'" path.gp renders path.png
data = 'path.dat'
if (!exists("format")) format = 'pdf'
if (format eq 'png') {
  set terminal pngcairo size 900,600
} else {
  set terminal pdfcairo size 6in,4in font "Helvetica,10"
}
set output 'path.'.format
set datafile missing '?'
set key bottom left
set grid
set logscale y
set format y '10^{%T}'
set xlabel 'round'
set ylabel 'value'
set title 'Theorem 2 descent path: worst case (SEARCH, lower bound) and 1 - sink score (NUMERIC(53))'
plot for [s=0:2] data using ($1==s ? $2 : 1/0):3 with linespoints title sprintf('worst case, start %d', s), \
  for [s=0:2] data using ($1==s ? $2 : 1/0):(1-$4) with lines dashtype 2 title sprintf('1 - sink score, start %d', s)
