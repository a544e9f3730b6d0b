"""The lab: run the chapters side by side (`python -m lab compare`) and measure them
(`python -m lab bench`); docs/en/lab.md explains both, and lab/README.md maps the lab's
parts, one package each."""
