#!/bin/sh
# Runs golden CLI transcripts. A case directory holds:
#   cmd        the arguments after `zerosim`, one shell line ($ZEROSIM_DATA_DIR is the source
#              tree; paths are relative to it)
#   stdout     expected standard output
#   stderr     expected standard error (optional: checked only when present)
#   exit_code  expected exit status
#   filter     sed -E script applied to stdout before comparing (optional: masks what varies
#              from run to run, such as host wall-clock times)
# Directories without a cmd file (golden/inputs/: the bad files the cases read) are not cases.
# usage: run_golden.sh ZEROSIM CASE_DIR SOURCE_DIR        check one case
#        run_golden.sh --update ZEROSIM GOLDEN_DIR SOURCE_DIR   rewrite every case
set -u
update=0
if [ "$1" = "--update" ]; then update=1; shift; fi
zerosim=$1; target=$2; src=$3
export ZEROSIM_DATA_DIR=.

run_case() {
    dir=$1
    out=$(mktemp); err=$(mktemp)
    (cd "$src" && eval "\"$zerosim\" $(cat "$dir/cmd")") >"$out" 2>"$err"
    code=$?
    # SimGrid switches stacks without AddressSanitizer annotations; under ASan that prints a
    # three-line warning that is not the program's output.
    sed -i '/ASan is ignoring requested __asan_handle_no_return/,+2d' "$err"
    [ -f "$dir/filter" ] && sed -E -i -f "$dir/filter" "$out"
    if [ $update -eq 1 ]; then
        cp "$out" "$dir/stdout"
        echo "$code" >"$dir/exit_code"
        [ -f "$dir/stderr" ] && cp "$err" "$dir/stderr"
        rm -f "$out" "$err"
        return 0
    fi
    status=0
    if [ "$code" != "$(cat "$dir/exit_code")" ]; then
        echo "$dir: exit code $code, expected $(cat "$dir/exit_code")"; status=1
    fi
    if ! diff -u "$dir/stdout" "$out"; then echo "$dir: stdout differs"; status=1; fi
    if [ -f "$dir/stderr" ] && ! diff -u "$dir/stderr" "$err"; then
        echo "$dir: stderr differs"; status=1
    fi
    rm -f "$out" "$err"
    return $status
}

if [ $update -eq 1 ]; then
    # Only directories with a cmd file are cases (golden/inputs/ holds their input files).
    for d in "$target"/*/; do if [ -f "$d/cmd" ]; then run_case "${d%/}"; fi; done
else
    run_case "$target"
fi
