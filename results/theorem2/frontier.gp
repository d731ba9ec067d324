# sinkcert figure script frontier
# command_line: build/sinkcert theorem2 --layers 2 --heads 2 --n 16 --L 16 --seed 0 --threads 2 --out results/theorem2
# revision: 7be11a0d5e2e
# time_utc: 2026-12-01T19:48:28Z
# seed: 0
# precision: double
# caption: Frontiers (Theorem 2 study, residual softmax 2 x 2, n = 16, L = 16, triggers paper): the worst case of the best model found with the BOS mass of every head (eps_all) or of one head (eps_one) capped at 1 - delta. Theorem 2 predicts eps_all stays away from 0 and allows eps_one to reach it. Evidence: worst case of the frontier model at delta: SEARCH(lower bound) on that model's E, certified at the adversary's witness; no bound on eps*(delta), for which the model witnesses an upper bound only once its E is certified from above and its BOS cap over the whole box.
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
set key bottom right
set grid
set logscale xy
set format y '10^{%T}'
set xlabel 'delta (BOS ceiling 1 - delta)'
set ylabel 'worst case (SEARCH, lower bound)'
set title 'Theorem 2 frontiers'
plot data using ($1==1 ? $2 : 1/0):3 with linespoints title 'eps_all (every head capped)', \
  data using ($1==0 ? $2 : 1/0):3 with linespoints title 'eps_one (one head capped)'
