# Reference values for gymlens's statistics, computed with R.
# Run (apt-get install r-base-core):
#   Rscript analysis/testdata/make_refs.R > analysis/testdata/r_refs.json
# The Go tests read the JSON; they never run this script.
p <- c(0.010, 0.040, 0.030, 0.005, 0.200, 0.049, 0.700, 0.041, 0.041, 0.0001)
x <- c(3.1, 0.4, 2.2, 9.0, 5.5, 5.5, 1.0)
probs <- c(0, 0.025, 0.1, 0.25, 0.5, 0.75, 0.9, 0.975, 1)
num <- function(v) paste0("[", paste(sprintf("%.17g", v), collapse = ", "), "]")
cat("{\n")
cat(sprintf('  "r_version": "%s",\n', R.version.string))
cat(sprintf('  "p": %s,\n', num(p)))
cat(sprintf('  "holm": %s,\n', num(p.adjust(p, "holm"))))
cat(sprintf('  "bh": %s,\n', num(p.adjust(p, "BH"))))
cat(sprintf('  "quantile_x": %s,\n', num(x)))
cat(sprintf('  "quantile_p": %s,\n', num(probs)))
cat(sprintf('  "quantile_type7": %s,\n', num(quantile(x, probs, type = 7, names = FALSE))))
# The expanded percentile interval's lower level (Hesterberg 2015) for n clusters.
ns <- c(3, 5, 10, 30)
cat(sprintf('  "expanded_n": %s,\n', num(ns)))
cat(sprintf('  "expanded_alpha": %s\n', num(pnorm(-sqrt(ns / (ns - 1)) * qt(0.975, ns - 1)))))
cat("}\n")
