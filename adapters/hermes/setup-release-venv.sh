#!/usr/bin/env bash
# Creates the venv of one Hermes release of the version matrix, or of all of them:
#   setup-release-venv.sh DIST VERSION   -> target/hermes-venvs/DIST-VERSION/
#   setup-release-venv.sh --all          -> every release of adapters/hermes/releases.tsv
#   setup-release-venv.sh --pin DIST VERSION
#       writes adapters/hermes/constraints/DIST-VERSION.txt: the release and every
#       transitive dependency at the newest version uploaded before the release itself
#       (its upload time in releases.tsv), so the venv is what a user had on that day.
# A venv is installed from its constraints file only (every package pinned), needs the
# network once, and is left alone when its package already imports. The adapters run it
# offline. Installs with uv when it is on PATH (or $UV), else with pip. Every venv, new or
# already there, gets its bytecode compiled: uv does not compile by default and with
# PYTHONDONTWRITEBYTECODE set no run writes it, so each child compiled every module it
# imported (8 of the 21 s of CPU a cold iot 0.21.3.post1 child spent on one case).
# Exit 0 when every venv asked for imports; 1 otherwise (each failure printed with why).
set -uo pipefail
cd "$(dirname "$0")/../.."
root="${HERMES_VENVS:-target/hermes-venvs}"
releases=adapters/hermes/releases.tsv
uv="${UV:-$(command -v uv || true)}"
mkdir -p "$root"

upload_time() { awk -F'\t' -v d="$1" -v v="$2" '$1==d && $2==v {print $3}' "$releases"; }

pin() {
  local dist="$1" version="$2" at out cutoff
  at="$(upload_time "$dist" "$version")"
  [ -n "$at" ] || { echo "error: $dist $version is not in $releases" >&2; return 1; }
  [ -n "$uv" ] || { echo "error: --pin needs uv (set UV=/path/to/uv)" >&2; return 1; }
  out="adapters/hermes/constraints/$dist-$version.txt"
  # The release's own wheel was uploaded at $at: the cutoff is one minute later, which no
  # dependency release of the same minute changes in practice.
  cutoff="$(python3 -c 'import datetime,sys; t=datetime.datetime.fromisoformat(sys.argv[1].replace("Z","+00:00")); print((t+datetime.timedelta(minutes=1)).strftime("%Y-%m-%dT%H:%M:%SZ"))' "$at")"
  {
    echo "# $dist==$version and its dependencies as resolved on PyPI at its upload time $at"
    echo "# (setup-release-venv.sh --pin: uv pip compile --exclude-newer $cutoff, Python 3.11)."
    echo "$dist==$version" | "$uv" pip compile - --exclude-newer "$cutoff" --python-version 3.11 \
      --no-header --no-annotate --quiet
  } > "$out.tmp" && mv "$out.tmp" "$out" && echo "pinned: $out"
}

# Writes the .pyc of every module of venv $1 (a no-op for the ones already current).
compile_bytecode() {
  local purelib
  purelib="$("$1/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')" &&
    env -u PYTHONDONTWRITEBYTECODE "$1/bin/python" -m compileall -q "$purelib" >/dev/null
}

make_venv() {
  local dist="$1" version="$2" dir="$root/$1-$2" constraints="adapters/hermes/constraints/$1-$2.txt"
  if [ -x "$dir/bin/python" ] && "$dir/bin/python" -c "import agent.context_compressor" 2>/dev/null; then
    compile_bytecode "$dir" || { echo "cannot compile the bytecode of $dir"; return 1; }
    echo "ok: $dir"
    return 0
  fi
  # The two releases of setup-venv.sh keep their constraints under their short names.
  [ -f "$constraints" ] || constraints="adapters/hermes/constraints/hermes${dist#hermes-agent}-$version.txt"
  [ -f "$constraints" ] || { echo "cannot install $dist $version: no $constraints (run --pin)"; return 1; }
  rm -rf "$dir"
  # uv installs into a venv without pip of its own (ensurepip is the slow part of a venv).
  local without_pip=()
  [ -n "$uv" ] && without_pip=(--without-pip)
  python3 -m venv "${without_pip[@]}" "$dir" || { echo "cannot install $dist $version: venv creation failed"; return 1; }
  local log="$dir/install.log"
  if [ -n "$uv" ]; then
    "$uv" pip install --python "$dir/bin/python" --no-deps -r "$constraints" >"$log" 2>&1
  else
    "$dir/bin/pip" install --disable-pip-version-check --no-deps -r "$constraints" >"$log" 2>&1
  fi || { echo "cannot install $dist $version: $(tail -n 3 "$log" | tr '\n' ' ')"; return 1; }
  "$dir/bin/python" -c "import agent.context_compressor" >>"$log" 2>&1 \
    || { echo "cannot install $dist $version: agent.context_compressor does not import: $(tail -n 1 "$log")"; return 1; }
  compile_bytecode "$dir" || { echo "cannot install $dist $version: bytecode compilation failed"; return 1; }
  echo "created: $dir"
}

case "${1:-}" in
  --pin) pin "$2" "$3" ;;
  --all)
    rc=0
    while IFS=$'\t' read -r dist version _; do
      case "$dist" in ''|'#'*) continue ;; esac
      make_venv "$dist" "$version" || rc=1
    done < "$releases"
    exit $rc ;;
  ''|-h|--help) sed -n '2,15p' "$0"; exit 0 ;;
  *) make_venv "$1" "$2" ;;
esac
