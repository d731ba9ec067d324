set datafile separator ','
set key top right
set grid
set logscale xy
set xlabel 'delta (mean BOS <= 1 - delta)'
set ylabel 'eps(delta)'
set title sprintf('Frontier (SEARCH): slope %.3f +- %.3f', 0.91236086216190171, 0.014300065971179837)
set key top left
plot 'frontier.csv' using 1:($5==1 ? $3 : 1/0) with linespoints pt 7 title 'eps(delta)'
