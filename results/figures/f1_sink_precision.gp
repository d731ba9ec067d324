# sinkcert figure script f1_sink_precision
# command_line: build/sinkcert appendix
# revision: a2897e73258f
# time_utc: 2026-12-07T12:28:03Z
# seed: 0
# precision: float, double, Float128 (113), MPFR 257 bits; MPFI adaptive from 64 bits, +64, 80 digits
# caption: F1: softmax sink family, n = 16, L = 16, triggers paper: 1 - min BOS mass against beta (log-log), the certified value (line, the midpoint of the MPFI enclosure of P1) and as computed in float, double, Float128 and 257-bit MPFR (points). A precision that computes 1 - BOS mass as 0 (it can no longer tell the BOS mass from 1) has no point there. The shaded region, beta > 39.4, is where the certified 1 - min BOS mass is below 2^-53 (the dashed horizontal line): double cannot tell the BOS mass from 1 there. Evidence: line CERTIFIED (enclosure width far below the line width); points NUMERIC(p).
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
set linetype 1 linecolor rgb '#0072B2' linewidth 1.5
set linetype 2 linecolor rgb '#D55E00' linewidth 1.5
set linetype 3 linecolor rgb '#009E73' linewidth 1.5
set linetype 4 linecolor rgb '#CC79A7' linewidth 1.5
set linetype 5 linecolor rgb '#E69F00' linewidth 1.5
set linetype 6 linecolor rgb '#56B4E9' linewidth 1.5
set linetype 7 linecolor rgb '#000000' linewidth 1.5
set linetype cycle 7
set logscale xy
set format y '10^{%T}'
set xlabel '{/Symbol b}'
set ylabel '1 - min_i a_{i0} (1 - min BOS mass)'
set xrange [4:400]
set yrange [1e-145:1]
set key top right opaque box
set grid
beta53 = 39.444850770779311
set object 1 rectangle from first beta53, graph 0 to graph 1, graph 1 behind fillcolor rgb '#D55E00' fillstyle transparent solid 0.12 noborder
set arrow 1 from first beta53, graph 0 to first beta53, graph 1 nohead linecolor rgb '#D55E00' dashtype 2
set arrow 2 from graph 0, first 2**-53 to graph 1, first 2**-53 nohead linecolor rgb '#D55E00' dashtype 2
set label 1 sprintf('double fails ({/Symbol b} > %.1f: 1 - a_{i0} < 2^{-53})', beta53) at first beta53*1.08, graph 0.06 left textcolor rgb '#D55E00'
plot data using 1:2 with lines linecolor 7 linewidth 2 title 'CERTIFIED (MPFI)', \
  '' using 1:3 with points linecolor 1 pointtype 4 pointsize 1.4 title 'float (24)', \
  '' using 1:4 with points linecolor 2 pointtype 6 pointsize 1.4 title 'double (53)', \
  '' using 1:5 with points linecolor 3 pointtype 8 pointsize 1.4 title 'Float128 (113)', \
  '' using 1:6 with points linecolor 4 pointtype 2 pointsize 1.4 title 'MPFR (257)'
