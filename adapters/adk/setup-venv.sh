#!/usr/bin/env bash
# Creates the venv of the Google ADK adapter with pinned versions from PyPI:
#   target/framework-venvs/adk-2.13.0/   google-adk==2.13.0 (apps/compaction.py)
# Idempotent: a venv whose package already imports is left alone. Needs network once;
# the adapter itself runs offline (every LLM call goes to the harness).
set -euo pipefail
cd "$(dirname "$0")/../.."
source adapters/framework/venv.sh
make_framework_venv adk-2.13.0 "google-adk==2.13.0" \
  "google.adk.apps.compaction" adapters/adk/constraints/adk-2.13.0.txt
