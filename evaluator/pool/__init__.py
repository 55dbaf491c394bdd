"""`lab pool`: several datasets' audited campaigns pooled under a suite declared beforehand."""
