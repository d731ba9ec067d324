# sinkcert figure script path
# command_line: build/sinkcert theorem1 --n 32 --L 32 --threads 1 --out results/theorem1/n32_L32
# revision: 500c8f559201
# time_utc: 2026-12-06T16:01:03Z
# seed: 0
# precision: double
# caption: Descent path (Theorem 1 study, single-layer softmax, n = 32, L = 32, triggers paper): per optimizer round and start, the worst-case loss the adversary finds on the current model (solid) and 1 - its mean BOS mass over the probe set (dashed, the same colour for the same start); both fall together as the model learns the task with a sink. Evidence: worst case SEARCH(lower bound on that model's E, certified at the adversary's witness); BOS mass NUMERIC(53).
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
set linetype 1 linecolor rgb '#0072B2' linewidth 1.5
set linetype 2 linecolor rgb '#D55E00' linewidth 1.5
set linetype 3 linecolor rgb '#009E73' linewidth 1.5
set linetype 4 linecolor rgb '#CC79A7' linewidth 1.5
set linetype 5 linecolor rgb '#E69F00' linewidth 1.5
set linetype 6 linecolor rgb '#56B4E9' linewidth 1.5
set linetype 7 linecolor rgb '#000000' linewidth 1.5
set linetype cycle 7
set key top right
set grid
set logscale y
set format y '10^{%T}'
set xlabel 'optimizer round'
set ylabel 'worst case E (solid); 1 - mean BOS mass (dashed)'
set title 'Theorem 1 descent path: worst case (SEARCH, lower bound) and 1 - mean BOS (NUMERIC(53))' noenhanced
plot for [s=0:2] data using ($1==s ? $2 : 1/0):3 with linespoints linecolor s+1 pointtype 7 pointsize 0.6 title sprintf('worst case, start %d', s), \
  for [s=0:2] data using ($1==s ? $2 : 1/0):(1-$4) with lines linecolor s+1 dashtype 2 title sprintf('1 - mean BOS, start %d', s)
