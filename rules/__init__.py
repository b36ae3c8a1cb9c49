"""Rule modules, one per rule; the registry in precision_lint.registry finds them."""
