# sinkcert figure script nuance
# command_line: build/sinkcert theorem1 --n 16 --L 16 --seed 0 --threads 2 --out results/theorem1
# revision: d9e262f2d00d
# time_utc: 2026-12-01T14:13:11Z
# seed: 0
# precision: double
# caption: BOS mass against content scale (Theorem 1 study, single-layer softmax, n = 16, L = 16, triggers paper): probes with their content multiplied by t, for the path model and two frontier models; inputs with small content need no sink. Evidence: NUMERIC(53).
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
set key bottom right
set grid
set xlabel 'content scale t (content multiplied by t)'
set ylabel 'BOS mass'
set title 'BOS mass against content (NUMERIC(53))'
plot data using ((strcol(1) eq 'path') ? $2 : 1/0):3 with linespoints title 'path model: mean', \
  data using ((strcol(1) eq 'frontier delta=0.05') ? $2 : 1/0):3 with linespoints title 'delta=0.05: mean', \
  data using ((strcol(1) eq 'frontier delta=0.5') ? $2 : 1/0):3 with linespoints title 'delta=0.5: mean', \
  data using ((strcol(1) eq 'frontier delta=0.5') ? $2 : 1/0):4 with lines dashtype 2 title 'delta=0.5: min'
