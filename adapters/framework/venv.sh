# Sourced by adapters/langchain/setup-venv.sh and adapters/adk/setup-venv.sh (run from the
# repository root): `make_framework_venv NAME PIN MODULE CONSTRAINTS` creates
# ${FRAMEWORK_VENVS:-target/framework-venvs}/NAME with PIN installed under CONSTRAINTS
# (every transitive dependency pinned, so a new release of one of them cannot change what
# the real code does under the harness), unless a venv there already imports MODULE.
make_framework_venv() {
  local name="$1" pin="$2" module="$3" constraints="$4"
  local dir="${FRAMEWORK_VENVS:-target/framework-venvs}/$name"
  if [ -x "$dir/bin/python" ] && "$dir/bin/python" -c "import $module" 2>/dev/null; then
    echo "ok: $dir ($pin)"
    return
  fi
  mkdir -p "$(dirname "$dir")"
  python3 -m venv "$dir"
  "$dir/bin/pip" install --quiet --disable-pip-version-check -c "$constraints" "$pin"
  "$dir/bin/python" -c "import $module"
  echo "created: $dir ($pin)"
}
