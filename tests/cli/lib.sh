# Shared by the command-line tests: a FAIL counter and a runner that checks the exit code.
# Sourced before the test's cd: run writes out and err in whatever directory it is called from.
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
# run CODE "what" ARGS...: exit code CODE within 20 s; stdout in out, stderr in err.
run() {
  local want=$1 what=$2; shift 2
  timeout 20 "$bin" "$@" >out 2>err
  local got=$?
  if [ "$got" -ne "$want" ]; then
    fail "$what: exit $got, want $want: $(head -c 300 err)"
  else
    echo "ok: $what"
  fi
}
