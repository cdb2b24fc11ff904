# Draws the benchmark's medians (medians.dat, written by testdata/bench/main.go) as chart.png: one panel
# without GPUs, one with a GPU per container (nogpu / gpu say which were run).
# Call: gnuplot -e 'dat="…/medians.dat"; out="…/chart.png"; nogpu=1; gpu=1' testdata/bench/chart.gp
set terminal pngcairo size (nogpu + gpu) * 600,500 font ",11"
set output out
set multiplot layout 1,(nogpu + gpu) title 'yarn-am vs DistributedShell on the mini cluster (medians; every container runs "true")'
set xlabel "containers (256 MiB, 1 vcore)"
set ylabel "seconds from submit"
set xtics (8, 16, 32)
set logscale x 2
set xrange [6:40]
set yrange [0:*]
set grid
set key top left
set style line 1 lc rgb "#1b9e77" lw 2 pt 7
set style line 2 lc rgb "#d95f02" lw 2 pt 5
if (nogpu) {
  set title "no GPU"
  plot dat using 1:2 with linespoints ls 1 title "yarn-am: all started", \
       dat using 1:3 with linespoints ls 2 title "DistributedShell: all started", \
       dat using 1:4 with linespoints ls 1 dt 2 title "yarn-am: finished", \
       dat using 1:5 with linespoints ls 2 dt 2 title "DistributedShell: finished"
}
if (gpu) {
  set title "1 yarn.io/gpu per container (8 GPUs in the cluster)"
  plot dat using 1:6 with linespoints ls 1 title "yarn-am: all started", \
       dat using 1:7 with linespoints ls 2 title "DistributedShell: all started", \
       dat using 1:8 with linespoints ls 1 dt 2 title "yarn-am: finished", \
       dat using 1:9 with linespoints ls 2 dt 2 title "DistributedShell: finished"
}
unset multiplot
