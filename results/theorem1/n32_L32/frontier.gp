# sinkcert figure script frontier
# command_line: build/sinkcert theorem1 --n 32 --L 32 --threads 1 --out results/theorem1/n32_L32
# revision: 500c8f559201
# time_utc: 2026-12-06T16:01:03Z
# seed: 0
# precision: double
# caption: Loss-sink frontier (Theorem 1 study, single-layer softmax, n = 32, L = 32, triggers paper): for each delta, the worst case of the best model found whose mean BOS mass is at most 1 - delta, against delta (log-log, with the fitted slope). Each point bounds that model's E from below; it is no bound on eps*(delta). Evidence: SEARCH(lower bound).
# gnuplot frontier.gp renders frontier.pdf; gnuplot -e "format='png'" frontier.gp renders frontier.png
data = 'frontier.dat'
if (!exists("format")) format = 'pdf'
if (format eq 'png') {
  set terminal pngcairo size 900,600
} else {
  set terminal pdfcairo size 6in,4in font "Helvetica,10"
}
set output 'frontier.'.format
set datafile missing '?'
set linetype 1 linecolor rgb '#0072B2' linewidth 1.5
set linetype 2 linecolor rgb '#D55E00' linewidth 1.5
set linetype 3 linecolor rgb '#009E73' linewidth 1.5
set linetype 4 linecolor rgb '#CC79A7' linewidth 1.5
set linetype 5 linecolor rgb '#E69F00' linewidth 1.5
set linetype 6 linecolor rgb '#56B4E9' linewidth 1.5
set linetype 7 linecolor rgb '#000000' linewidth 1.5
set linetype cycle 7
set key top left
set grid
set logscale xy
set format y '10^{%T}'
set xlabel '{/Symbol d} (mean BOS mass <= 1 - {/Symbol d})'
set ylabel 'worst case of the frontier model (SEARCH, lower bound)'
set title sprintf("Worst case of the frontier model at delta (SEARCH: lower bound on that model's E,\nno bound on eps*(delta) until the model is certified); fit slope %.3f +- %.3f", 0.79943177624536521, 0.019107825099760417)
plot data using 1:($3==1 ? $2 : 1/0) with linespoints linecolor 1 pointtype 7 title 'frontier model worst case (SEARCH, lower bound)'
