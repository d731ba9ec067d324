#!/usr/bin/env bash
# Compiles results/appendix.tex with pdflatex, the way a reader would
# (`pdflatex results/appendix.tex` from the repository root), into a
# temporary folder, and fails if any box is wider than the page. Installs Debian's texlive-latex-extra and texlive-science
# first if pdflatex or a package is missing (run as root). Not part of
# scripts/build.sh: TeX Live is large and only the appendix needs it.
# Usage: scripts/check_latex.sh [path/to/appendix.tex]
set -euo pipefail
cd "$(dirname "$0")/.."
doc="${1:-results/appendix.tex}"

packages=(texlive-latex-extra texlive-science)
bash scripts/install_packages.sh check_latex.sh "${packages[@]}"

if [ ! -f "$doc" ]; then
  echo "check_latex.sh: $doc not found; run: build/sinkcert appendix" >&2
  exit 2
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# twice, so that labels settle
for pass in 1 2; do
  if ! pdflatex -interaction=nonstopmode -halt-on-error -output-directory "$out" "$doc" \
       > "$out/pdflatex.log" 2>&1; then
    grep -E '^!' -A3 "$out/pdflatex.log" || tail -20 "$out/pdflatex.log"
    echo "check_latex.sh: FAILED ($doc, pass $pass)" >&2
    exit 1
  fi
done
grep -E 'Output written' "$out/pdflatex.log"
# legible as printed: no table or line wider than the page (tables are never
# scaled down, so a box too wide would run off the page)
log="$out/$(basename "${doc%.tex}").log"
if grep -q 'Overfull \\hbox' "$log"; then
  grep -A1 'Overfull \\hbox' "$log"
  echo "check_latex.sh: FAILED ($doc: a box is wider than the page)" >&2
  exit 1
fi
echo "check_latex.sh: OK ($doc compiles, nothing wider than the page)"
