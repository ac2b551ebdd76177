#!/usr/bin/env bash
# Installs what commsim needs on Debian 12 (apt-get when root; otherwise prints the apt-get line and stops).
# Sourced by quickstart.sh and test.sh; COMMSIM_EXTRA_PACKAGES adds packages (test.sh: the report test's).
set -euo pipefail
COMMSIM_PACKAGES=(g++ cmake ninja-build libboost-graph-dev libeigen3-dev libtomlplusplus-dev doctest-dev
                  nlohmann-json3-dev libcli11-dev python3-jsonschema ${COMMSIM_EXTRA_PACKAGES:-})
missing=()
for p in "${COMMSIM_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -eq 0 ]; then
    echo "setup: installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  else
    echo "setup: missing packages. Run this, then try again:" >&2
    echo "  sudo apt-get install -y ${missing[*]}" >&2
    exit 1
  fi
fi
