#!/bin/sh
# Prints the interpreter `make install` makes .venv from (PYTHON=... on make's command line
# overrides it): the system's /usr/bin/python3 on Linux when it is Python 3.11 or later and
# makes a venv with pip, else python3 from the PATH.
#
# Why the system's first: Debian's, Ubuntu's and Fedora's python3 are built with profile-guided
# and link-time optimization, as the action's image's is (python:3.11-slim, built with
# --enable-optimizations --with-lto). pyenv and a plain ./configure build with neither, and on
# one machine ran our scoring of recorded rows 12-20% and the suite's CPU about 8% slower than
# Debian's python3 (docs/performance.md, 2026-12-02 fifth): the tests and the bench then measure
# an interpreter slower than the one the action's users get.
#
# Not on macOS: its /usr/bin/python3 is a stub that may ask to install the developer tools.
set -u
candidate=/usr/bin/python3
if [ "$(uname -s)" = Linux ] && [ -x "$candidate" ] \
  && "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 11))' >/dev/null 2>&1; then
  # Debian leaves ensurepip out unless python3-venv is installed: only a venv made with pip counts.
  trial=$(mktemp -d) || { echo python3; exit 0; }
  if "$candidate" -m venv "$trial/venv" >/dev/null 2>&1 && "$trial/venv/bin/python" -m pip --version >/dev/null 2>&1; then
    rm -rf "$trial"
    echo "$candidate"
    exit 0
  fi
  rm -rf "$trial"
fi
echo python3
