#!/usr/bin/env bash
# provider-docs.sh generates (or, with "validate", checks) the Terraform
# provider's docs in docs/ with tfplugindocs, offline: the provider is built
# and installed through a filesystem mirror, `terraform providers schema -json`
# dumps its schema, and tfplugindocs renders it with examples/ and the
# templates in provider/templates. Both tools come from ~/.cache/stowage/bin.
#
#   hack/provider-docs.sh            regenerate docs/ (index, resources, data-sources)
#   hack/provider-docs.sh validate   fail if docs/ differs from what generate writes, then run tfplugindocs validate
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
# tfplugindocs finds a provider's schema under its short name (or hashicorp/'s).
(cd "$work/cfg" && "$BIN/terraform" providers schema -json) | sed 's#"registry.terraform.io/stowage-dev/stowage"#"stowage"#' > "$work/schema.json"

# tfplugindocs owns docs/index.md, docs/resources and docs/data-sources; it
# would also wipe docs/guides, which holds the project's hand-written guides.
# So it renders into a scratch copy of the tree, and only its own parts are
# copied back (or compared).
managed=(index.md resources data-sources)
tree="$work/tree"
mkdir -p "$tree/provider"
cp -r "$ROOT/examples" "$tree/"
[[ -d "$ROOT/provider/templates" ]] && cp -r "$ROOT/provider/templates" "$tree/provider/"
PATH="$BIN:$PATH" "$BIN/tfplugindocs" generate --provider-dir "$tree" --provider-name stowage \
  --providers-schema "$work/schema.json" --website-source-dir provider/templates --rendered-website-dir docs >/dev/null

if [[ "${1:-}" == validate ]]; then
  stale=0
  for m in "${managed[@]}"; do
    diff -r "$ROOT/docs/$m" "$tree/docs/$m" >&2 || stale=1
  done
  if (( stale )); then
    echo "provider-docs: the provider docs in docs/ are stale: run \`make docs\` and commit" >&2
    exit 1
  fi
  if ! out="$(cd "$ROOT" && PATH="$BIN:$PATH" "$BIN/tfplugindocs" validate --provider-name stowage --providers-schema "$work/schema.json" 2>&1)"; then
    printf '%s\n' "$out" | grep -v '\[DEBUG\]' >&2
    exit 1
  fi
  echo "provider-docs: docs/ is current and tfplugindocs validate passes"
else
  mkdir -p "$ROOT/docs"
  for m in "${managed[@]}"; do
    rm -rf "${ROOT:?}/docs/$m"
    cp -r "$tree/docs/$m" "$ROOT/docs/$m"
  done
fi
