terraform {
  required_version = ">= 1.5.0"
  required_providers {
    stowage = {
      source = "stowage-dev/stowage"
    }
  }
}
