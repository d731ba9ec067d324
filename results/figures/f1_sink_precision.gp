# sinkcert figure script f1_sink_precision
# command_line: build/sinkcert appendix
# revision: 4a83afce0da5
# time_utc: 2026-12-01T22:03:55Z
# seed: 0
# precision: float, double, Float128 (113), MPFR 257 bits; MPFI adaptive from 64 bits, +64, 80 digits
# caption: F1: softmax sink family, n = 16, L = 16, triggers paper: 1 - min BOS mass against beta (log-log), the certified value (line, the midpoint of the MPFI enclosure of P1) and as computed in float, double, Float128 and 257-bit MPFR (points). A precision that computes 1 - BOS mass as 0 (it can no longer tell the BOS mass from 1) has no point there. Evidence: line CERTIFIED (enclosure width far below the line width); points NUMERIC(p).
# gnuplot f1_sink_precision.gp renders f1_sink_precision.pdf; gnuplot -e "format='png'" f1_sink_precision.gp renders f1_sink_precision.png
data = 'f1_sink_precision.dat'
if (!exists("format")) format = 'pdf'
if (format eq 'png') {
  set terminal pngcairo size 900,600
} else {
  set terminal pdfcairo size 6in,4in font "Helvetica,10"
}
set output 'f1_sink_precision.'.format
set datafile missing '?'
set logscale xy
set format y '10^{%T}'
set xlabel 'beta'
set ylabel '1 - min BOS mass'
set xrange [4:400]
set yrange [1e-145:1]
set key top right
set grid
plot data using 1:2 with lines lw 2 title 'CERTIFIED (MPFI)', \
  '' using 1:3 with points pt 4 ps 1.2 title 'float (24)', \
  '' using 1:4 with points pt 6 ps 1.2 title 'double (53)', \
  '' using 1:5 with points pt 8 ps 1.2 title 'Float128 (113)', \
  '' using 1:6 with points pt 2 ps 1.2 title 'MPFR (257)'
