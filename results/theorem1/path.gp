set datafile separator ','
set key top right
set grid
set logscale y
set format y '10^{%T}'
set xlabel 'round'
set ylabel 'value'
set title 'Theorem 1 descent path: worst case (SEARCH, lower bound) and 1 - mean BOS (NUMERIC(53))'
plot for [s=0:2] 'path.csv' using ($1==s ? $2 : 1/0):5 with linespoints title sprintf('worst case, start %d', s), for [s=0:2] 'path.csv' using ($1==s ? $2 : 1/0):(1-$8) with lines dashtype 2 title sprintf('1 - mean BOS, start %d', s)
