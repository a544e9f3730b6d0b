"""The lab: run the chapters side by side and measure them (`python -m lab.bench`)."""
