// Command gymlens analyses proactive-agent evaluations offline: it loads
// run logs into one DuckDB warehouse, checks every record on the way in,
// and computes, from the warehouse, everything a paper reports.
//
// Usage:
//
//	gymlens [--db PATH] [--quiet] [--format table|json|csv] [--memory-limit LIMIT] COMMAND [ARGS]
//
// The warehouse is --db, else $GYMLENS_DB, else gymlens.duckdb in the
// working folder. Global flags may stand before or after the command.
//
// Commands:
//
//	demo       write the sample corpus, ingest it, print a summary and write the report
//	sample     write a synthetic Proactivity-Gym corpus in the run-log format
//	ingest     load run logs, scenario specs, ratings and PARE files into the warehouse (one transaction)
//	validate   check files as ingest would, without writing anything
//	score      rescore tasks from their trajectories; report disagreements with the logged values
//	judge      rerun LLM-as-judge scoring against OpenAI-compatible endpoints (cached)
//	metrics    the 3T metrics (or PARE's) with cluster-bootstrap intervals, by any breakdown
//	compare    paired differences between configurations (or harnesses), adjusted p-values
//	corr       correlations among the metrics, at run and configuration level
//	variance   where each metric's variance comes from, the ICC and the design effect
//	power      the minimum detectable effect of a design, and the scenarios a difference needs
//	rank       rank intervals, P(best) and the configurations tied with the best
//	agree      agreement: judge vs judge, judge vs humans, PARE's annotators, or any ratings file
//	human      the human-study analyses over checkpoint days
//	annotate   prepare human annotation: a stratified sample as a sheet to fill in
//	table      a paper table in LaTeX, Markdown, CSV or HTML
//	plot       a paper figure as PNG, SVG and PDF
//	report     every table and figure, an index.html and a manifest.json in one folder
//	notebook   run a literate analysis: Markdown whose sql and gymlens blocks are run
//	serve      a viewer in the browser: tables linked to their runs, the runs, each trajectory
//	decisions  PARE's decision points of the ingested PARE traces
//	reconcile  compare what PARE and Meta-ARE stored with what gymlens recomputes
//	export     write every table as Parquet or Arrow IPC
//	query      run read-only SQL against the warehouse
//	verify     check a report folder against its manifest and inputs by rebuilding it
//
// Exit status: 0 success, 1 bad input or environment, 2 bad usage.
//
// Example:
//
//	gymlens sample --out corpus --seed 7
//	gymlens --db runs.duckdb ingest corpus
//	gymlens --db runs.duckdb query "SELECT config_id, count(*) AS runs FROM run_view GROUP BY ALL ORDER BY ALL"
//	gymlens --db runs.duckdb metrics --by harness --resamples 1000
//	gymlens --db runs.duckdb table main --format latex --resamples 1000
package main
