# sinkcert figure script f3_theorem2_certified
# command_line: build/sinkcert appendix
# revision: a2897e73258f
# time_utc: 2026-12-07T12:27:38Z
# seed: 0
# precision: MPFI from 128 bits, raised by 64 while rounding limits a bound
# caption: F3: Theorem 2 certified (table T2c), the deep counterpart of F2: for each committed deep model, its worst-case loss E against 1 - min BOS mass of its sinking head (the head whose certified 1 - min BOS is smallest, named in the data), both certified over the whole content box, log-log. Each point is the geometric middle of the two enclosures and its error bars are the enclosures (a wide bar is a bound that did not close within its budget); the dashed line is 1 - min BOS = E, for orientation. Theorem 2 says that as E falls, some head's 1 - min BOS falls with it. Evidence: CERTIFIED (both axes, error bars = MPFI enclosures).
# gnuplot f3_theorem2_certified.gp renders f3_theorem2_certified.pdf; gnuplot -e "format='png'" f3_theorem2_certified.gp renders f3_theorem2_certified.png
data = 'f3_theorem2_certified.dat'
if (!exists("format")) format = 'pdf'
if (format eq 'png') {
  set terminal pngcairo size 900,600
} else {
  set terminal pdfcairo size 6in,4in font "Helvetica,10"
}
set output 'f3_theorem2_certified.'.format
set datafile missing '?'
set logscale xy
set format x '10^{%T}'
set format y '10^{%T}'
set xlabel 'worst-case loss E (CERTIFIED)'
set ylabel '1 - min BOS mass of the sinking head (CERTIFIED)'
set key top left
set grid
set samples 200
set offsets graph 0.04, graph 0.04, graph 0.04, graph 0.04
plot data using 9:($2 == 5 ? $10 : 1/0):5:6:7:8 with xyerrorbars pt 7 ps 0.8 title 'n = 5, L = 4', \
  '' using 9:($2 == 16 ? $10 : 1/0):5:6:7:8 with xyerrorbars pt 5 ps 0.8 title 'n = L = 16', \
  x with lines dt 2 lc rgb 'gray40' title '1 - min BOS = E'
