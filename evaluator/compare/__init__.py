"""`lab compare`: two audited campaigns side by side, paired where they share their cohort."""
