# build/sinkcert appendix (revision 5b3c288279a0)
set terminal pdfcairo size 5in,3.2in font "Helvetica,10"
set output 'f1_sink_precision.pdf'
set datafile missing '?'
set logscale xy
set format y '10^{%T}'
set xlabel 'beta'
set ylabel '1 - min BOS mass'
set xrange [4:400]
set yrange [1e-145:1]
set key top right
set grid
plot 'f1_sink_precision.dat' using 1:2 with lines lw 2 title 'CERTIFIED (MPFI)', \
  '' using 1:3 with points pt 4 ps 1.2 title 'float (24)', \
  '' using 1:4 with points pt 6 ps 1.2 title 'double (53)', \
  '' using 1:5 with points pt 8 ps 1.2 title 'Float128 (113)', \
  '' using 1:6 with points pt 2 ps 1.2 title 'MPFR (257)'
