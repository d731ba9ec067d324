# sinkcert figure script frontier
# command_line: build/sinkcert theorem1 --n 16 --L 16 --seed 0 --threads 2 --out results/theorem1
# revision: d9e262f2d00d
# time_utc: 2026-12-01T14:13:11Z
# seed: 0
# precision: double
# caption: Loss-sink frontier (Theorem 1 study, single-layer softmax, n = 16, L = 16, triggers paper): for each delta, the worst case of the best model found whose mean BOS mass is at most 1 - delta, against delta (log-log, with the fitted slope). Each point bounds that model's E from below; it is no bound on eps*(delta). Evidence: SEARCH(lower bound).
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
set key top left
set grid
set logscale xy
set xlabel 'delta (mean BOS <= 1 - delta)'
set ylabel 'worst case of the frontier model (SEARCH, lower bound)'
set title sprintf("Worst case of the frontier model at delta (SEARCH: lower bound on that model's E,\nno bound on eps*(delta) until the model is certified); fit slope %.3f +- %.3f", 0.89037754666478353, 0.014727248071265422)
plot data using 1:($3==1 ? $2 : 1/0) with linespoints pt 7 title 'frontier model worst case (SEARCH, lower bound)'
