set datafile separator ','
set key top right
set grid
set xlabel 'content scale t (content multiplied by t)'
set ylabel 'BOS mass'
set key bottom right
set title 'BOS mass against content (NUMERIC(53))'
plot 'nuance.csv' using ((strcol(1) eq 'path') ? $2 : 1/0):3 with linespoints title 'path model: mean', 'nuance.csv' using ((strcol(1) eq 'frontier delta=0.05') ? $2 : 1/0):3 with linespoints title 'delta=0.05: mean', 'nuance.csv' using ((strcol(1) eq 'frontier delta=0.5') ? $2 : 1/0):3 with linespoints title 'delta=0.5: mean', 'nuance.csv' using ((strcol(1) eq 'frontier delta=0.5') ? $2 : 1/0):4 with lines dashtype 2 title 'delta=0.5: min'
