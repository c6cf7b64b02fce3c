#!/usr/bin/env bash
# Rebuilds the paper of docs/paper/paper.tex from the sample corpus and the
# images committed beside it: docs/paper/page-N.png (the paper's pages) and
# docs/figures/NAME.png (every figure as gymlens writes it). Needs TeX Live
# (pdflatex) and poppler-utils (pdftoppm). Run from the repository's root.
set -euo pipefail
cd "$(dirname "$0")/../.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -o "$work/gymlens" ./cmd/gymlens
"$work/gymlens" --quiet demo --out "$work/demo" >/dev/null
"$work/gymlens" --quiet --db "$work/demo/gymlens.duckdb" report --out "$work/report" --mark significance
cp docs/paper/paper.tex "$work/"
(cd "$work" && for pass in 1 2; do pdflatex -interaction=nonstopmode -halt-on-error "\def\reportdir{$work/report}\input{paper.tex}" >/dev/null; done)
if grep -qi "warning\|overfull\|underfull" "$work/paper.log"; then
	grep -i "warning\|overfull\|underfull" "$work/paper.log" >&2
	exit 1
fi
rm -f docs/paper/page-*.png
pdftoppm -r 80 -png "$work/paper.pdf" docs/paper/page
mkdir -p docs/figures
cp "$work"/report/figures/*.png docs/figures/
echo "wrote docs/paper/page-*.png and docs/figures/*.png"
