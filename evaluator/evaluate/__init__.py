"""`lab evaluate`: a frozen protocol run against a prepared lab, every page checked, into a private report."""
