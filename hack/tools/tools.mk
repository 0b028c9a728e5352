# Make fragment: the real components Stowage's tests run against (see README.md
# beside this file). Include it from the GNUmakefile; `make tools` builds what is
# missing into $STOWAGE_CACHE (default ~/.cache/stowage) and is quick when cached.
# `make tools TOOLS="etcd kube-apiserver"` builds only those.

STOWAGE_TOOLS_DIR := $(patsubst %/,%,$(dir $(lastword $(MAKEFILE_LIST))))
TOOLS ?=

.PHONY: tools
tools: ## build the real test components into ~/.cache/stowage (once)
	@bash $(STOWAGE_TOOLS_DIR)/build-components.sh $(TOOLS)
