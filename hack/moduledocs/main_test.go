package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEveryModuleREADMEIsCurrent fails when a module's inputs or outputs
// changed without its README: `make docs` rewrites them.
func TestEveryModuleREADMEIsCurrent(t *testing.T) {
	dirs, err := filepath.Glob("../../modules/*/variables.tf")
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no modules found: %v", err)
	}
	for _, f := range dirs {
		dir := filepath.Dir(f)
		ok, err := update(dir, true)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			t.Errorf("%s/README.md is stale: run make docs and commit", dir)
		}
	}
}

// TestRenderDocumentsEveryInputAndOutput renders a module and finds every
// variable and output, with its type and default, and refuses one without a
// description.
func TestRenderDocumentsEveryInputAndOutput(t *testing.T) {
	dir := t.TempDir()
	write := func(text string) {
		if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(`
terraform {
  required_version = ">= 1.5.0"
}
variable "name" {
  description = "The name."
  type        = string
}
variable "sizes" {
  description = "The sizes."
  type        = object({ min = optional(number, 1) })
  default     = { min = 2 }
}
output "id" {
  description = "The id."
  value       = var.name
}
`)
	md, err := Render(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| terraform | `>= 1.5.0` |", "### `name` (required)", "Type: `string`", "### `sizes` (optional)",
		"Type: `object({ min = optional(number, 1) })`", "Default: `{\"min\":2}`", "| `id` | The id. |"} {
		if !strings.Contains(md, want) {
			t.Errorf("the rendering has no %q:\n%s", want, md)
		}
	}
	if strings.Index(md, "`name`") > strings.Index(md, "`sizes`") {
		t.Errorf("required inputs come first:\n%s", md)
	}
	write("variable \"x\" {\n  type = string\n}\n")
	if _, err := Render(dir); err == nil || !strings.Contains(err.Error(), "variable x has no description") {
		t.Errorf("a variable without a description: err %v", err)
	}
	if _, err := Splice("# intro\n", "x"); err == nil {
		t.Error("a README without markers was accepted")
	}
}
