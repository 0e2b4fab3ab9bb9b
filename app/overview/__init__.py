"""The data set beside the paper: its tables, and the report built from them."""
