# sinkcert figure script attention_paper_recipe_mean_std
# command_line: build/sinkcert appendix
# revision: a2897e73258f
# time_utc: 2026-12-07T12:27:51Z
# seed: 20260311
# precision: double
# caption: Attention of softmax (paper's recipe) and ReLU (construction) on T(16, 16) with the trigger at 0-indexed position 7 (position 8 counted from 1): the mean and the standard deviation (population form) of each head's attention matrix over 1000 probe inputs (probe seed 20260311); query position i down, key position k across, colour scale 0..1, the causal upper triangle blank. Models: softmax (paper's recipe): single-layer softmax trained by the paper's recipe (Adam lr 0.001, betas (0.9, 0.95), batch 128, MSE, init std 0.02, training seed 0, baseline kernel), stopped after 651 steps by the recipe's stop rule, at the first batch whose l_inf error is below 0.005 (that batch's l_inf error 0.00466, NUMERIC(53)); committed as figure_models/paper_recipe_1x1.weights.json; ReLU (construction): Theorem 3's single-layer ReLU construction (exact weights, M = I, scores read the trigger and ordinary flags). Evidence: NUMERIC(53).
# gnuplot attention_paper_recipe_mean_std.gp renders attention_paper_recipe_mean_std.pdf; gnuplot -e "format='png'" attention_paper_recipe_mean_std.gp renders attention_paper_recipe_mean_std.png
data = 'attention_paper_recipe_mean_std.dat'
if (!exists("format")) format = 'pdf'
if (format eq 'png') {
  set terminal pngcairo size 900,600
} else {
  set terminal pdfcairo size 6in,4in font "Helvetica,10"
}
set output 'attention_paper_recipe_mean_std.'.format
set datafile missing '?'
# the grid: 1 row(s) x 4 column(s) of heat maps
if (format eq 'png') {
  set terminal pngcairo size 1111,308 font "Helvetica,9"
} else {
  set terminal pdfcairo size 10.1in,2.8in font "Helvetica,8"
}
set output 'attention_paper_recipe_mean_std.'.format
set palette defined (0 '#440154', 0.25 '#3b528b', 0.5 '#21918c', 0.75 '#5ec962', 1 '#fde725')
set cbrange [0:1]
set xrange [-0.5:15.5]
set yrange [15.5:-0.5]
set xtics 0,4 out nomirror
set ytics 0,4 out nomirror
set size ratio -1
set tmargin 2
set bmargin 3.5
set lmargin 7
set rmargin 1
unset key
unset colorbox
set multiplot title 'attention a_{ik} (query i down, key k across), trigger at position 7'
set origin 0,-1.11022e-16
set size 0.227723,0.857143
set title 'softmax (paper''s recipe): mean' noenhanced
set xlabel 'key k'
set ylabel 'query i'
plot data every ::0::255 using 7:6:($7 > $6 ? NaN : $8) with image
set origin 0.227723,-1.11022e-16
set size 0.227723,0.857143
set title 'softmax (paper''s recipe): std' noenhanced
set xlabel 'key k'
set ylabel ''
plot data every ::256::511 using 7:6:($7 > $6 ? NaN : $8) with image
set origin 0.455446,-1.11022e-16
set size 0.227723,0.857143
set title 'ReLU (construction): mean' noenhanced
set xlabel 'key k'
set ylabel ''
plot data every ::512::767 using 7:6:($7 > $6 ? NaN : $8) with image
set origin 0.683168,-1.11022e-16
set size 0.227723,0.857143
set title 'ReLU (construction): std' noenhanced
set xlabel 'key k'
set ylabel ''
set colorbox user origin 0.935644,0.15 size 0.019802,0.7
plot data every ::768::1023 using 7:6:($7 > $6 ? NaN : $8) with image
unset multiplot
