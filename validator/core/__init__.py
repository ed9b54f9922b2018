"""What every stage shares: diagnostics, confined reading of files, strict JSON and YAML, caches."""
