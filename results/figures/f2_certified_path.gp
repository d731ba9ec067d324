# sinkcert figure script f2_certified_path
# command_line: build/sinkcert appendix
# revision: a2897e73258f
# time_utc: 2026-12-07T12:27:31Z
# seed: 0
# precision: MPFI from 128 bits, raised by 64 while rounding limits a bound
# caption: F2: the certified path (table C1): 1 - min BOS mass against the worst-case loss E, both certified over the whole content box, log-log. Each point is the geometric middle of the two enclosures and its error bars are the enclosures; the dashed line is 1 - min BOS = E, on which the softmax sink family lies. Both fall together from the double search's models to the MPFR continuation far below double (over so many decades the bars are mostly shorter than the symbols). Evidence: CERTIFIED (both axes, error bars = MPFI enclosures).
# gnuplot f2_certified_path.gp renders f2_certified_path.pdf; gnuplot -e "format='png'" f2_certified_path.gp renders f2_certified_path.png
data = 'f2_certified_path.dat'
if (!exists("format")) format = 'pdf'
if (format eq 'png') {
  set terminal pngcairo size 900,600
} else {
  set terminal pdfcairo size 6in,4in font "Helvetica,10"
}
set output 'f2_certified_path.'.format
set datafile missing '?'
set logscale xy
set format x '10^{%T}'
set format y '10^{%T}'
set xlabel 'worst-case loss E (CERTIFIED)'
set ylabel '1 - min BOS mass (CERTIFIED)'
set key top left
set grid
set samples 200
set offsets graph 0.04, graph 0.04, graph 0.04, graph 0.04
plot data using 7:($2 == 5 ? $8 : 1/0):3:4:5:6 with xyerrorbars pt 7 ps 0.8 title 'n = 5, L = 4', \
  '' using 7:($2 == 16 ? $8 : 1/0):3:4:5:6 with xyerrorbars pt 5 ps 0.8 title 'n = L = 16', \
  x with lines dt 2 lc rgb 'gray40' title '1 - min BOS = E (sink family)'
