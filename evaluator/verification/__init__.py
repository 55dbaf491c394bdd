"""Independent verification: page recomputation, rescue checks, the audit."""
