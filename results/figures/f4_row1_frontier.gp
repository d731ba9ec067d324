# sinkcert figure script f4_row1_frontier
# command_line: build/sinkcert appendix
# revision: a2897e73258f
# time_utc: 2026-12-07T12:27:48Z
# seed: 0
# precision: MPFI 128 bits
# caption: F4: the row-1 frontier (Q1): the certified lower curve g(delta) (every model) and the certified loss U_cert(delta) of the upper family's model, against delta (log-log), at n = 5, L = 4 and n = L = 16; eps*_1(delta) lies between the two curves of each size. Evidence: CERTIFIED (g rounded down, U_cert rounded up).
# gnuplot f4_row1_frontier.gp renders f4_row1_frontier.pdf; gnuplot -e "format='png'" f4_row1_frontier.gp renders f4_row1_frontier.png
data = 'f4_row1_frontier.dat'
if (!exists("format")) format = 'pdf'
if (format eq 'png') {
  set terminal pngcairo size 900,600
} else {
  set terminal pdfcairo size 6in,4in font "Helvetica,10"
}
set output 'f4_row1_frontier.'.format
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
set xlabel '{/Symbol d} (row-1 deficit)'
set ylabel 'worst-case loss E'
set key bottom right opaque box
set grid
plot data using 1:2 with linespoints linecolor 1 pointtype 6 title 'g, n = 5, L = 4', \
  '' using 1:3 with linespoints linecolor 1 dashtype 2 pointtype 4 title 'U_{cert}, n = 5, L = 4', \
  '' using 1:4 with linespoints linecolor 2 pointtype 6 title 'g, n = 16, L = 16', \
  '' using 1:5 with linespoints linecolor 2 dashtype 2 pointtype 4 title 'U_{cert}, n = 16, L = 16'
