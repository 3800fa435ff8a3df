#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Installs the build into a fresh prefix, builds tests/install/consumer and examples/hello_rmm against
# it, runs both and checks the installed shim is stripped;
# then runs a program under the installed shim with the installed rmm-run, and replays a log with
# the installed rmm-replay.
# Usage: run_install_test.sh BUILD_DIR CONSUMER_SOURCE_DIR WORK_DIR [CMAKE_ARGS...]
# Uses the cmake on PATH, so the same test runs where the build was carried to another machine.
# CMAKE_ARGS reach the consumer's configure (a sanitizer build passes its flags: its librmm.a is
# instrumented).
set -eu
build_dir=$1
source_dir=$2
work_dir=$3
shift 3
rm -rf "$work_dir"
cmake --install "$build_dir" --prefix "$work_dir/prefix"
cmake -S "$source_dir" -B "$work_dir/build" -G Ninja -DCMAKE_PREFIX_PATH="$work_dir/prefix" -DCMAKE_BUILD_TYPE=Release "$@"
cmake --build "$work_dir/build"
"$work_dir/build/consumer"
# The example a user copies builds on its own against the installed package, and runs.
cmake -S "$(dirname "$0")/../../examples/hello_rmm" -B "$work_dir/hello" -G Ninja -DCMAKE_PREFIX_PATH="$work_dir/prefix" \
  -DCMAKE_BUILD_TYPE=Release "$@"
cmake --build "$work_dir/hello"
"$work_dir/hello/hello_rmm"
# The installed package carries no debug information (RMM_INSTALL_DEBUG_INFO=OFF): a preload shim of
# a few MB, not tens.
shim_bytes=$(wc -c < "$work_dir/prefix/lib/librmm_shim.so")
if [ "$shim_bytes" -gt 8000000 ]; then
  echo "the installed librmm_shim.so has $shim_bytes bytes; expected it stripped (under 8 MB)"
  exit 1
fi
echo "installed librmm_shim.so: $shim_bytes bytes"
# The installed rmm-run finds the installed shim and runs a program under it. A sanitizer build's
# shim needs the sanitizer's runtime preloaded in front of it (rmm-run keeps it there).
LD_PRELOAD="${RMM_TEST_SANITIZER_RUNTIME:-}" "$work_dir/prefix/bin/rmm-run" -- sh -c 'case "$LD_PRELOAD" in *lib*/librmm_shim.so*) echo "installed shim preloaded";; *) echo "no shim: $LD_PRELOAD"; exit 1;; esac' 
# The installed rmm-ctl is beside rmm-run and knows its commands.
"$work_dir/prefix/bin/rmm-ctl" --help | grep -q "PID pause"
# The installed rmm-replay replays a shipped log.
"$work_dir/prefix/bin/rmm-replay" "$(dirname "$0")/../data/traces/cupy_mix.csv.gz" --resource pool
