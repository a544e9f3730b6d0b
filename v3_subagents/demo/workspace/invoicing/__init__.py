"""A small invoicing package; amounts are integers in cents everywhere."""
