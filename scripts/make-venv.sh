#!/bin/sh
# scripts/make-venv.sh DIR [PYTHON]: makes the venv DIR for `make install` (and the bench's):
# from PYTHON when given (make's PYTHON=...), else from the system's /usr/bin/python3 on Linux
# when it is Python 3.11 or later and its venv has pip, else from python3 on the PATH.
#
# Why the system's first: Debian's, Ubuntu's and Fedora's python3 are built with profile-guided
# and link-time optimization, as the action's image's is (python:3.11-slim, built with
# --enable-optimizations --with-lto). pyenv and a plain ./configure build with neither, and on
# one machine ran our scoring of recorded rows 12-20% and the suite's CPU about 8% slower than
# Debian's python3 (docs/performance.md, 2026-12-02 fifth): the tests and the bench then measure
# an interpreter slower than the one the action's users get.
#
# Not on macOS: its /usr/bin/python3 is a stub that may ask to install the developer tools.
set -eu
dir=$1
python=${2:-}
if [ -z "$python" ]; then
  system=/usr/bin/python3
  if [ "$(uname -s)" = Linux ] && [ -x "$system" ] \
    && "$system" -c 'import sys; sys.exit(sys.version_info < (3, 11))' >/dev/null 2>&1; then
    existed=$([ -e "$dir" ] && echo yes || echo no)
    # Debian leaves ensurepip out unless python3-venv is installed: only a venv with pip counts.
    if "$system" -m venv "$dir" >/dev/null 2>&1 && "$dir/bin/python" -m pip --version >/dev/null 2>&1; then
      echo "made $dir from $system ($("$dir/bin/python" -c 'import platform; print(platform.python_version())'))"
      exit 0
    fi
    [ "$existed" = yes ] || rm -rf "$dir"
  fi
  python=python3
fi
"$python" -m venv "$dir"
echo "made $dir from $python ($("$dir/bin/python" -c 'import platform; print(platform.python_version())'))"
