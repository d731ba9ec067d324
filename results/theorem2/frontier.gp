# sinkcert figure script frontier
# command_line: build/sinkcert theorem2 --layers 2 --heads 2 --n 16 --L 16 --seed 0 --threads 2 --init-stds 0.02 --out results/theorem2 --force
# revision: 47c069015cc5
# time_utc: 2026-12-03T13:26:26Z
# seed: 0
# precision: double
# caption: Frontiers (Theorem 2 study, residual softmax 2 x 2, n = 16, L = 16, triggers paper): the worst case of the best model found with the BOS mass of every head (eps_all) or of one head (eps_one) capped at 1 - delta. Theorem 2 predicts eps_all stays away from 0 and allows eps_one to reach it. Triangles, where present: an upper bound on the eps_one model's E over the whole box (CERTIFIED), its capped head's BOS cap certified too, so eps_one(delta) is at most that value. Evidence: worst case of the frontier model at delta: SEARCH(lower bound) on that model's E, certified at the adversary's witness; no bound on eps*(delta), for which the model witnesses an upper bound only once its E is certified from above and its BOS cap over the whole box.
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
set key center right
set grid
set logscale xy
set format y '10^{%T}'
set xlabel '{/Symbol d} (BOS ceiling 1 - {/Symbol d})'
set ylabel 'worst case E of the capped model (SEARCH, lower bound)'
set title 'Theorem 2 frontiers'
plot data using ($1==1 ? $2 : 1/0):3 with linespoints linecolor 1 pointtype 7 title '{/Symbol e}_{all} (every head capped)', \
  data using ($1==0 ? $2 : 1/0):3 with linespoints linecolor 2 pointtype 5 title '{/Symbol e}_{one} (one head capped)', \
  data using ($1==0 ? $2 : 1/0):4 with points linecolor 3 pointtype 9 pointsize 1.5 title 'upper bound on E of the {/Symbol e}_{one} model (CERTIFIED)'
