"""boo report: HTML and PNG reports of boo-driver CSVs (tools/report/README.md)."""
