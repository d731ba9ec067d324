# sinkcert figure script path
# command_line: build/sinkcert theorem1 --n 16 --L 16 --seed 0 --threads 2 --out results/theorem1
# revision: d9e262f2d00d
# time_utc: 2026-12-01T14:13:11Z
# seed: 0
# precision: double
# caption: Descent path (Theorem 1 study, single-layer softmax, n = 16, L = 16, triggers paper): per optimizer round and start, the worst-case loss the adversary finds on the current model (solid) and 1 - its mean BOS mass over the probe set (dashed); both fall together as the model learns the task with a sink. Evidence: worst case SEARCH(lower bound on that model's E, certified at the adversary's witness); BOS mass NUMERIC(53).
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
set key top right
set grid
set logscale y
set format y '10^{%T}'
set xlabel 'round'
set ylabel 'value'
set title 'Theorem 1 descent path: worst case (SEARCH, lower bound) and 1 - mean BOS (NUMERIC(53))'
plot for [s=0:2] data using ($1==s ? $2 : 1/0):3 with linespoints title sprintf('worst case, start %d', s), \
  for [s=0:2] data using ($1==s ? $2 : 1/0):(1-$4) with lines dashtype 2 title sprintf('1 - mean BOS, start %d', s)
