# sinkcert figure script nuance
# command_line: build/sinkcert theorem1 --n 32 --L 32 --threads 1 --out results/theorem1/n32_L32
# revision: 500c8f559201
# time_utc: 2026-12-06T16:01:03Z
# seed: 0
# precision: double
# caption: BOS mass against content scale (Theorem 1 study, single-layer softmax, n = 32, L = 32, triggers paper): the mean (solid) and minimum (dashed) non-trigger BOS mass over probes with their content multiplied by t, for the path model and two frontier models. Theorem 1 holds with high probability over the content: inputs whose content is near 0 need not sink, and a curve that fell towards t = 0 would show a model spending its BOS deficit there. Measured (mean, and min in parentheses, at the smallest and the largest t): path model 1 - 7.28e-10 (1 - 1.41e-09) at t = 0 and 1 - 7.43e-10 (1 - 2.07e-09) at t = 1; frontier delta=0.5 0.5 (0.2954) at t = 0 and 0.5 (0.2885) at t = 1; frontier delta=0.05 0.95 (0.9062) at t = 0 and 0.95 (0.8996) at t = 1. The mean BOS mass hardly depends on the content scale (it changes by at most 4.3e-05 over t): these models do not spend their BOS deficit on inputs with small content. Evidence: NUMERIC(53).
# gnuplot nuance.gp renders nuance.pdf; gnuplot -e "format='png'" nuance.gp renders nuance.png
data = 'nuance.dat'
if (!exists("format")) format = 'pdf'
if (format eq 'png') {
  set terminal pngcairo size 900,600
} else {
  set terminal pdfcairo size 6in,4in font "Helvetica,10"
}
set output 'nuance.'.format
set datafile missing '?'
set linetype 1 linecolor rgb '#0072B2' linewidth 1.5
set linetype 2 linecolor rgb '#D55E00' linewidth 1.5
set linetype 3 linecolor rgb '#009E73' linewidth 1.5
set linetype 4 linecolor rgb '#CC79A7' linewidth 1.5
set linetype 5 linecolor rgb '#E69F00' linewidth 1.5
set linetype 6 linecolor rgb '#56B4E9' linewidth 1.5
set linetype 7 linecolor rgb '#000000' linewidth 1.5
set linetype cycle 7
set key bottom left
set grid
set yrange [0:1.05]
set xlabel 'content scale t (content multiplied by t)'
set ylabel 'non-trigger BOS mass a_{i0}'
set title 'BOS mass against content scale (NUMERIC(53))'
plot data using ((strcol(1) eq 'path') ? $2 : 1/0):3 with linespoints linecolor 1 pointtype 7 pointsize 0.6 title 'path model: mean' noenhanced, \
  data using ((strcol(1) eq 'path') ? $2 : 1/0):4 with lines linecolor 1 dashtype 2 title 'path model: min' noenhanced, \
  data using ((strcol(1) eq 'frontier delta=0.05') ? $2 : 1/0):3 with linespoints linecolor 2 pointtype 7 pointsize 0.6 title 'frontier delta = 0.05: mean' noenhanced, \
  data using ((strcol(1) eq 'frontier delta=0.05') ? $2 : 1/0):4 with lines linecolor 2 dashtype 2 title 'frontier delta = 0.05: min' noenhanced, \
  data using ((strcol(1) eq 'frontier delta=0.5') ? $2 : 1/0):3 with linespoints linecolor 3 pointtype 7 pointsize 0.6 title 'frontier delta = 0.5: mean' noenhanced, \
  data using ((strcol(1) eq 'frontier delta=0.5') ? $2 : 1/0):4 with lines linecolor 3 dashtype 2 title 'frontier delta = 0.5: min' noenhanced
