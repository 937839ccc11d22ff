#!/usr/bin/env bash
# Installs the real VS Code the end-to-end test drives, code-server 4.100.3
# (VS Code 1.100.3, the last release for Node 20), into DEST (default
# target/code-server), from the npm registry alone:
# - its postinstall builds native addons: node-gyp must not download Node's
#   headers (npm_config_nodedir=/usr: Debian's /usr/include/node), and its
#   `npx node-gyp` must not stop to ask (npm_config_yes);
# - as root, npm must let the postinstall run (npm_config_unsafe_perm);
# - @vscode/ripgrep downloads rg from GitHub unless its cache holds the
#   tarball: we put Debian's rg (package ripgrep) there under that name;
# - kerberos needs gssapi headers (libkrb5-dev).
# Skips the install when DEST already holds this exact lock file's install.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
dest="${1:-$here/../../target/code-server}"
mkdir -p "$dest"
dest="$(cd "$dest" && pwd)"
stamp="$dest/.installed-lock"
if [ -x "$dest/node_modules/.bin/code-server" ] && cmp -s "$stamp" "$here/host/package-lock.json"; then
  exit 0
fi
for tool in rg make g++ python3; do
  command -v "$tool" >/dev/null || { echo "install-host: $tool is missing (scripts/dev test installs it)" >&2; exit 2; }
done
[ -f /usr/include/node/node.h ] || { echo "install-host: Node's headers are missing at /usr/include/node (Debian: nodejs or libnode-dev)" >&2; exit 2; }
[ -f /usr/include/gssapi/gssapi.h ] || { echo "install-host: gssapi headers are missing (apt-get install libkrb5-dev)" >&2; exit 2; }
echo "install-host: installing code-server 4.100.3 into $dest (about a minute)"
tmp="$dest/.tmp"
rm -rf "$tmp" && mkdir -p "$tmp/vscode-ripgrep-cache-1.15.11"
# The asset name @vscode/ripgrep 1.15.11 looks for on linux-x64; it untars `rg` at the top.
(cd "$(dirname "$(command -v rg)")" && tar czf "$tmp/vscode-ripgrep-cache-1.15.11/ripgrep-v13.0.0-10-x86_64-unknown-linux-musl.tar.gz" rg)
cp "$here/host/package.json" "$here/host/package-lock.json" "$dest/"
rm -f "$stamp"
(cd "$dest" && TMPDIR="$tmp" npm_config_unsafe_perm=true npm_config_yes=true npm_config_nodedir=/usr \
  npm ci --no-audit --no-fund --loglevel=error >"$dest/install.log" 2>&1) || {
  echo "install-host: npm ci failed; the last lines of $dest/install.log:" >&2
  tail -20 "$dest/install.log" >&2
  exit 2
}
[ -x "$dest/node_modules/code-server/lib/vscode/node_modules/@vscode/ripgrep/bin/rg" ] || { echo "install-host: code-server's postinstall did not run (no ripgrep in lib/vscode)" >&2; exit 2; }
cp "$here/host/package-lock.json" "$stamp"
rm -rf "$tmp"
echo "install-host: code-server installed"
