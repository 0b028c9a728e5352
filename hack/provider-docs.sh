#!/usr/bin/env bash
# provider-docs.sh generates (or, with "validate", checks) the Terraform
# provider's docs in docs/ with tfplugindocs, offline: the provider is built
# and installed through a filesystem mirror, `terraform providers schema -json`
# dumps its schema, and tfplugindocs renders it with examples/ and the
# templates in provider/templates. Both tools come from ~/.cache/stowage/bin.
#
#   hack/provider-docs.sh            regenerate docs/ (index, resources, data-sources)
#   hack/provider-docs.sh validate   regenerate into a scratch copy, fail if docs/ differs, and run tfplugindocs validate
set -euo pipefail

BIN="${STOWAGE_CACHE:-$HOME/.cache/stowage}/bin"
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
VERSION=0.0.1
for tool in terraform tfplugindocs; do
  [[ -x "$BIN/$tool" ]] || { echo "provider-docs: $BIN/$tool is missing: run \`make tools\` (terraform) or \`make docs\` (tfplugindocs)" >&2; exit 1; }
done

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mirror="$work/mirror/registry.terraform.io/stowage-dev/stowage/$VERSION/$(go env GOOS)_$(go env GOARCH)"
mkdir -p "$mirror" "$work/cfg"
(cd "$ROOT" && go build -o "$mirror/terraform-provider-stowage_v$VERSION" ./provider)
cat > "$work/cfg/main.tf" <<TF
terraform {
  required_providers {
    stowage = { source = "stowage-dev/stowage", version = "$VERSION" }
  }
}
TF
export CHECKPOINT_DISABLE=1 TF_IN_AUTOMATION=1
unset TF_CLI_CONFIG_FILE
(cd "$work/cfg" && "$BIN/terraform" init -input=false -no-color -plugin-dir="$work/mirror" >/dev/null)
(cd "$work/cfg" && "$BIN/terraform" providers schema -json) > "$work/schema.json"

generate() { # generate DIR: render the docs of the provider tree at DIR
  PATH="$BIN:$PATH" "$BIN/tfplugindocs" generate --provider-dir "$1" --provider-name stowage \
    --providers-schema "$work/schema.json" --website-source-dir provider/templates --rendered-website-dir docs >/dev/null
}

if [[ "${1:-}" == validate ]]; then
  copy="$work/tree"
  mkdir -p "$copy"
  cp -r "$ROOT/docs" "$ROOT/examples" "$copy/"
  mkdir -p "$copy/provider" && cp -r "$ROOT/provider/templates" "$copy/provider/"
  generate "$copy"
  if ! diff -r "$ROOT/docs" "$copy/docs" >"$work/diff"; then
    cat "$work/diff" >&2
    echo "provider-docs: docs/ is stale: run \`make docs\` and commit" >&2
    exit 1
  fi
  (cd "$ROOT" && PATH="$BIN:$PATH" "$BIN/tfplugindocs" validate --provider-name stowage --providers-schema "$work/schema.json")
else
  generate "$ROOT"
fi
