"""Reports: JSON, terminal tables, the Excel workbook and PNG plots, all written atomically."""
