"""What a reader sees: tables, figures and self-contained pages, drawn from the numbers a report holds."""
