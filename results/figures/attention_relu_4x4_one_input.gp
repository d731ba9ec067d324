# sinkcert figure script attention_relu_4x4_one_input
# command_line: build/sinkcert appendix
# revision: a2897e73258f
# time_utc: 2026-12-07T12:27:52Z
# seed: 20260311
# precision: double
# caption: Attention of softmax 4 x 4 (paper's recipe) and ReLU 4 x 4 (construction) on T(16, 16) with the trigger at 0-indexed position 7 (position 8 counted from 1): every head's attention, layer by layer (down) and head by head (across), on one probe input (the first of probe seed 20260311); query position i down, key position k across, colour scale 0..1, the causal upper triangle blank. Models: softmax 4 x 4 (paper's recipe): residual 4 x 4 softmax trained by the paper's recipe (Adam lr 0.0001, betas (0.9, 0.95), batch 128, MSE, init std 0.02, training seed 0, baseline kernel), stopped after 30000 steps at the step cap 30000, before the recipe's stop rule (a batch with l_inf error below 0.005) was met (that batch's l_inf error 0.009, NUMERIC(53)); committed as figure_models/paper_recipe_4x4.weights.json; ReLU 4 x 4 (construction): the weight file theorem3/relu_residual_4x4_n16.weights.json (relu, residual, n = 16, 4 layer(s) x 4 head(s)). Evidence: NUMERIC(53).
# gnuplot attention_relu_4x4_one_input.gp renders attention_relu_4x4_one_input.pdf; gnuplot -e "format='png'" attention_relu_4x4_one_input.gp renders attention_relu_4x4_one_input.png
data = 'attention_relu_4x4_one_input.dat'
if (!exists("format")) format = 'pdf'
if (format eq 'png') {
  set terminal pngcairo size 900,600
} else {
  set terminal pdfcairo size 6in,4in font "Helvetica,10"
}
set output 'attention_relu_4x4_one_input.'.format
set datafile missing '?'
# the grid: 4 row(s) x 8 column(s) of heat maps
if (format eq 'png') {
  set terminal pngcairo size 2123,1188 font "Helvetica,9"
} else {
  set terminal pdfcairo size 19.3in,10.8in font "Helvetica,8"
}
set output 'attention_relu_4x4_one_input.'.format
set palette defined (0 '#440154', 0.25 '#3b528b', 0.5 '#21918c', 0.75 '#5ec962', 1 '#fde725')
set cbrange [0:1]
set xrange [-0.5:15.5]
set yrange [15.5:-0.5]
set xtics 0,4 out nomirror
set ytics 0,4 out nomirror
set size ratio -1
set tmargin 3
set bmargin 3.5
set lmargin 7
set rmargin 1
unset key
unset colorbox
set multiplot title 'attention a_{ik} (query i down, key k across), trigger at position 7'
set origin 0,0.722222
set size 0.119171,0.240741
set title "softmax 4 x 4 (paper's recipe)\nlayer 0, head 0" noenhanced
set xlabel ''
set ylabel 'query i'
plot data every ::0::255 using 7:6:($7 > $6 ? NaN : $8) with image
set origin 0.119171,0.722222
set size 0.119171,0.240741
set title "softmax 4 x 4 (paper's recipe)\nlayer 0, head 1" noenhanced
set xlabel ''
set ylabel ''
plot data every ::256::511 using 7:6:($7 > $6 ? NaN : $8) with image
set origin 0.238342,0.722222
set size 0.119171,0.240741
set title "softmax 4 x 4 (paper's recipe)\nlayer 0, head 2" noenhanced
set xlabel ''
set ylabel ''
plot data every ::512::767 using 7:6:($7 > $6 ? NaN : $8) with image
set origin 0.357513,0.722222
set size 0.119171,0.240741
set title "softmax 4 x 4 (paper's recipe)\nlayer 0, head 3" noenhanced
set xlabel ''
set ylabel ''
plot data every ::768::1023 using 7:6:($7 > $6 ? NaN : $8) with image
set origin 0,0.481481
set size 0.119171,0.240741
set title "softmax 4 x 4 (paper's recipe)\nlayer 1, head 0" noenhanced
set xlabel ''
set ylabel 'query i'
plot data every ::1024::1279 using 7:6:($7 > $6 ? NaN : $8) with image
set origin 0.119171,0.481481
set size 0.119171,0.240741
set title "softmax 4 x 4 (paper's recipe)\nlayer 1, head 1" noenhanced
set xlabel ''
set ylabel ''
plot data every ::1280::1535 using 7:6:($7 > $6 ? NaN : $8) with image
set origin 0.238342,0.481481
set size 0.119171,0.240741
set title "softmax 4 x 4 (paper's recipe)\nlayer 1, head 2" noenhanced
set xlabel ''
set ylabel ''
plot data every ::1536::1791 using 7:6:($7 > $6 ? NaN : $8) with image
set origin 0.357513,0.481481
set size 0.119171,0.240741
set title "softmax 4 x 4 (paper's recipe)\nlayer 1, head 3" noenhanced
set xlabel ''
set ylabel ''
plot data every ::1792::2047 using 7:6:($7 > $6 ? NaN : $8) with image
set origin 0,0.240741
set size 0.119171,0.240741
set title "softmax 4 x 4 (paper's recipe)\nlayer 2, head 0" noenhanced
set xlabel ''
set ylabel 'query i'
plot data every ::2048::2303 using 7:6:($7 > $6 ? NaN : $8) with image
set origin 0.119171,0.240741
set size 0.119171,0.240741
set title "softmax 4 x 4 (paper's recipe)\nlayer 2, head 1" noenhanced
set xlabel ''
set ylabel ''
plot data every ::2304::2559 using 7:6:($7 > $6 ? NaN : $8) with image
set origin 0.238342,0.240741
set size 0.119171,0.240741
set title "softmax 4 x 4 (paper's recipe)\nlayer 2, head 2" noenhanced
set xlabel ''
set ylabel ''
plot data every ::2560::2815 using 7:6:($7 > $6 ? NaN : $8) with image
set origin 0.357513,0.240741
set size 0.119171,0.240741
set title "softmax 4 x 4 (paper's recipe)\nlayer 2, head 3" noenhanced
set xlabel ''
set ylabel ''
plot data every ::2816::3071 using 7:6:($7 > $6 ? NaN : $8) with image
set origin 0,1.11022e-16
set size 0.119171,0.240741
set title "softmax 4 x 4 (paper's recipe)\nlayer 3, head 0" noenhanced
set xlabel 'key k'
set ylabel 'query i'
plot data every ::3072::3327 using 7:6:($7 > $6 ? NaN : $8) with image
set origin 0.119171,1.11022e-16
set size 0.119171,0.240741
set title "softmax 4 x 4 (paper's recipe)\nlayer 3, head 1" noenhanced
set xlabel 'key k'
set ylabel ''
plot data every ::3328::3583 using 7:6:($7 > $6 ? NaN : $8) with image
set origin 0.238342,1.11022e-16
set size 0.119171,0.240741
set title "softmax 4 x 4 (paper's recipe)\nlayer 3, head 2" noenhanced
set xlabel 'key k'
set ylabel ''
plot data every ::3584::3839 using 7:6:($7 > $6 ? NaN : $8) with image
set origin 0.357513,1.11022e-16
set size 0.119171,0.240741
set title "softmax 4 x 4 (paper's recipe)\nlayer 3, head 3" noenhanced
set xlabel 'key k'
set ylabel ''
plot data every ::3840::4095 using 7:6:($7 > $6 ? NaN : $8) with image
set origin 0.476684,0.722222
set size 0.119171,0.240741
set title "ReLU 4 x 4 (construction)\nlayer 0, head 0" noenhanced
set xlabel ''
set ylabel ''
plot data every ::4096::4351 using 7:6:($7 > $6 ? NaN : $8) with image
set origin 0.595855,0.722222
set size 0.119171,0.240741
set title "ReLU 4 x 4 (construction)\nlayer 0, head 1" noenhanced
set xlabel ''
set ylabel ''
plot data every ::4352::4607 using 7:6:($7 > $6 ? NaN : $8) with image
set origin 0.715026,0.722222
set size 0.119171,0.240741
set title "ReLU 4 x 4 (construction)\nlayer 0, head 2" noenhanced
set xlabel ''
set ylabel ''
plot data every ::4608::4863 using 7:6:($7 > $6 ? NaN : $8) with image
set origin 0.834197,0.722222
set size 0.119171,0.240741
set title "ReLU 4 x 4 (construction)\nlayer 0, head 3" noenhanced
set xlabel ''
set ylabel ''
plot data every ::4864::5119 using 7:6:($7 > $6 ? NaN : $8) with image
set origin 0.476684,0.481481
set size 0.119171,0.240741
set title "ReLU 4 x 4 (construction)\nlayer 1, head 0" noenhanced
set xlabel ''
set ylabel ''
plot data every ::5120::5375 using 7:6:($7 > $6 ? NaN : $8) with image
set origin 0.595855,0.481481
set size 0.119171,0.240741
set title "ReLU 4 x 4 (construction)\nlayer 1, head 1" noenhanced
set xlabel ''
set ylabel ''
plot data every ::5376::5631 using 7:6:($7 > $6 ? NaN : $8) with image
set origin 0.715026,0.481481
set size 0.119171,0.240741
set title "ReLU 4 x 4 (construction)\nlayer 1, head 2" noenhanced
set xlabel ''
set ylabel ''
plot data every ::5632::5887 using 7:6:($7 > $6 ? NaN : $8) with image
set origin 0.834197,0.481481
set size 0.119171,0.240741
set title "ReLU 4 x 4 (construction)\nlayer 1, head 3" noenhanced
set xlabel ''
set ylabel ''
plot data every ::5888::6143 using 7:6:($7 > $6 ? NaN : $8) with image
set origin 0.476684,0.240741
set size 0.119171,0.240741
set title "ReLU 4 x 4 (construction)\nlayer 2, head 0" noenhanced
set xlabel ''
set ylabel ''
plot data every ::6144::6399 using 7:6:($7 > $6 ? NaN : $8) with image
set origin 0.595855,0.240741
set size 0.119171,0.240741
set title "ReLU 4 x 4 (construction)\nlayer 2, head 1" noenhanced
set xlabel ''
set ylabel ''
plot data every ::6400::6655 using 7:6:($7 > $6 ? NaN : $8) with image
set origin 0.715026,0.240741
set size 0.119171,0.240741
set title "ReLU 4 x 4 (construction)\nlayer 2, head 2" noenhanced
set xlabel ''
set ylabel ''
plot data every ::6656::6911 using 7:6:($7 > $6 ? NaN : $8) with image
set origin 0.834197,0.240741
set size 0.119171,0.240741
set title "ReLU 4 x 4 (construction)\nlayer 2, head 3" noenhanced
set xlabel ''
set ylabel ''
plot data every ::6912::7167 using 7:6:($7 > $6 ? NaN : $8) with image
set origin 0.476684,1.11022e-16
set size 0.119171,0.240741
set title "ReLU 4 x 4 (construction)\nlayer 3, head 0" noenhanced
set xlabel 'key k'
set ylabel ''
plot data every ::7168::7423 using 7:6:($7 > $6 ? NaN : $8) with image
set origin 0.595855,1.11022e-16
set size 0.119171,0.240741
set title "ReLU 4 x 4 (construction)\nlayer 3, head 1" noenhanced
set xlabel 'key k'
set ylabel ''
plot data every ::7424::7679 using 7:6:($7 > $6 ? NaN : $8) with image
set origin 0.715026,1.11022e-16
set size 0.119171,0.240741
set title "ReLU 4 x 4 (construction)\nlayer 3, head 2" noenhanced
set xlabel 'key k'
set ylabel ''
plot data every ::7680::7935 using 7:6:($7 > $6 ? NaN : $8) with image
set origin 0.834197,1.11022e-16
set size 0.119171,0.240741
set title "ReLU 4 x 4 (construction)\nlayer 3, head 3" noenhanced
set xlabel 'key k'
set ylabel ''
set colorbox user origin 0.966321,0.15 size 0.0103627,0.7
plot data every ::7936::8191 using 7:6:($7 > $6 ? NaN : $8) with image
unset multiplot
