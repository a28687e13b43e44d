#!/usr/bin/env bash
# Creates the venv of the LangChain adapter with pinned versions from PyPI:
#   target/framework-venvs/langchain-1.5.0/   langchain==1.5.0 (SummarizationMiddleware)
# Idempotent: a venv whose package already imports is left alone. Needs network once;
# the adapter itself runs offline (every LLM call goes to the harness).
set -euo pipefail
cd "$(dirname "$0")/../.."
source adapters/framework/venv.sh
make_framework_venv langchain-1.5.0 "langchain==1.5.0" \
  "langchain.agents.middleware.summarization" adapters/langchain/constraints/langchain-1.5.0.txt
